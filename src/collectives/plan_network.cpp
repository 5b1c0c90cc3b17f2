// Collectives across servers joined by a network, as NCCL runs them: every NIC index of the
// servers is a rail; a rail's ring enters each server at a GPU near that NIC, chains through
// every local GPU over NVLink and leaves from another GPU near it. Trees are NCCL's double
// binary trees over the servers, with the same chains inside them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "collectives/communicator.hpp"
#include "routing/graph_search.hpp"
#include "util/error.hpp"

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

void Communicator::find_rails() {
  const Topology& t = fabric_.topology();
  for (int node : fabric_.nodes()) {
    node_ranks_.emplace_back();
    for (int r = 0; r < ranks(); ++r)
      if (fabric_.node_of_rank(r) == node) node_ranks_.back().push_back(r);
    if (node_ranks_.back().size() != node_ranks_.front().size())
      throw UsageError("every server of a communicator must contribute as many GPUs; server " + std::to_string(node) +
                       " has " + std::to_string(node_ranks_.back().size()) + ", server " +
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

Communicator::Plan Communicator::plan_network(const CollRequest& request, CollSize size, Algo algo,
                                              const NcclProtocol& proto) {
  Plan plan;
  int n = ranks();
  int m = static_cast<int>(node_ranks_.size());
  int g = n / m;
  double S = size.size_B;
  int rails = static_cast<int>(rails_.size());
  if (request.channels) rails = std::clamp((*request.channels + 1) / 2, 1, rails);
  plan.channels = request.channels ? *request.channels : std::min(2 * rails, 32);

  // Per-step cost: network steps take the network term, steps inside a server NVLink's (or
  // PCIe's when the chain leaves NVLink).
  std::vector<RankHop> inside;
  for (const RankHop& h : rail_ring(0))
    if (h.rail < 0) inside.push_back(h);
  double intra = step_cost_s(proto, inside);
  double net = proto.network_hop_s;

  auto add = [&](std::size_t id, double payload, const std::vector<RankHop>& arcs) {
    Flow f;
    f.index = id;
    f.payload_B = payload;
    f.arcs = arcs;
    plan.flows.push_back(std::move(f));
  };
  std::string tag = "/" + std::to_string(rails) + "/";
  if (algo == Algo::ring && (request.op == CollOp::broadcast || request.op == CollOp::reduce)) {
    for (int r = 0; r < rails; ++r) {
      std::vector<RankHop> ring = rail_ring(r);
      auto at = std::find_if(ring.begin(), ring.end(), [&](const RankHop& h) { return h.from == request.root; }) - ring.begin();
      std::vector<RankHop> chain;
      for (int i = 0; i + 1 < n; ++i) chain.push_back(ring[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      add(composite("net-chain/" + std::string(to_string(request.op)) + "/" + std::to_string(request.root) + tag +
                        std::to_string(r),
                    chain, std::nullopt),
          pipelined_B(S / rails, S / (2.0 * rails), proto.chunk_B, n - 1), chain);
    }
    plan.latency_s = proto.ring_base_s + (n - 1) * ((double(m) / n) * net + (1 - double(m) / n) * intra);
  } else if (algo == Algo::ring) {
    double per_hop = request.op == CollOp::allreduce ? 2.0 * (n - 1) / n * S : double(n - 1) / n * S;
    for (int r = 0; r < rails; ++r) {
      std::vector<RankHop> ring = rail_ring(r);
      add(composite("net-ring" + tag + std::to_string(r), ring, std::nullopt), per_hop / rails, ring);
    }
    double steps = request.op == CollOp::allreduce ? 2 * (n - 1) : n - 1;
    plan.latency_s = proto.ring_base_s + steps * ((double(m) / n) * net + (1 - double(m) / n) * intra);
  } else if (algo == Algo::tree) {
    // Two binary trees over the servers, the second mirrored so that a server that is a leaf in
    // one is inner in the other; each carries half the bytes of every rail. Inside a server the
    // data runs the rail's chain to its head (the GPU nearest the NIC).
    int height = static_cast<int>(std::floor(std::log2(std::max(1, m))));
    double channel_B = S / (2.0 * rails);  // two channels per rail, one per tree
    double chunk = proto.name == "simple" ? tree_chunk_B(proto.chunk_B, channel_B, g - 1 + height) : proto.chunk_B;
    for (int r = 0; r < rails; ++r) {
      const std::vector<int>& chain = rails_[static_cast<std::size_t>(r)].chain;
      for (int tree = 0; tree < 2; ++tree) {
        std::vector<RankHop> up;
        for (int j = 0; j < m; ++j) {
          const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
          for (std::size_t i = chain.size() - 1; i > 0; --i) up.push_back(RankHop{here[chain[i]], here[chain[i - 1]], -1});
          int position = tree == 0 ? j : m - 1 - j;
          if (position == 0) continue;
          int parent_position = (position - 1) / 2;
          int parent = tree == 0 ? parent_position : m - 1 - parent_position;
          up.push_back(RankHop{here[chain.front()], node_ranks_[static_cast<std::size_t>(parent)][chain.front()],
                               rails_[static_cast<std::size_t>(r)].nic});
        }
        std::vector<RankHop> down;
        for (auto it = up.rbegin(); it != up.rend(); ++it) down.push_back(RankHop{it->to, it->from, it->rail});
        std::string key = tag + std::to_string(r) + "/" + std::to_string(tree);
        double bytes = pipelined_B(channel_B, channel_B, chunk, 2 * (g - 1 + height));
        add(composite("net-tree-up" + key, up, std::nullopt), bytes, up);
        add(composite("net-tree-down" + key, down, std::nullopt), bytes, down);
      }
    }
    plan.latency_s = proto.tree_base_s + 2 * ((g - 1) * intra + height * net);
  } else if (algo == Algo::collnet) {
    // CollNet over SHARP: per rail, the servers' GPUs reduce along the rail's chain to its head,
    // the head sends its server's sum once through the NIC, the switches reduce across servers
    // and return the result, which runs back down the chain. Each NIC then carries S / rails
    // each way (a ring carries twice that). The switches' reduction tree is drawn as the heads'
    // ring over the rail: one stream into and one out of every NIC, and through each leaf's
    // uplinks only where the ring crosses leaves, as SHARP's reduced streams do.
    double channel_B = S / (2.0 * rails);
    for (int r = 0; r < rails; ++r) {
      const std::vector<int>& chain = rails_[static_cast<std::size_t>(r)].chain;
      std::vector<RankHop> hops;
      for (int j = 0; j < m; ++j) {
        const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
        for (std::size_t i = chain.size() - 1; i > 0; --i) hops.push_back(RankHop{here[chain[i]], here[chain[i - 1]], -1});
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) hops.push_back(RankHop{here[chain[i]], here[chain[i + 1]], -1});
        hops.push_back(RankHop{here[chain.front()], node_ranks_[static_cast<std::size_t>((j + 1) % m)][chain.front()],
                               rails_[static_cast<std::size_t>(r)].nic});
      }
      add(composite("collnet" + tag + std::to_string(r), hops, std::nullopt),
          pipelined_B(S / rails, channel_B, proto.chunk_B, 2 * (g - 1) + 2), hops);
    }
    plan.latency_s = proto.tree_base_s + 2 * ((g - 1) * intra + net);
  } else if (algo == Algo::nvls_tree) {
    // NVLS-Tree (NCCL 2.18+): inside every server the NVSwitches reduce and multicast (NVLS), so
    // each GPU sends its data once and receives the result, S (1 + 1/g) each way at the NVLS
    // efficiency; the rails' head GPUs (nearest each NIC) run NCCL's two binary trees over the
    // servers, each tree carrying half of the rail's share up and down, pipelined like the
    // network trees above.
    int height = static_cast<int>(std::floor(std::log2(std::max(1, m))));
    if (g > 1) {
      std::vector<RankHop> intra;
      const std::vector<int>& chain = rails_.front().chain;
      for (int j = 0; j < m; ++j) {
        const std::vector<int>& here = node_ranks_[static_cast<std::size_t>(j)];
        for (std::size_t i = 0; i < chain.size(); ++i)
          intra.push_back(RankHop{here[chain[i]], here[chain[(i + 1) % chain.size()]], -1});
      }
      add(composite("nvls-tree-intra" + tag, intra, std::nullopt), S * (1 + 1.0 / g) / *nccl().nvls_efficiency, intra);
    }
    double channel_B = S / (2.0 * rails);
    for (int r = 0; r < rails; ++r) {
      const Rail& rail = rails_[static_cast<std::size_t>(r)];
      for (int tree = 0; tree < 2; ++tree) {
        std::vector<RankHop> up;
        for (int j = 0; j < m; ++j) {
          int position = tree == 0 ? j : m - 1 - j;
          if (position == 0) continue;
          int parent_position = (position - 1) / 2;
          int parent = tree == 0 ? parent_position : m - 1 - parent_position;
          up.push_back(RankHop{node_ranks_[static_cast<std::size_t>(j)][rail.chain.front()],
                               node_ranks_[static_cast<std::size_t>(parent)][rail.chain.front()], rail.nic});
        }
        std::vector<RankHop> down;
        for (auto it = up.rbegin(); it != up.rend(); ++it) down.push_back(RankHop{it->to, it->from, it->rail});
        std::string key = tag + std::to_string(r) + "/" + std::to_string(tree);
        double bytes = pipelined_B(channel_B, channel_B, proto.chunk_B, 2 * std::max(1, height));
        add(composite("nvls-tree-up" + key, up, std::nullopt), bytes, up);
        add(composite("nvls-tree-down" + key, down, std::nullopt), bytes, down);
      }
    }
    plan.latency_s = proto.tree_base_s + 2 * intra + 2 * height * net;
  } else if (algo == Algo::direct) {
    add_direct(request, size, plan);
    plan.latency_s = proto.ring_base_s + net;
  }
  return plan;
}

}  // namespace topsim
