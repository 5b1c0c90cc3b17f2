#pragma once
// One data-parallel training iteration laid out as a trace, the way PyTorch DDP or Horovod runs
// it: forward layer by layer; backward in reverse, each layer's input and weight gradients;
// gradients all-reduced in buckets on a separate stream as soon as a bucket's last gradient is
// ready (overlapping the rest of backward); the optimizer step once every bucket is reduced.
#include "model/catalog.hpp"
#include "model/workload_spec.hpp"

namespace topsim {

struct TrainingSetup {
  const Network* network = nullptr;
  const FrameworkModel* framework = nullptr;
  const OptimizerModel* optimizer = nullptr;
};

/// What a training configuration means in bytes and types.
struct TrainingTypes {
  std::string math_dtype;       ///< compute's math type: fp16, bf16, tf32, fp32
  double activation_B = 0;      ///< bytes of one activation element
  std::string gradient_dtype;   ///< NCCL type of the gradient allreduce
  double gradient_B = 0;        ///< bytes of one gradient element as all-reduced
};
TrainingTypes training_types(const TrainingSpec& spec, const FrameworkModel& framework);

/// The trace of one iteration on `ranks` GPUs (one rank: no gradient allreduce, as DDP with a
/// world of one). Compute ops carry kernel shapes (GEMMs, memory traffic); their times come
/// from the compute model of whatever GPU replays them.
///   forward:   fwd.<layer>                     (compute stream, in layer order)
///   backward:  bwd.<layer>.dgrad, .wgrad       (compute stream, in reverse; the first layer has no dgrad)
///   gradients: allreduce.<k>                   (comm stream, after the op that readies its last gradient)
///   optimizer: optimizer                       (after backward and every allreduce)
///   overhead:  step.overhead                   (host stream, the framework's per-iteration cost, ranks > 1)
TraceSpec training_trace(const TrainingSpec& spec, const TrainingSetup& setup, int ranks);

/// What one GPU holds during an iteration of data-parallel training, in bytes.
struct TrainingMemory {
  double weights_B = 0;      ///< FP32 master weights, plus the 16-bit copy under amp/bf16 (compressed when pruned)
  double gradients_B = 0;    ///< FP32 gradients
  double optimizer_B = 0;    ///< optimizer states
  double activations_B = 0;  ///< every layer's output kept for backward (at batch_per_gpu)
  double total_B() const { return weights_B + gradients_B + optimizer_B + activations_B; }
};
/// An estimate: no allocator fragmentation, workspaces, communication buffers or recomputation.
TrainingMemory training_memory(const TrainingSpec& spec, const TrainingSetup& setup);

/// Bytes of gradients one iteration all-reduces (after the sparsity switches).
double gradient_bytes(const TrainingSpec& spec, const TrainingSetup& setup);

}  // namespace topsim
