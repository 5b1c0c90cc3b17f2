// Point-to-point operations as nccl-tests runs them: sendrecv (each rank to the next) and
// alltoall (every ordered pair), each pair a transfer at its route's bandwidth. NCCL runs them
// on its p2p channels, not on the rings; their per-channel limits are not simulated
// (docs/nccl.md).
#include "collectives/communicator.hpp"

namespace topsim {

void Communicator::add_direct(const CollRequest& request, CollSize size, Plan& plan) {
  int n = ranks();
  std::vector<std::pair<int, int>> pairs;
  if (request.op == CollOp::alltoall) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) pairs.emplace_back(a, b);
  } else {
    for (int a = 0; a < n; ++a) pairs.emplace_back(a, (a + 1) % n);
  }
  double payload = request.op == CollOp::alltoall ? size.size_B / n : size.size_B;
  for (const auto& [a, b] : pairs) {
    Flow f;
    f.composite = false;
    f.src = fabric_.gpu(a);
    f.dst = fabric_.gpu(b);
    f.payload_B = payload;
    f.arcs = {RankHop{a, b, -1}};
    plan.flows.push_back(f);
    if (declaring_) needs_.pairs.emplace_back(f.src, f.dst);
  }
}

Communicator::Plan Communicator::plan_direct(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  plan.channels = request.channels.value_or(version_.p2p_channels_per_peer);
  add_direct(request, size, plan);
  if (!network_) {
    std::vector<RankHop> used;
    for (const Flow& f : plan.flows) used.insert(used.end(), f.arcs.begin(), f.arcs.end());
    plan.latency_s = proto.ring_base_s + step_cost_s(proto, used);
  } else {
    plan.latency_s = proto.ring_base_s + net_step_s(proto);
  }
  return plan;
}

}  // namespace topsim
