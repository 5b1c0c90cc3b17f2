#pragma once
// Megatron-LM's pipeline schedules as a timeline: 1F1B (PipeDream-Flush) and, with virtual
// stages, the interleaved 1F1B of Narayanan et al. 2021. Each pipeline rank runs its forward and
// backward passes in the schedule's order; a pass waits for the same micro-batch's pass on the
// neighbouring virtual stage plus one point-to-point transfer. Exact for the given pass times.
#include <vector>

namespace topsim {

struct PipelineInput {
  int pp = 1;            ///< pipeline ranks
  int vp = 1;            ///< virtual stages (model chunks) per rank
  int micro_batches = 1; ///< per iteration (per data-parallel replica)
  /// Per virtual stage v = chunk x pp + rank (pp x vp of them): one micro-batch's forward and
  /// backward time, communication that blocks the pass included.
  std::vector<double> forward_s;
  std::vector<double> backward_s;
  double p2p_s = 0;      ///< activation (or its gradient) between neighbouring virtual stages
};

struct PipelineResult {
  double makespan_s = 0;             ///< first forward start to last backward end
  std::vector<double> busy_s;        ///< per rank: sum of its passes
  std::vector<double> end_s;         ///< per rank: when its last backward ends
  std::vector<int> peak_in_flight;   ///< per rank: most chunk-forwards whose backward has not run
  /// Per rank: its backward passes of the last micro-batch it runs, summed (the window in which
  /// overlapped gradient reduction hides).
  std::vector<double> last_backward_s;
  /// Per virtual stage: start and end of its last micro-batch's backward pass (when its
  /// gradients are complete; Megatron-Core's DDP reduces them from then on).
  std::vector<double> last_backward_start_s, last_backward_end_s;
  /// Per virtual stage: when its first micro-batch's forward starts (its parameters are needed).
  std::vector<double> first_forward_start_s;
  /// Per rank: the end of each of its backward passes, in schedule order, and per virtual stage
  /// the position of its last micro-batch's backward among them (Megatron's align_grad_reduce
  /// launches a chunk's reduction `rank` backward passes after that one).
  std::vector<std::vector<double>> backward_end_s;
  std::vector<int> last_backward_index;
};

/// The passes of one rank in schedule order: (forward?, virtual stage, micro-batch).
struct Pass {
  bool forward = true;
  int stage = 0;  ///< virtual stage
  int micro_batch = 0;
};
std::vector<Pass> schedule_order(int rank, int pp, int vp, int micro_batches);

/// Most chunk-forwards of `rank` whose backward has not run, from the order alone.
int peak_in_flight(int rank, int pp, int vp, int micro_batches);
/// Most layer-forwards of `rank` whose backward has not run: each chunk-forward of virtual stage
/// v counts its `layers[v]` layers (pp x vp of them), so uneven chunks weigh as they hold; with
/// equal chunks of c layers, peak_in_flight() x c.
int peak_layers_in_flight(int rank, int pp, int vp, int micro_batches, const std::vector<int>& layers);

/// std::invalid_argument when sizes disagree (times per virtual stage, interleaving needing
/// micro-batches divisible by pp).
PipelineResult run_pipeline(const PipelineInput& input);

}  // namespace topsim
