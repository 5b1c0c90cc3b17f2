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
  int gpus_per_domain = 8;   ///< tensor parallelism stays inside an NVLink domain (src/llm/domains.hpp)
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
/// cp, ep, micro-batch), layers that do not divide split by choose_layer_split() unless
/// `space.base` asks for a split (then every layout takes that one, or is left out); for each,
/// the least recomputation that fits (none, selective, full), and ZeRO-1 (the distributed
/// optimizer) unless nothing fits without ZeRO-3.
std::vector<PlanCandidate> plan_candidates(const TransformerSpec& model, const PlanSpace& space);

/// Plan's split of layers that do not divide over pp x vp (docs/llm.md, "Uneven pipelines"):
/// unchanged when they divide; else the embedding and loss accounting when layers + 2 divide;
/// else the middle stages the even share rounded up, the first and last the rest halved (the
/// first the odd one), each at least one layer. False when none works (or pp is 1).
bool choose_layer_split(const TransformerSpec& model, LlmLayout& layout);

/// Memory of a resolved layout on its fullest stage.
LlmMemory layout_memory(const TransformerSpec& model, const LlmLayout& layout, double optimizer_state_B);

}  // namespace topsim
