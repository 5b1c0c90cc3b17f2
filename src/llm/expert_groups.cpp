#include "llm/expert_groups.hpp"

#include <algorithm>
#include <string>

#include "util/error.hpp"

namespace topsim {

int expert_tp(const LlmLayout& L) { return L.etp > 0 ? L.etp : L.tp; }

int expert_dp(const LlmLayout& L) { return L.tp * L.cp * L.dp / (expert_tp(L) * L.ep); }

void check_expert_layout(const TransformerSpec& m, const LlmLayout& L) {
  auto n = [](int v) { return std::to_string(v); };
  const int etp = expert_tp(L), stage_ranks = L.tp * L.cp * L.dp;
  if (L.etp < 0) throw UsageError("etp must be >= 1 (0: equal to tp), got " + n(L.etp));
  if (L.overlap_moe_ep_comm) {  // transformer_config.py:3002-3026@Megatron-LM@d98e8a64ddf3
    if (L.ep == 1)
      throw UsageError("--overlap-moe-expert-parallel-comm needs expert parallelism (--ep > 1), as Megatron-Core requires");
    if (L.pp > 1 && L.vp == 1)
      throw UsageError("--overlap-moe-expert-parallel-comm with pp " + n(L.pp) +
                       " needs the interleaved schedule (--vp > 1), as Megatron-Core requires");
    if (L.recompute == Recompute::full)
      throw UsageError("--overlap-moe-expert-parallel-comm cannot run with full recomputation (Megatron-Core refuses it)");
  }
  if (!m.moe) {  // a dense model has no expert side; Megatron ignores etp then
    if (L.ep > 1) throw UsageError("--ep " + n(L.ep) + ": " + m.name + " has no experts (expert parallelism needs an MoE model)");
    return;
  }
  if (L.tp > 1 && !L.sp)
    throw UsageError(m.name + " with tp " + n(L.tp) + " needs sequence parallelism (--sp): Megatron-Core refuses to train MoE "
                     "layers under tensor parallelism without it (moe_layer.py:636-640@Megatron-LM@d98e8a64ddf3)");
  if (m.moe->experts % L.ep != 0)
    throw UsageError(m.name + " has " + n(m.moe->experts) + " experts, not divisible by ep " + n(L.ep));
  if (stage_ranks % (etp * L.ep) != 0)
    throw UsageError("etp x ep = " + n(etp) + " x " + n(L.ep) + " = " + n(etp * L.ep) +
                     " does not divide a pipeline stage's tp x cp x dp = " + n(L.tp) + " x " + n(L.cp) + " x " + n(L.dp) +
                     " = " + n(stage_ranks) + " ranks (the expert side re-splits them as etp x ep x edp; Megatron-Core refuses "
                     "it, parallel_state.py:881); use an ep dividing " + n(stage_ranks / etp) +
                     (etp > 1 ? ", or a smaller --etp (expert tensor parallelism below tp folds the experts)" : ""));
  if (m.moe->expert_ffn_hidden % etp != 0)
    throw UsageError(m.name + "'s expert_ffn_hidden " + n(m.moe->expert_ffn_hidden) + " is not divisible by etp " + n(etp));
}

ExpertGroups expert_groups(const LlmLayout& L, const Placement& placement, int stage) {
  std::vector<int> ranks;  // the stage's ranks in rank order: local index -> global rank
  for (int c = 0; c < L.cp; ++c)
    for (int d = 0; d < L.dp; ++d)
      for (int i = 0; i < L.tp; ++i) ranks.push_back(placement.rank({i, c, d, stage}));
  std::sort(ranks.begin(), ranks.end());
  const int etp = expert_tp(L), ep = L.ep, edp = expert_dp(L);
  auto at = [&](int i, int j, int k) { return ranks[static_cast<std::size_t>(i + etp * (j + ep * k))]; };
  ExpertGroups g;
  for (int k = 0; k < edp; ++k)
    for (int i = 0; i < etp; ++i) {
      g.ep.emplace_back();
      for (int j = 0; j < ep; ++j) g.ep.back().push_back(at(i, j, k));
    }
  for (int j = 0; j < ep; ++j)
    for (int i = 0; i < etp; ++i) {
      g.edp.emplace_back();
      for (int k = 0; k < edp; ++k) g.edp.back().push_back(at(i, j, k));
    }
  for (int k = 0; k < edp; ++k)
    for (int j = 0; j < ep; ++j) {
      g.etp.emplace_back();
      for (int i = 0; i < etp; ++i) g.etp.back().push_back(at(i, j, k));
    }
  return g;
}

}  // namespace topsim
