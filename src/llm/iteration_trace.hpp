#pragma once
// The iteration `topsim train` simulated, as a per-rank trace (model/workload_spec.hpp) that
// src/interop/chakra writes as Chakra ET (`train ... --emit-chakra PREFIX`, docs/chakra.md).
#include "llm/iteration.hpp"

namespace topsim {

/// Per rank, in Megatron's order: each micro-batch's forward and backward pass as one measured
/// compute op (its kernels plus the tensor-, context- and expert-parallel communication train
/// exposed in it), the data-parallel gradient collectives of `gradient` (the gradient window's
/// ops) after the last backward, or from the start of the last micro-batch's backward under
/// --overlap-grad-reduce, then the optimizer step, then ZeRO-1's parameter all-gather.
/// Replayed, it takes train's iteration time when tensor parallelism is 1 and neither overlap
/// is on (train charges an overlapped collective's SM share, which a graph cannot say).
/// UsageError for layouts it cannot write yet: pipeline parallelism, ZeRO-2/3, FSDP.
TraceSpec iteration_trace(const LlmLayout& layout, const LlmResult& result, const TraceSpec& gradient);

}  // namespace topsim
