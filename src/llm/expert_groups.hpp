#pragma once
// Where the experts of an MoE layer live: Megatron-Core's expert-side process groups. The expert
// side re-splits each pipeline stage's tp x cp x dp ranks as etp x ep x edp (expert tensor,
// expert and expert data parallelism; parallel_state.py:870-895@Megatron-LM@d98e8a64ddf3, the
// expert RankGenerator of order tp-ep-dp-pp, context parallelism folded in), so EP is carved out
// of TP x CP x DP together, not of DP alone, and etp may be smaller than tp (MoE parallel folding).
#include <vector>

#include "llm/layout.hpp"
#include "model/llm_spec.hpp"

namespace topsim {

/// Expert tensor parallel size: layout.etp, or tp when 0 (Megatron's default, parallel_state.py:871-872).
int expert_tp(const LlmLayout& layout);
/// Expert data-parallel size: the stage's tp x cp x dp ranks over etp x ep.
int expert_dp(const LlmLayout& layout);

/// UsageError unless the expert side tiles the stage: etp x ep must divide tp x cp x dp (Megatron
/// raises "world_size is not divisible by expert_tensor_model_pipeline_parallel size",
/// parallel_state.py:881-884), the experts divide over ep and each expert's FFN over etp.
void check_expert_layout(const TransformerSpec& model, const LlmLayout& layout);

/// The expert-side groups of pipeline stage `stage`, as global ranks of `placement`.
struct ExpertGroups {
  std::vector<std::vector<int>> ep;   ///< all-to-all groups: ep ranks each, one per (etp rank, edp rank)
  std::vector<std::vector<int>> edp;  ///< expert gradient reduction: edp ranks each, one per (etp rank, ep rank)
  std::vector<std::vector<int>> etp;  ///< expert tensor parallel: etp ranks each, one per (ep rank, edp rank)
};
/// The stage's ranks in rank order (Megatron's pipeline dimension is outermost for the expert
/// grid) take local index a = etp_i + etp x (ep_j + ep x edp_k).
ExpertGroups expert_groups(const LlmLayout& layout, const Placement& placement, int stage);

}  // namespace topsim
