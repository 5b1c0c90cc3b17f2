// NCCL's tree algorithm (allreduce): inside one server a chain, reduced up while the result is
// broadcast down; across servers NCCL's two binary trees over the servers (the second mirrored,
// so that a leaf of one is inner in the other), each carrying half of every rail's bytes, with
// the rail's chain inside each server.
#include <algorithm>
#include <cmath>

#include "collectives/communicator.hpp"

namespace topsim {

int Communicator::tree_parent(int server, int tree, int servers) {
  int position = tree == 0 ? server : servers - 1 - server;
  if (position == 0) return -1;
  int parent_position = (position - 1) / 2;
  return tree == 0 ? parent_position : servers - 1 - parent_position;
}

std::vector<RankHop> Communicator::tree_up_hops(int rail, int tree, bool through_chain) const {
  const Rail& r = rails_.at(static_cast<std::size_t>(rail));
  const int m = static_cast<int>(node_ranks_.size());
  std::vector<RankHop> up;
  for (int j = 0; j < m; ++j) {
    const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
    if (through_chain)
      for (std::size_t i = r.chain.size() - 1; i > 0; --i) up.push_back(RankHop{here[r.chain[i]], here[r.chain[i - 1]], -1});
    int parent = tree_parent(j, tree, m);
    if (parent < 0) continue;
    up.push_back(RankHop{here[r.chain.front()], node_ranks_[static_cast<std::size_t>(parent)][r.chain.front()], r.nic});
  }
  return up;
}

std::vector<RankHop> Communicator::reversed(const std::vector<RankHop>& hops) {
  std::vector<RankHop> out;
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) out.push_back(RankHop{it->to, it->from, it->rail});
  return out;
}

Communicator::Plan Communicator::plan_tree(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  const int n = ranks();
  const double S = size.size_B;
  if (!network_) {
    std::vector<RankHop> used;
    for (const RingShare& r : ring_shares(request, plan)) {
      auto down = rank_order_hops(*r.order, false);
      auto up = reversed(down);
      used.insert(used.end(), down.begin(), down.end());
      // The broadcast down the chain trails the reduction up it by the chain's length.
      double channel_B = S * r.share / (2 * r.rings);
      double chunk = proto.name == "simple" ? tree_chunk_B(proto.chunk_B, channel_B, n - 1) : proto.chunk_B;
      double bytes = pipelined_B(S * r.share, channel_B, chunk, 2 * (n - 1));
      add_flow(plan, composite("tree-down/" + r.tag, down, r.cap_Bps), bytes, down);
      add_flow(plan, composite("tree-up/" + r.tag, up, r.cap_Bps), bytes, up);
    }
    plan.latency_s = proto.tree_base_s + 2 * (n - 1) * step_cost_s(proto, used);
    return plan;
  }
  const int m = static_cast<int>(node_ranks_.size());
  const int g = n / m;
  const int rails = rail_count(request, plan);
  const std::string tag = "/" + std::to_string(rails) + "/";
  int height = static_cast<int>(std::floor(std::log2(std::max(1, m))));
  double channel_B = S / (2.0 * rails);  // two channels per rail, one per tree
  double chunk = proto.name == "simple" ? tree_chunk_B(proto.chunk_B, channel_B, g - 1 + height) : proto.chunk_B;
  for (int r = 0; r < rails; ++r)
    for (int tree = 0; tree < 2; ++tree) {
      std::vector<RankHop> up = tree_up_hops(r, tree, true), down = reversed(up);
      std::string key = tag + std::to_string(r) + "/" + std::to_string(tree);
      double bytes = pipelined_B(channel_B, channel_B, chunk, 2 * (g - 1 + height));
      add_flow(plan, composite("net-tree-up" + key, up, std::nullopt), bytes, up);
      add_flow(plan, composite("net-tree-down" + key, down, std::nullopt), bytes, down);
    }
  plan.latency_s = proto.tree_base_s + 2 * ((g - 1) * intra_step_s(proto) + height * net_step_s(proto));
  return plan;
}

}  // namespace topsim
