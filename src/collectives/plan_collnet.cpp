// CollNet over SHARP switches (NCCL runs it only with NCCL_COLLNET_ENABLE=1): per rail, the
// servers' GPUs reduce along the rail's chain to its head, the head sends its server's sum once
// through the NIC, the switches reduce across servers and return the result, which runs back
// down the chain. Each NIC then carries S / rails each way (a ring carries twice that). The
// switches' reduction tree is drawn as the heads' ring over the rail: one stream into and one
// out of every NIC, and through each leaf's uplinks only where the ring crosses leaves, as
// SHARP's reduced streams do.
#include "collectives/communicator.hpp"

namespace topsim {

Communicator::Plan Communicator::plan_collnet(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  const int m = static_cast<int>(node_ranks_.size());
  const int g = ranks() / m;
  const double S = size.size_B;
  const int rails = rail_count(request, plan);
  const std::string tag = "/" + std::to_string(rails) + "/";
  double channel_B = S / (2.0 * rails);
  for (int r = 0; r < rails; ++r) {
    const Rail& rail = rails_[static_cast<std::size_t>(r)];
    std::vector<RankHop> hops;
    for (int j = 0; j < m; ++j) {
      const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
      for (std::size_t i = rail.chain.size() - 1; i > 0; --i)
        hops.push_back(RankHop{here[rail.chain[i]], here[rail.chain[i - 1]], -1});
      for (std::size_t i = 0; i + 1 < rail.chain.size(); ++i)
        hops.push_back(RankHop{here[rail.chain[i]], here[rail.chain[i + 1]], -1});
      hops.push_back(RankHop{here[rail.chain.front()], node_ranks_[static_cast<std::size_t>((j + 1) % m)][rail.chain.front()],
                             rail.nic});
    }
    add_flow(plan, composite("collnet" + tag + std::to_string(r), hops, std::nullopt),
             pipelined_B(S / rails, channel_B, proto.chunk_B, 2 * (g - 1) + 2), hops);
  }
  plan.latency_s = proto.tree_base_s + 2 * ((g - 1) * intra_step_s(proto) + net_step_s(proto));
  return plan;
}

}  // namespace topsim
