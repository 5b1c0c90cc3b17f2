#include <algorithm>
#include <cmath>
#include <numeric>

#include "collectives/communicator.hpp"

namespace topsim {

int Communicator::ring_subset(std::optional<int> channels, std::vector<int>& multiplicity) const {
  multiplicity = rings_.multiplicity;
  if (!channels) return rings_.channels();
  // Two channels per ring: fewer channels run fewer of the rings found.
  int keep = std::max(1, (*channels + 1) / 2);
  for (int& m : multiplicity) {
    m = std::min(m, keep);
    keep -= m;
  }
  return *channels;
}

Communicator::Plan Communicator::plan(const CollRequest& request, CollSize size, Algo algo, const NcclProtocol& proto) {
  Plan plan;
  int n = ranks();
  double S = size.size_B;
  if (n < 2) {  // one GPU: a local copy, NCCL's base cost only
    plan.latency_s = proto.ring_base_s;
    return plan;
  }
  std::vector<int> mult;
  plan.channels = ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  auto add = [&](std::size_t id, double payload, std::vector<RankHop> arcs) {
    Flow f;
    f.index = id;
    f.payload_B = payload;
    f.arcs = std::move(arcs);
    plan.flows.push_back(std::move(f));
  };
  std::vector<RankHop> used_arcs;  // every rank hop the plan crosses, for the step cost
  auto note = [&](const std::vector<RankHop>& hops) { used_arcs.insert(used_arcs.end(), hops.begin(), hops.end()); };
  double steps = 0;
  double base = proto.ring_base_s;
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0 || algo == Algo::nvls || algo == Algo::direct) continue;
    const std::vector<int>& order = rings_.orders[k];
    double share = double(mult[k]) / rings;
    double cap = rings_.speed_Bps * mult[k];
    std::string tag = std::to_string(k) + "/" + std::to_string(mult[k]);
    // Chains are pipelines; each of the group's 2 x mult channels streams its part in chunks.
    double channel_B = S * share / (2 * mult[k]);
    double tree_chunk = proto.name == "simple" ? tree_chunk_B(proto.chunk_B, channel_B, n - 1) : proto.chunk_B;
    if (algo == Algo::ring && (request.op == CollOp::broadcast || request.op == CollOp::reduce)) {
      // A chain from the root (broadcast) or to it (reduce), along the ring.
      auto at = std::find(order.begin(), order.end(), request.root) - order.begin();
      std::vector<int> chain;
      for (int i = 0; i < n; ++i)
        chain.push_back(order[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      auto hops = rank_order_hops(chain, false);
      note(hops);
      // No cap at the ring's speed: the search gave each ring its share of links it crosses in
      // both directions, but a chain runs one way, so the reverse capacity is free (two GPUs
      // staged through host memory broadcast at twice the rate they all-reduce). The links'
      // sharing between chains still binds them.
      add(composite("chain/" + std::string(to_string(request.op)) + "/" + std::to_string(request.root) + "/" + tag, hops,
                    std::nullopt),
          pipelined_B(S * share, channel_B, proto.chunk_B, n - 1), hops);
      steps = n - 1;
    } else if (algo == Algo::ring) {
      auto hops = rank_order_hops(order, true);
      note(hops);
      double per_hop = request.op == CollOp::allreduce ? 2.0 * (n - 1) / n * S : double(n - 1) / n * S;
      add(composite("ring/" + tag, hops, cap), per_hop * share, hops);
      steps = request.op == CollOp::allreduce ? 2 * (n - 1) : n - 1;
    } else if (algo == Algo::tree) {
      // Inside one node NCCL's tree is a chain: reduce up it while broadcasting down it.
      auto down = rank_order_hops(order, false);
      std::vector<RankHop> up;
      for (auto it = down.rbegin(); it != down.rend(); ++it) up.push_back(RankHop{it->to, it->from, -1});
      note(down);
      // The broadcast down the chain trails the reduction up it by the chain's length.
      double bytes = pipelined_B(S * share, channel_B, tree_chunk, 2 * (n - 1));
      add(composite("tree-down/" + tag, down, cap), bytes, down);
      add(composite("tree-up/" + tag, up, cap), bytes, up);
      steps = 2 * (n - 1);
      base = proto.tree_base_s;
    }
  }
  if (algo == Algo::nvls) {
    // NVLink SHARP: every GPU sends all its data to the switches, which reduce, and receives
    // the result: S (1 + 1/n) each way per GPU, at the NVLS efficiency.
    auto hops = rank_order_hops(rings_.orders.front(), true);
    note(hops);
    add(composite("nvls", hops, std::nullopt), S * (1 + 1.0 / n) / *nccl().nvls_efficiency, hops);
    steps = 2;
    plan.channels = rings_.channels();
  }
  if (algo == Algo::direct) {
    add_direct(request, size, plan);
    for (const Flow& f : plan.flows) note(f.arcs);
    steps = 1;
  }
  plan.latency_s = base + steps * step_cost_s(proto, used_arcs);
  return plan;
}

Schedule Communicator::step_schedule(const CollRequest& request, CollSize size, const NcclProtocol& proto,
                                     double latency_s) {
  // The reference: every step of every hop is a transfer that starts when its sender has sent
  // its previous step and received the step it forwards. Only the first pass through the steps
  // pays NCCL's per-step cost; later chunks stream behind it, as NCCL's buffering lets them.
  int n = ranks();
  double S = size.size_B;
  std::vector<int> mult;
  ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  bool chain = request.op == CollOp::broadcast || request.op == CollOp::reduce;
  int hops = chain ? n - 1 : n;
  int steps = request.op == CollOp::allreduce ? 2 * (n - 1) : n - 1;
  double step_cost = (latency_s - proto.ring_base_s) / (chain ? n - 1 : steps);
  Schedule schedule;
  std::size_t start = schedule.delay(fabric_.gpu(0), proto.ring_base_s);
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0) continue;
    double share = double(mult[k]) / rings;
    std::vector<int> order = rings_.orders[k];
    if (chain) {
      auto at = std::find(order.begin(), order.end(), request.root) - order.begin();
      std::vector<int> rotated;
      for (int i = 0; i < n; ++i) rotated.push_back(order[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      order = rotated;
      steps = static_cast<int>(std::max(1.0, std::ceil(S * share / (2 * mult[k]) / proto.chunk_B)));
    }
    double bytes = std::round((chain ? S * share / steps : S * share / n) / proto.efficiency);
    // previous[i]: the last transfer out of the i-th rank of the order (start for none yet).
    std::vector<std::size_t> previous(n, start);
    for (int s = 0; s < steps; ++s) {
      std::vector<std::size_t> sent = previous;
      for (int i = 0; i < hops; ++i) {
        std::vector<std::size_t> after = {previous[i]};
        if (chain ? i > 0 : true) after.push_back(chain ? sent[i - 1] : previous[(i - 1 + n) % n]);
        std::sort(after.begin(), after.end());
        after.erase(std::unique(after.begin(), after.end()), after.end());
        if (!chain || s == 0) after = {schedule.delay(fabric_.gpu(order[i]), step_cost, after)};
        sent[i] = schedule.transfer(fabric_.gpu(order[i]), fabric_.gpu(order[(i + 1) % n]), bytes, after, false);
      }
      previous = sent;
    }
  }
  return schedule;
}

bool Communicator::short_chain(const CollRequest& request, CollSize size, const NcclProtocol& proto) const {
  // A chain of few chunks is store-and-forward: one hop busy at a time. One flow over all hops
  // would have every hop contend at once, so such chains run step by step (cheap: few chunks).
  if (request.op != CollOp::broadcast && request.op != CollOp::reduce) return false;
  // Only Simple stores and forwards whole steps; LL and LL128 forward each line as it lands.
  if (proto.name != "simple") return false;
  if (ranks() > kMaxStepRanks || rings_.rings() == 0) return false;
  return size.size_B / (2.0 * rings_.rings()) <= kStepChunks * proto.chunk_B;
}

}  // namespace topsim
