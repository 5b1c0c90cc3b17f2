#include "llm/plan.hpp"

#include <algorithm>

#include "llm/pipeline.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {
std::vector<int> divisors(int n, int at_most) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, at_most); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}
}  // namespace

bool choose_layer_split(const TransformerSpec& model, LlmLayout& L) {
  const int stages = L.pp * L.vp;
  if (model.layers % stages == 0) return true;
  if (L.pp == 1) return false;
  if ((model.layers + 2) % stages == 0) {  // the embedding and the loss each take a layer's slot
    L.account_for_embedding = L.account_for_loss = true;
    return true;
  }
  // The middle stages get the even share rounded up; the first and last the rest, halved (the
  // first the odd layer: the loss outweighs the embedding), each between 1 and the middle's.
  const int per = (model.layers + stages - 1) / stages;
  const int rest = model.layers - per * (stages - 2);
  if (rest < 2) return false;
  L.first_stage_layers = (rest + 1) / 2;
  L.last_stage_layers = rest / 2;
  return true;
}

LlmMemory layout_memory(const TransformerSpec& model, const LlmLayout& L, double optimizer_state_B) {
  LlmMemory worst;
  // Layers per virtual stage: a rank's peak counts the layers of the chunks it holds in flight.
  const std::vector<int> layers = virtual_stage_layer_counts(model, L);
  for (int r = 0; r < L.pp; ++r) {
    double in_flight = double(peak_layers_in_flight(r, L.pp, L.vp, L.micro_batches(), layers));
    LlmMemory m = stage_memory(model, L, r, in_flight, optimizer_state_B);
    if (m.total_B() > worst.total_B()) worst = m;
  }
  return worst;
}

std::vector<PlanCandidate> plan_candidates(const TransformerSpec& model, const PlanSpace& space) {
  std::vector<PlanCandidate> out;
  const int gpus = space.gpus;
  // Sizes Megatron runs in practice: tp within a server, cp and vp small, micro-batches 1-4.
  const std::vector<int> cps = model.seq_len >= 8192 || space.base.seq_len >= 8192 ? std::vector<int>{1, 2, 4} : std::vector<int>{1};
  std::vector<int> eps = {1};
  if (model.moe)
    for (int e : divisors(model.moe->experts, 64))
      if (e > 1) eps.push_back(e);
  for (int tp : divisors(space.gpus_per_domain, space.gpus_per_domain))
    for (int pp = 1; pp <= std::min(model.layers, 64); ++pp)
      for (int vp : {1, 2, 4})
        for (int cp : cps)
          for (int ep : eps)
            for (int mb : {1, 2, 4}) {
              if (gpus % (tp * pp * cp) != 0 || (vp > 1 && pp == 1)) continue;
              LlmLayout L = space.base;
              L.tp = tp;
              L.pp = pp;
              L.vp = vp;
              // Layers that do not divide: the split plan chooses, unless one was asked.
              if (!space.base.uneven() && !choose_layer_split(model, L)) continue;
              L.cp = cp;
              L.ep = ep;
              L.dp = 0;
              L.micro_batch = mb;
              L.sp = tp > 1;
              try {
                L = resolve_layout(model, L, gpus);
              } catch (const UsageError&) {
                continue;  // a combination Megatron would refuse
              }
              PlanCandidate c;
              for (int zero : {1, 3}) {
                for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
                  if (r == Recompute::selective && L.attention == Attention::flash) continue;  // same as none
                  L.recompute = r;
                  L.zero = zero;
                  c.layout = L;
                  c.memory = layout_memory(model, L, space.optimizer_state_B);
                  c.fits = c.memory.total_B() <= space.memory_B;
                  if (c.fits) break;
                }
                if (c.fits) break;
              }
              out.push_back(c);
            }
  return out;
}

}  // namespace topsim
