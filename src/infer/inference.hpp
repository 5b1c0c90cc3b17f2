#pragma once
// Serving a model on one GPU, one MIG instance or a tensor-parallel group: latency of a batch,
// throughput, memory and what bounds them. Kernels are timed by the compute model of the GPU
// (or MIG instance) one after another on one stream, never faster than the framework issues
// them; tensor-parallel all-reduces are simulated on the topology's fabric.
#include <functional>
#include <string>
#include <vector>

#include "compute/mig.hpp"
#include "infer/inference_kernels.hpp"
#include "model/catalog.hpp"

namespace topsim {

class Topology;

/// MLPerf Inference's scenarios: Offline (throughput at the batch), Server (throughput within a
/// latency bound) and SingleStream (latency of one sample).
enum class ServingScenario { offline, server, single_stream };
ServingScenario parse_serving_scenario(const std::string& name);  ///< std::invalid_argument listing the valid ones
std::string to_string(ServingScenario scenario);

struct InferenceRequest {
  std::string model;               ///< a network (models/networks.json) or transformer (models/transformers.json)
  std::string framework = "tensorrt";
  InferenceShape shape;            ///< batch 0 with offline or server: infer picks the batch
  int output_tokens = 0;           ///< decoder: tokens generated per sequence (0: 128)
  ServingScenario scenario = ServingScenario::offline;
  double latency_bound_s = 0;      ///< server: the bound on a query's latency (0: the model's MLPerf bound)
  MigRequest mig;                  ///< profile "" = the whole GPU
  int gpus = 1;                    ///< data-parallel copies, each on its own GPU (tp x gpus GPUs in all)
  /// false: fp32 math stays on the fp32 units whatever the framework's TF32 defaults (--no-tf32)
  bool allow_tf32 = true;
};

/// Time of a pass split by what bounds each kernel, seconds.
struct PassTime {
  double math_s = 0, memory_s = 0, launch_s = 0, comm_s = 0;
  int kernels = 0;
  double flops = 0;
  /// The kernels at their datasheet floor (KernelCost::floor_s): what no serving of this pass
  /// beats, since the kernels run one after another on one stream. total_s() >= floor_s.
  double floor_s = 0;
  double total_s() const { return math_s + memory_s + launch_s + comm_s; }
};

struct InferenceResult {
  std::string gpu;            ///< the GPU model, "/profile" for a MIG instance
  double batch = 0;           ///< the batch served (chosen when the request left it 0)
  int seq = 0;                ///< tokens per sequence served (transformers; 0 for layer-list networks)
  double throughput = 0;      ///< samples/s (tokens/s for a decoder) over every copy and instance
  std::string unit;           ///< "samples/s" or "tokens/s"
  double latency_s = 0;       ///< one batch: its forward, or prefill plus every decode step
  double prefill_s = 0;       ///< decoder: the prompt's forward
  double decode_step_s = 0;   ///< decoder: one step at the average context
  PassTime parts;             ///< of latency_s
  double memory_B = 0;        ///< on one GPU (instance): weights, activations, KV cache
  double weights_B = 0;
  double kv_cache_B = 0;
  bool fits = true;           ///< memory_B within the GPU's (instance's) memory
  double latency_bound_s = 0; ///< server: the bound a query's latency had to meet (0: none)
  bool within_bound = true;   ///< server: twice the batch's latency meets the bound
  std::string bound;          ///< the largest part: math, memory, launch or communication
};

/// What an all-reduce of `size_B` bytes over the first `tp` GPUs takes on the fabric, seconds.
using AllReduceTime = std::function<double(double size_B)>;

/// Serves `request` on `gpu` (the topology's GPU model, or a what-if). `allreduce` times the
/// tensor-parallel all-reduces (needed only when shape.tp > 1). std::invalid_argument for
/// requests that cannot run (unknown model or precision, no sparse math, MIG with tp > 1).
InferenceResult serve(const Catalog& catalog, const GpuModel& gpu, const InferenceRequest& request,
                      const AllReduceTime& allreduce);

/// Times `pass` on `gpu`: each kernel at max(its cost, the framework's dispatch), all-reduces by
/// `allreduce`.
PassTime time_pass(const GpuModel& gpu, const ComputeModel& compute, const InferenceFrameworkModel& framework,
                   const InferencePass& pass, const AllReduceTime& allreduce);

}  // namespace topsim
