#include "routing/network_path.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "routing/graph_search.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

// One crossing of a stage: the edge, walked from `from` to `to`.
struct Step {
  Edge edge;
  Vertex from = 0;
  Vertex to = 0;
  std::size_t link = 0;
};

using Stage = std::vector<Step>;  ///< equal-cost choices, by link index

// Network edges from `v` to switches one tier up (a NIC's tier is 0).
std::vector<Step> up_steps(const Topology& t, Vertex v) {
  std::vector<Step> out;
  int tier = t.device(v).type == DeviceType::network_switch ? t.device(v).tier : 0;
  for (Edge e : boost::make_iterator_range(boost::out_edges(v, t.graph()))) {
    if (t.link(e).kind != LinkKind::network) continue;
    Vertex w = t.other_end(e, v);
    if (t.device(w).type == DeviceType::network_switch && t.device(w).tier > tier)
      out.push_back(Step{e, v, w, t.link(e).index});
  }
  return out;
}

// Climbing from both ends, the most levels a tree route may have above its leaves (NIC, leaf,
// spine, core, super-core).
constexpr int kMaxClimb = 4;

// Vertices sorted and unique: a std::set's iteration order without a node per vertex (a
// cluster's rings ask for a million network routes, most of them one leaf apart).
using VertexSet = std::vector<Vertex>;

void settle(VertexSet& s) {
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
}

bool contains(const VertexSet& s, Vertex v) { return std::binary_search(s.begin(), s.end(), v); }

// The stages of every fewest-hop tree route from `a` to `b`, or none when the two sides meet
// nowhere within kMaxClimb levels (not a tree: the caller searches instead).
std::vector<Stage> tree_stages(const Topology& t, Vertex a, Vertex b) {
  for (Edge e : boost::make_iterator_range(boost::out_edges(a, t.graph())))
    if (t.link(e).kind == LinkKind::network && t.other_end(e, a) == b) return {Stage{Step{e, a, b, t.link(e).index}}};
  // levels_x[k]: the steps climbing from level k to level k + 1 on that side.
  std::vector<std::vector<Step>> up_a, up_b;
  VertexSet at_a = {a}, at_b = {b};
  for (int level = 0; level < kMaxClimb; ++level) {
    std::vector<Step> sa, sb;
    VertexSet next_a, next_b;
    for (Vertex v : at_a)
      for (const Step& s : up_steps(t, v)) sa.push_back(s), next_a.push_back(s.to);
    for (Vertex v : at_b)
      for (const Step& s : up_steps(t, v)) sb.push_back(s), next_b.push_back(s.to);
    if (sa.empty() || sb.empty()) return {};
    settle(next_a);
    settle(next_b);
    up_a.push_back(std::move(sa));
    up_b.push_back(std::move(sb));
    VertexSet common;
    std::set_intersection(next_a.begin(), next_a.end(), next_b.begin(), next_b.end(), std::back_inserter(common));
    if (common.empty()) {
      at_a = std::move(next_a);
      at_b = std::move(next_b);
      continue;
    }
    // Keep, level by level downwards, only the steps that lead to the meeting switches.
    auto prune = [&](std::vector<std::vector<Step>>& up) {
      VertexSet keep = common;
      for (std::size_t k = up.size(); k-- > 0;) {
        std::vector<Step> kept;
        VertexSet from;
        for (const Step& s : up[k])
          if (contains(keep, s.to)) kept.push_back(s), from.push_back(s.from);
        std::sort(kept.begin(), kept.end(), [](const Step& x, const Step& y) { return x.link < y.link; });
        settle(from);
        up[k] = std::move(kept);
        keep = std::move(from);
      }
    };
    prune(up_a);
    prune(up_b);
    std::vector<Stage> stages(up_a.begin(), up_a.end());
    for (std::size_t k = up_b.size(); k-- > 0;) {
      Stage down;
      for (const Step& s : up_b[k]) down.push_back(Step{s.edge, s.to, s.from, s.link});
      stages.push_back(std::move(down));
    }
    return stages;
  }
  return {};
}

Hop hop_of(const Topology& t, const std::vector<std::pair<const Step*, int>>& members) {
  Hop hop;
  hop.kind = Hop::Kind::link;
  for (const auto& [step, member] : members) hop.links.push_back(LinkUse{step->link, t.link(step->link).a == step->from, member});
  return hop;
}

