// Discovery across servers joined by a network, as NCCL's search lays it out: every NIC index of
// the servers is a rail; a rail's ring enters each server at a GPU near that NIC, chains through
// every local GPU (over NVLink where it can) and leaves from another GPU near it.
#include <algorithm>
#include <functional>
#include <limits>

#include "collectives/communicator.hpp"
#include "routing/graph_search.hpp"
#include "util/error.hpp"

namespace topsim {

void Communicator::find_rails() {
  const Topology& t = fabric_.topology();
  // One pass over the ranks (fabric_.nodes() is in order of first appearance): linear in them.
  std::vector<int> slot(static_cast<std::size_t>(t.node_count()), -1);
  for (std::size_t i = 0; i < fabric_.nodes().size(); ++i) slot[static_cast<std::size_t>(fabric_.nodes()[i])] = static_cast<int>(i);
  node_ranks_.assign(fabric_.nodes().size(), {});
  for (int r = 0; r < ranks(); ++r) node_ranks_[static_cast<std::size_t>(slot[static_cast<std::size_t>(fabric_.node_of_rank(r))])].push_back(r);
  for (std::size_t i = 0; i < fabric_.nodes().size(); ++i) {
    const int node = fabric_.nodes()[i];
    if (node_ranks_[i].size() != node_ranks_.front().size())
      throw UsageError("every server of a communicator must contribute as many GPUs; server " + std::to_string(node) +
                       " has " + std::to_string(node_ranks_[i].size()) + ", server " +
                       std::to_string(fabric_.nodes().front()) + " has " + std::to_string(node_ranks_.front().size()));
  }
  int rails = fabric_.rails();
  if (rails == 0) throw UsageError("these GPUs span servers but a server has no NIC");
  // Rails are laid out on the first server; the others are wired the same way. Each rail's
  // chain must fit beside the chains already laid, at the speed its NIC runs, so that the
  // rails spread over NVLinks as NCCL's search spreads them; failing that, any chain.
  const std::vector<int>& local = node_ranks_.front();
  int g = static_cast<int>(local.size());
  auto host_links = [](const Link& l) { return l.kind == LinkKind::pcie || l.kind == LinkKind::socket || l.kind == LinkKind::numa; };
  auto passable = [](const Device& d) { return d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu; };
  for (int a = 0; a < g; ++a)
    for (int b = 0; b < g; ++b)
      if (a != b) fabric_.arc(local[a], local[b]);
  std::vector<double> residual(fabric_.resources());
  for (int i = 0; i < fabric_.resources(); ++i) residual[i] = fabric_.capacity_Bps(i);
  // With fewer GPUs per server than NICs, NCCL uses only the NICs nearest its GPUs (on DGX A100,
  // one GPU per server uses the two NICs of its PCIe switch, not all eight).
  auto nic_distance = [&](int r) {
    Vertex nic = t.nics().at(static_cast<std::size_t>(fabric_.nic(fabric_.nodes().front(), r)));
    std::size_t best = std::numeric_limits<std::size_t>::max();
    for (int i = 0; i < g; ++i)
      if (auto path = shortest_path(t, t.gpu(fabric_.gpu(local[i])), nic, host_links, passable))
        best = std::min(best, path->size());
    return best;
  };
  std::vector<bool> near(static_cast<std::size_t>(rails), true);
  if (g < rails) {
    std::vector<std::size_t> distance;
    for (int r = 0; r < rails; ++r) distance.push_back(nic_distance(r));
    std::size_t nearest = *std::min_element(distance.begin(), distance.end());
    for (int r = 0; r < rails; ++r) near[static_cast<std::size_t>(r)] = distance[static_cast<std::size_t>(r)] == nearest;
  }
  for (int r = 0; r < rails; ++r) {
    if (!near[static_cast<std::size_t>(r)]) continue;
    Vertex nic = t.nics().at(static_cast<std::size_t>(fabric_.nic(fabric_.nodes().front(), r)));
    // Local GPUs by PCIe distance to the NIC; among the nearest, rails take turns entering, so
    // two NICs shared by two GPUs are entered one through each.
    std::vector<std::pair<std::size_t, int>> by_distance;
    for (int i = 0; i < g; ++i) {
      auto path = shortest_path(t, t.gpu(fabric_.gpu(local[i])), nic, host_links, passable);
      by_distance.emplace_back(path ? path->size() : std::numeric_limits<std::size_t>::max(), i);
    }
    std::stable_sort(by_distance.begin(), by_distance.end());
    std::size_t nearest = 0;
    while (nearest < by_distance.size() && by_distance[nearest].first == by_distance[0].first) ++nearest;
    std::rotate(by_distance.begin(), by_distance.begin() + static_cast<long>(static_cast<std::size_t>(r) % nearest),
                by_distance.begin() + static_cast<long>(nearest));
    int entry = by_distance[0].second;
    int peer = fabric_.node_of_rank(node_ranks_[1][entry]) == fabric_.node_of_rank(local[entry]) ? 0 : 1;
    double speed = fabric_.arc(local[entry], node_ranks_[static_cast<std::size_t>(peer)][entry], r).bottleneck_Bps;

    Rail rail;
    rail.nic = r;
    auto search = [&](int exit, bool nvlink_only, bool fit) {
      std::vector<int> path = {entry};
      std::vector<bool> used(g, false);
      std::vector<int> load(fabric_.resources(), 0);
      used[entry] = true;
      long budget = 100000;
      auto fits = [&](const Fabric::Arc& arc) {
        if (nvlink_only && arc.kind != RouteKind::nvlink) return false;
        if (!fit) return true;
        for (const auto& [res, times] : arc.uses)
          if (residual[res] - (load[res] + times) * speed < -1e-9 * fabric_.capacity_Bps(res)) return false;
        return true;
      };
      std::function<bool()> extend = [&]() -> bool {
        if (--budget < 0) return false;
        int at = path.back();
        if (static_cast<int>(path.size()) == g) return at == exit;
        for (int b = 0; b < g; ++b) {
          if (used[b] || (b == exit && static_cast<int>(path.size()) + 1 < g)) continue;
          const auto& arc = fabric_.arc(local[at], local[b]);
          if (!fits(arc)) continue;
          for (const auto& [res, times] : arc.uses) load[res] += times;
          used[b] = true;
          path.push_back(b);
          if (extend()) return true;
          path.pop_back();
          used[b] = false;
          for (const auto& [res, times] : arc.uses) load[res] -= times;
        }
        return false;
      };
      if (g == 1 || extend()) rail.chain = path;
    };
    for (int pass = 0; pass < 3 && rail.chain.empty(); ++pass)
      for (std::size_t e = g > 1 ? 1 : 0; e < by_distance.size() && rail.chain.empty(); ++e)
        search(by_distance[e].second, pass < 2, pass == 0);
    if (rail.chain.empty()) throw UsageError("no chain through the GPUs of a server for NIC rail " + std::to_string(r));
    for (std::size_t i = 0; i + 1 < rail.chain.size(); ++i)
      for (const auto& [res, times] : fabric_.arc(local[rail.chain[i]], local[rail.chain[i + 1]]).uses)
        residual[res] -= times * speed;
    rails_.push_back(rail);
  }
}

std::vector<RankHop> Communicator::rail_ring(int rail) const {
  std::vector<RankHop> hops;
  const std::vector<int>& chain = rails_.at(static_cast<std::size_t>(rail)).chain;
  std::size_t m = node_ranks_.size();
  for (std::size_t j = 0; j < m; ++j) {
    const std::vector<int>& here = node_ranks_[j];
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) hops.push_back(RankHop{here[chain[i]], here[chain[i + 1]], -1});
    hops.push_back(RankHop{here[chain.back()], node_ranks_[(j + 1) % m][chain.front()], rails_.at(static_cast<std::size_t>(rail)).nic});
  }
  return hops;
}

}  // namespace topsim
