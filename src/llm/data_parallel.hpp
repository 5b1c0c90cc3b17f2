#pragma once
// Megatron-Core's data parallelism as a timeline (docs/llm.md, "Data parallelism"): gradient
// buckets reduced (reduce-scattered under the distributed optimizer, else all-reduced) as the
// last micro-batch's backward completes them, one collective at a time on the group's NCCL
// stream; parameter all-gathers of the distributed optimizer ahead of the next forward. Pure
// arithmetic on times the caller simulated: every function here is derivable by hand.
#include <vector>

#include "llm/pipeline.hpp"
#include "llm/transformer_math.hpp"

namespace topsim {

/// Megatron-Core's bucket size in parameters: `bucket_params` when given (> 0), else
/// max(min_params, params_per_rank x dp_cp) (megatron/training/training.py:2179-2194).
double ddp_bucket_params(double bucket_params, double min_params, double params_per_rank, int dp_cp);

/// A chunk's gradient buffer split into buckets in backward order (parameters walked in
/// reverse, a bucket closing once it holds at least `bucket_params`): floor(params / bucket)
/// buckets of equal size, at least one; `bucket_params` <= 0 means one bucket (bucketing off).
/// Equal sizes stand in for Megatron's tensor-by-tensor boundaries (each bucket >= the size).
std::vector<double> split_buckets(double params, double bucket_params);

/// Where a chunk's parameters sit in its passes, in the order backward produces their gradients:
/// the LM head's (on the last virtual stage), the transformer layers', the embedding's (on the
/// first). Backward spends head_s on the head, the rest of its time on the layers, none on the
/// embedding (its gradient is a scatter-add finished with the pass); forward runs them in
/// reverse order, spending its layer time on the layers.
struct ChunkParams {
  double head = 0, layers = 0, embedding = 0;  ///< parameters on this rank
  double total() const { return head + layers + embedding; }
};

/// Seconds into the chunk's backward pass (of `backward_s`, `head_s` of it on the head) at which
/// the first `walked` parameters in backward order have their gradients.
double backward_ready_s(const ChunkParams& chunk, double walked, double backward_s, double head_s);
/// Seconds into the chunk's forward pass (layer time `layers_s`, after the embedding) at which
/// the first `walked` parameters in forward order are first used.
double forward_need_s(const ChunkParams& chunk, double walked, double layers_s);

/// One collective on a communicator's stream: launched at ready_s, taking duration_s alone.
struct StreamOp {
  double ready_s = 0;
  double duration_s = 0;
};

/// Ops of one stream run one at a time in launch (vector) order: each starts at
/// max(its ready_s, the previous one's end). The end of the last, 0 when empty.
double stream_end_s(const std::vector<StreamOp>& ops);
/// Of those ops' running time, the seconds before `until_s` (what overlaps the compute that
/// ends then).
double stream_overlap_s(const std::vector<StreamOp>& ops, double until_s);

/// A parameter all-gather ahead of the forward that needs it, on the forward's own timeline
/// (seconds from the first forward's planned start, the optimizer step done): dispatched at
/// `dispatch_s` (at_start: when the iteration's forward begins, before any wait; else on the
/// forward's timeline, so it moves with the forward's waits), needed at `need_s`.
struct GatherOp {
  double dispatch_s = 0;
  double need_s = 0;
  double duration_s = 0;
  bool at_start = false;
};

/// How long the forward waits for its parameters: the ops run one at a time in vector order
/// (one stream); each wait delays every later need and every later forward-timed dispatch.
/// >= 0, and at most the sum of durations when every op is dispatched at its own need.
double gather_wait_s(const std::vector<GatherOp>& ops);

// --- a layout's buffers and their exposure ------------------------------------------------

/// One gradient buffer of one virtual stage (dense, or the routed experts'): its parameters by
/// position and its buckets in backward order, each an index into the distinct sizes.
struct DpBuffer {
  ChunkParams params;
  std::vector<int> buckets;
  /// Per bucket: its parameters over its size's (1 unless the bucket runs as a scaled copy of a
  /// larger simulated size; dp_layout()).
  std::vector<double> scale;
  bool bucketed = false;  ///< several buckets, each launched when the backward completes it
};

/// Megatron-Core's data-parallel buffers of a layout (zero 0 or 1): per virtual stage its dense
/// and expert buffer, and the distinct bucket sizes (parameters) the gradient window simulates.
struct DpLayout {
  std::vector<DpBuffer> dense, experts;  ///< per virtual stage
  std::vector<double> dense_sizes, expert_sizes;
};

/// Buckets as Megatron-Core makes them: `bucket_params` (ddp_bucket_params()) on the first
/// pipeline rank's first model chunk when gradient reduction overlaps; one bucket per buffer
/// otherwise (distributed_data_parallel.py:135-171, training.py:2504-2515).
/// Sizes of at least `scaled_from_params` parameters run as the largest size within a factor of
/// 2 above them, their time scaled by their parameters (bandwidth-bound collectives take time in
/// proportion to their bytes; the latency term they share is microseconds of hundreds of ms),
/// so that a layout's chunks of nearly one size cost one simulated collective, not one each.
DpLayout dp_layout(const TransformerSpec& model, const LlmLayout& layout, double bucket_params,
                   double scaled_from_params = 0);

/// What data parallelism adds on one pipeline rank after its last backward, and what the
/// parameter all-gathers delay the next iteration's first forward.
struct DpExposure {
  std::vector<double> reduce_s;  ///< per rank: from its last backward's end to its last reduction's end
  double gather_s = 0;           ///< rank 0's forward waiting for parameters, SM sharing included
};

/// Seconds of one collective per distinct size (reduce: reduce-scatter or all-reduce; gather:
/// all-gather, empty without the distributed optimizer), dense and expert.
struct DpDurations {
  std::vector<double> dense_reduce_s, dense_gather_s, expert_reduce_s, expert_gather_s;
};

/// The timeline (docs/llm.md, "Data parallelism"). `pipeline` is the iteration's schedule, whose
/// per-virtual-stage forward and backward pass times are `forward_s`, `backward_s`, `head_s` of
/// each backward spent on the LM head. `sm_share`: of the GPU's SMs the NCCL kernels hold while
/// they overlap compute (compute runs at 1 - share beside them).
DpExposure dp_exposure(const LlmLayout& layout, const DpLayout& buffers, const DpDurations& durations,
                       const PipelineResult& pipeline, const std::vector<double>& forward_s,
                       const std::vector<double>& backward_s, const std::vector<double>& head_s, double sm_share);

}  // namespace topsim
