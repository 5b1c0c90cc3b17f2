// NVLink SHARP (Hopper-class NVSwitches reduce and multicast): NVLS inside one server, and
// NVLS-Tree across servers (NCCL 2.18+): NVLS inside every server, NCCL's two binary trees over
// the servers between the GPUs nearest each NIC.
#include <algorithm>
#include <cmath>

#include "collectives/communicator.hpp"

namespace topsim {

Communicator::Plan Communicator::plan_nvls(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  const int n = ranks();
  // Every GPU sends all its data to the switches, which reduce, and receives the result:
  // S (1 + 1/n) each way per GPU, at the NVLS efficiency.
  auto hops = rank_order_hops(rings_.orders.front(), true);
  add_flow(plan, composite("nvls", hops, std::nullopt), size.size_B * (1 + 1.0 / n) / *nccl().nvls_efficiency, hops);
  plan.channels = rings_.channels();
  // NCCL's own NVLS latency for the release (its NVLink hardware latency for NVLS, 25 us from
  // 2.21, tuning.cc): a multimem load-reduce and a multicast store through the switches, with
  // their memory fences, cost far more than two ring steps (15.2 us on Hopper, which made 2 MiB
  // on 8 H100 finish before 1 MiB). The tuner's table is the only source of the figure.
  plan.latency_s = nccl_estimate(version_, tuner_, request.limits, request.op, size.size_B, Algo::nvls, parse_proto(proto.name)).latency_s;
  return plan;
}

Communicator::Plan Communicator::plan_nvls_tree(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  const int m = static_cast<int>(node_ranks_.size());
  const int g = ranks() / m;
  const double S = size.size_B;
  const int rails = rail_count(request, plan);
  const std::string tag = "/" + std::to_string(rails) + "/";
  // Inside every server each GPU sends its data once and receives the result, S (1 + 1/g) each
  // way at the NVLS efficiency, drawn over the first rail's chain closed into a ring.
  if (g > 1) {
    std::vector<RankHop> intra;
    const std::vector<int>& chain = rails_.front().chain;
    for (int j = 0; j < m; ++j) {
      const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
      for (std::size_t i = 0; i < chain.size(); ++i)
        intra.push_back(RankHop{here[chain[i]], here[chain[(i + 1) % chain.size()]], -1});
    }
    add_flow(plan, composite("nvls-tree-intra" + tag, intra, std::nullopt), S * (1 + 1.0 / g) / *nccl().nvls_efficiency,
             intra);
  }
  // Across servers, per rail, two trees between the GPUs nearest the NIC, each carrying half of
  // the rail's share up and down, pipelined like the network trees.
  int height = static_cast<int>(std::floor(std::log2(std::max(1, m))));
  double channel_B = S / (2.0 * rails);
  for (int r = 0; r < rails; ++r)
    for (int tree = 0; tree < 2; ++tree) {
      std::vector<RankHop> up = tree_up_hops(r, tree, false), down = reversed(up);
      std::string key = tag + std::to_string(r) + "/" + std::to_string(tree);
      double bytes = pipelined_B(channel_B, channel_B, proto.chunk_B, 2 * std::max(1, height));
      add_flow(plan, composite("nvls-tree-up" + key, up, std::nullopt), bytes, up);
      add_flow(plan, composite("nvls-tree-down" + key, down, std::nullopt), bytes, down);
    }
  plan.latency_s = proto.tree_base_s + 2 * intra_step_s(proto) + 2 * height * proto.network_hop_s;
  return plan;
}

}  // namespace topsim