// The member links a stage offers from `at`: (step, member), members numbered within a link.
std::vector<std::pair<const Step*, int>> choices(const Topology& t, const Stage& stage, Vertex at) {
  std::vector<std::pair<const Step*, int>> out;
  for (const Step& s : stage)
    if (s.from == at)
      for (int k = 0; k < t.link(s.link).count; ++k) out.emplace_back(&s, k);
  return out;
}

void place(const Topology& t, Vertex a, Vertex b, const std::vector<Stage>& stages, const RouteOptions& options,
           std::vector<Hop>& hops) {
  FlowPlacement* placement = options.placement.get();
  if (options.routing == RoutingMode::adaptive) {
    if (placement == nullptr) throw std::invalid_argument("adaptive routing needs RouteOptions::placement");
    auto found = placement->placed.find({a, b});
    if (found != placement->placed.end()) {
      for (const LinkUse& use : found->second) hops.push_back(Hop{Hop::Kind::link, {use}, {}});
      return;
    }
  }
  std::vector<LinkUse> chosen;
  Vertex at = a;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    auto options_here = choices(t, stages[k], at);
    if (options_here.empty()) throw std::logic_error("append_network: a tree stage has no way on");
    std::size_t pick = 0;
    auto key = [&](std::size_t i) {
      const Step* s = options_here[i].first;
      return std::make_tuple(s->link, options_here[i].second, t.link(s->link).a == s->from);
    };
    if (options.routing == RoutingMode::ecmp) {
      pick = ecmp_hash(static_cast<unsigned long long>(t.device(a).nic_index),
                       static_cast<unsigned long long>(t.device(b).nic_index), options.seed, k) %
             options_here.size();
    } else {
      for (std::size_t i = 1; i < options_here.size(); ++i)
        if (placement->flows[key(i)] < placement->flows[key(pick)]) pick = i;
      ++placement->flows[key(pick)];
    }
    const Step* step = options_here[pick].first;
    int member = t.link(step->link).count > 1 ? options_here[pick].second : -1;
    chosen.push_back(LinkUse{step->link, t.link(step->link).a == step->from, member});
    hops.push_back(Hop{Hop::Kind::link, {chosen.back()}, {}});
    at = step->to;
  }
  if (options.routing == RoutingMode::adaptive) placement->placed.emplace(std::make_pair(a, b), std::move(chosen));
}

}  // namespace

unsigned long long ecmp_hash(unsigned long long src_nic, unsigned long long dst_nic, unsigned long long seed,
                             unsigned long long stage) {
  // FNV-1a, 64-bit: offset basis 14695981039346656037, prime 1099511628211.
  unsigned long long h = 14695981039346656037ULL;
  for (unsigned long long word : {src_nic, dst_nic, seed, stage})
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (word >> (8 * byte)) & 0xffULL;
      h *= 1099511628211ULL;
    }
  // FNV-1a's low bits are only the parity of the inputs' low bits (the prime is odd), and a
  // choice is the hash modulo a few: MurmurHash3's fmix64 spreads every bit over the low ones.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

const char* to_string(RoutingMode mode) {
  switch (mode) {
    case RoutingMode::ideal: return "ideal";
    case RoutingMode::ecmp: return "ecmp";
    case RoutingMode::adaptive: return "adaptive";
  }
  return "?";
}

void append_network(const Topology& t, Vertex a, Vertex b, const RouteOptions& options, std::vector<Hop>& hops) {
  if (t.device(a).island != t.device(b).island)
    throw InputError(t.file(), "", "no network path between " + t.device(a).id + " and " + t.device(b).id +
                                       ": they are on separate networks (rails or planes that no switch joins)");
  std::vector<Stage> stages = tree_stages(t, a, b);
  if (stages.empty()) {
    auto switches = [](const Device& d) { return d.type == DeviceType::network_switch; };
    auto network_only = [](const Link& l) { return l.kind == LinkKind::network; };
    auto path = shortest_path(t, a, b, network_only, switches);
    if (!path) throw InputError(t.file(), "", "no network path between " + t.device(a).id + " and " + t.device(b).id);
    Vertex at = a;
    for (Edge e : *path) {
      Vertex to = t.other_end(e, at);
      stages.push_back(Stage{Step{e, at, to, t.link(e).index}});
      at = to;
    }
  }
  if (options.routing != RoutingMode::ideal) return place(t, a, b, stages, options, hops);
  for (const Stage& stage : stages) {
    std::vector<std::pair<const Step*, int>> all;
    for (const Step& s : stage) all.emplace_back(&s, -1);
    hops.push_back(hop_of(t, all));
  }
}

}  // namespace topsim
