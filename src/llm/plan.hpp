#pragma once
// The layouts `topsim plan` weighs: every combination of tensor, pipeline (and interleaved),
// context, expert and data parallelism, micro-batch and recomputation that Megatron-LM accepts
// for a model on N GPUs, with the memory each needs (no simulation: the schedule's order gives
// the activations in flight), so that only those that fit are simulated.
#include <string>
#include <vector>

#include "llm/layout.hpp"
#include "llm/transformer_math.hpp"

namespace topsim {

struct PlanSpace {
  int gpus = 0;
  int gpus_per_server = 8;   ///< tensor parallelism stays inside a server
  LlmLayout base;            ///< global batch, sequence, precision, overlap switches
  double memory_B = 0;       ///< one GPU's memory
  double optimizer_state_B = 0;  ///< bytes of optimizer state per parameter
};

struct PlanCandidate {
  LlmLayout layout;
  LlmMemory memory;  ///< the stage that holds most
  bool fits = false;
};

/// Every layout resolve_layout() accepts, each with its memory, in a fixed order (tp, pp, vp,
/// cp, ep, micro-batch); for each, the least recomputation that fits (none, selective, full),
/// and ZeRO-1 (the distributed optimizer) unless nothing fits without ZeRO-3.
std::vector<PlanCandidate> plan_candidates(const TransformerSpec& model, const PlanSpace& space);

/// Memory of a resolved layout on its fullest stage.
LlmMemory layout_memory(const TransformerSpec& model, const LlmLayout& layout, double optimizer_state_B);

}  // namespace topsim
