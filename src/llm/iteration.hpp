#pragma once
// One training iteration of a transformer under a layout, on a topology: kernels timed by the
// compute model; every distinct communication simulated on the fabric with NCCL's model, all
// its concurrent instances at once (two windows, see docs/llm.md); the pipeline schedule as a
// timeline over those times; overlap as Megatron-Core runs it.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "llm/bounds.hpp"
#include "llm/data_parallel.hpp"
#include "llm/layout.hpp"
#include "llm/transformer_math.hpp"
#include "model/catalog.hpp"
#include "topology/topology.hpp"
#include "workload/replay.hpp"

namespace topsim {

struct LlmOptions {
  DimOrder order{Dim::tp, Dim::cp, Dim::dp, Dim::pp};
  RouteOptions routes;
  std::string nccl;            ///< NCCL release whose tuner chooses ("" for the default line)
  std::string optimizer = "adam";  ///< an optimizer of models/frameworks.json
};

struct LlmResult {
  int gpus = 0;
  int nodes = 0;
  double iteration_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;   ///< model FLOPs (iteration_flops().model) per GPU per second / 1e12
  double mfu = 0;              ///< model FLOPs over the dense 16-bit peak of every GPU
  double hfu = 0;              ///< hardware FLOPs (recomputation counted) over the same peak
  // Where the iteration goes, on the pipeline rank that finishes last; they sum to iteration_s.
  double compute_s = 0;        ///< kernels (recomputation included)
  double bubble_s = 0;         ///< pipeline fill and drain with free point-to-point transfers
  double tp_s = 0;             ///< exposed tensor-parallel collectives
  double pp_s = 0;             ///< what point-to-point transfers add to the pipeline
  double dp_s = 0;             ///< exposed data-parallel gradient reduction and parameter gathering
  double cp_s = 0;             ///< exposed context-parallel K/V exchange
  double ep_s = 0;             ///< expert-parallel all-to-alls
  double optimizer_s = 0;      ///< optimizer step
  /// Per virtual stage (v = chunk x pp + rank): one micro-batch's forward and backward pass on
  /// one rank, compute and the communication that blocks it (what the pipeline timeline runs).
  std::vector<double> stage_forward_s, stage_backward_s;
  LlmMemory memory;            ///< the GPU that holds most
  double memory_capacity_B = 0;
  bool fits = false;
  /// Each simulated communication: name -> seconds (one instance, under its window's traffic).
  std::map<std::string, double> comm_s;
  std::string algorithms;      ///< NCCL's choices in the windows
  /// Megatron-Core's data parallelism (zero 0 and 1; docs/llm.md): its bucket in parameters,
  /// the buckets of stage 0's first chunk, the gradients' NCCL type, and what the reductions
  /// add after the critical rank's last backward and the all-gathers before the first forward.
  double dp_bucket_params = 0;
  int dp_first_chunk_buckets = 0;
  std::string dp_gradient_type;
  double dp_reduce_exposed_s = 0, dp_gather_exposed_s = 0;
  LlmBounds floors;            ///< what the layout cannot beat (src/llm/bounds.hpp); iteration_s >= floors.iteration_s()
};

class LlmIteration {
 public:
  /// `layout` must come from resolve_layout(); the topology needs layout.gpus() GPUs (UsageError).
  /// Keeps references to everything passed, which must outlive it.
  LlmIteration(const Topology& topology, const Catalog& catalog, const TransformerSpec& model, const LlmLayout& layout,
               LlmOptions options = {});
  ~LlmIteration();
  LlmIteration(const LlmIteration&) = delete;
  LlmIteration& operator=(const LlmIteration&) = delete;

  /// The simulations to declare, one platform each, before any run: the steady-state window
  /// (tensor, pipeline, context and expert traffic at once) and the gradient window (data
  /// parallelism with tensor traffic beside it).
  std::vector<Replay*> windows();
  /// Runs each window on its runner (in windows() order) and assembles the iteration.
  LlmResult run(const std::vector<Runner*>& runners);
  /// The windows' traces: the steady state (tensor, pipeline, context, expert traffic of the
  /// first two stages) and the gradient window (stage 0's data-parallel collectives).
  const TraceSpec& steady_window() const;
  const TraceSpec& gradient_window() const;
  /// Megatron-Core's gradient buffers and buckets (empty under ZeRO-2/3 and FSDP).
  const DpLayout& data_parallel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The traces of an iteration's two simulated windows (what `train --emit-chakra` writes from).
struct IterationWindows {
  TraceSpec steady, gradient;
  DpLayout data_parallel;  ///< Megatron-Core's buffers and buckets (zero 0 and 1)
};

/// One iteration of `model` under `layout` (resolved) on `topology`, in a Simulator of its own
/// (so that a layout search or a validation runs any number of them one after another).
/// `windows`, when given, receives the iteration's window traces.
LlmResult simulate_iteration(const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                             const LlmLayout& layout, const LlmOptions& options, IterationWindows* windows = nullptr);

}  // namespace topsim
