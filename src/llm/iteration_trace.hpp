#pragma once
// The iteration `topsim train` simulated, as a per-rank trace (model/workload_spec.hpp) that
// src/interop/chakra writes as Chakra ET (`train ... --emit-chakra PREFIX`, docs/chakra.md).
#include "llm/iteration.hpp"
#include "llm/layout.hpp"

namespace topsim {

/// Every rank's passes in its pipeline schedule's order (llm/pipeline.hpp: 1F1B, interleaved
/// with virtual stages): each micro-batch's forward and backward pass of each virtual stage as
/// one measured compute op (its kernels plus the tensor-, context- and expert-parallel
/// communication train exposed in it); between neighbouring virtual stages, a send of the
/// activation (forward) or its gradient (backward) from each rank to its peer, which the next
/// pass waits for; each stage's data-parallel gradient collectives (stage 0's of `windows`,
/// copied onto every stage's groups) after its last pass, or after its last forward under
/// --overlap-grad-reduce; then its optimizer step; then ZeRO-1's parameter all-gather.
/// Replayed without pipeline parallelism, tensor parallelism 1 and neither overlap, it takes
/// train's iteration time (train charges an overlapped collective's SM share, which a graph
/// cannot say, and times sends and collectives in its windows, not in the whole iteration).
/// UsageError for ZeRO-2/3 and FSDP (collectives per layer, not written yet).
TraceSpec iteration_trace(const LlmLayout& layout, const DimOrder& order, const LlmResult& result,
                          const IterationWindows& windows);

}  // namespace topsim
