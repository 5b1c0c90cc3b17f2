#include "collectives/ring_search.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <map>
#include <numeric>

namespace topsim {

int RingSet::rings() const { return std::accumulate(multiplicity.begin(), multiplicity.end(), 0); }
int RingSet::channels() const { return std::min(2 * rings(), max_channels); }

namespace {

// Kinds of transport, best first: NCCL prefers NVLink, then P2P over PCIe, then shared memory.
int transport_rank(RouteKind kind) {
  switch (kind) {
    case RouteKind::nvlink: return 0;
    case RouteKind::pcie_peer: return 1;
    case RouteKind::host_staged: return 2;
    case RouteKind::network: return 3;
  }
  return 4;
}

// Depth-first search for one Hamiltonian cycle from rank 0 whose every resource still has room
// for `speed` per crossing, given what the rings found so far took (`residual`). `variant`
// rotates the order in which equally good next hops are tried, so that several packings of the
// same speed can be explored.
class CycleSearch {
 public:
  CycleSearch(Fabric& fabric, double speed, const std::vector<double>& residual, int worst_transport, int variant)
      : fabric_(fabric),
        speed_(speed),
        residual_(residual),
        worst_(worst_transport),
        variant_(variant),
        used_(fabric.ranks(), false),
        load_(fabric.resources(), 0) {}

  bool find(std::vector<int>& ring) {
    path_ = {0};
    used_.assign(fabric_.ranks(), false);
    used_[0] = true;
    std::fill(load_.begin(), load_.end(), 0);
    expansions_ = 0;
    if (!extend()) return false;
    ring = path_;
    return true;
  }

 private:
  // Room left on a resource for this ring once `extra` more crossings are added.
  double room(int resource, int extra) const { return residual_[resource] - (load_[resource] + extra) * speed_; }

  bool fits(const Fabric::Arc& arc) const {
    if (transport_rank(arc.kind) > worst_) return false;
    for (const auto& [resource, times] : arc.uses)
      if (room(resource, times) < -1e-9 * fabric_.capacity_Bps(resource)) return false;
    return true;
  }

  // How many more rings of this speed the arc could still take: the scarcest of its resources.
  long headroom(const Fabric::Arc& arc) const {
    double least = std::numeric_limits<double>::infinity();
    for (const auto& [resource, times] : arc.uses) least = std::min(least, room(resource, times) / times);
    return static_cast<long>(std::floor(least / speed_ + 1e-9));
  }

  void take(const Fabric::Arc& arc, int sign) {
    for (const auto& [resource, times] : arc.uses) load_[resource] += sign * times;
  }

  bool extend() {
    if (++expansions_ > kExpansionLimit) return false;
    int at = path_.back();
    int n = fabric_.ranks();
    if (static_cast<int>(path_.size()) == n) return fits(fabric_.arc(at, 0));
    std::vector<std::pair<std::pair<int, long>, int>> next;  // ((transport, -headroom), rotated index)
    for (int b = 0; b < n; ++b) {
      if (used_[b]) continue;
      const auto& arc = fabric_.arc(at, b);
      if (!fits(arc)) continue;
      next.push_back({{transport_rank(arc.kind), -headroom(arc)}, (b - variant_ + n) % n});
    }
    std::sort(next.begin(), next.end());
    for (const auto& entry : next) {
      int b = (entry.second + variant_) % n;
      const auto& arc = fabric_.arc(at, b);
      take(arc, +1);
      used_[b] = true;
      path_.push_back(b);
      if (extend()) return true;
      path_.pop_back();
      used_[b] = false;
      take(arc, -1);
      if (expansions_ > kExpansionLimit) return false;
    }
    return false;
  }

  static constexpr long kExpansionLimit = 20000;
  Fabric& fabric_;
  double speed_;
  const std::vector<double>& residual_;
  int worst_;
  int variant_;
  std::vector<bool> used_;
  std::vector<int> path_;
  std::vector<int> load_;
  long expansions_ = 0;
};

constexpr std::size_t kCycleLimit = 6000;

void add_ring(RingSet& set, const std::vector<int>& ring) {
  auto it = std::find(set.orders.begin(), set.orders.end(), ring);
  if (it == set.orders.end()) {
    set.orders.push_back(ring);
    set.multiplicity.push_back(1);
  } else {
    ++set.multiplicity[static_cast<std::size_t>(it - set.orders.begin())];
  }
}

// Communicators too large to search: the rank order, given as many rings as one NVLink's worth
// of speed allows (at most kMaxRings).
RingSet rank_order_rings(Fabric& fabric) {
  std::vector<int> order(fabric.ranks());
  std::iota(order.begin(), order.end(), 0);
  std::map<int, int> crossings;
  for (int i = 0; i < fabric.ranks(); ++i)
    for (const auto& [resource, times] : fabric.arc(order[i], order[(i + 1) % fabric.ranks()]).uses)
      crossings[resource] += times;
  double ring_Bps = std::numeric_limits<double>::infinity();
  for (const auto& [resource, times] : crossings) ring_Bps = std::min(ring_Bps, fabric.capacity_Bps(resource) / times);
  double unit = fabric.nvlink_unit_Bps();
  int rings = unit > 0 ? static_cast<int>(std::clamp(std::round(ring_Bps / unit), 1.0, double(kMaxRings))) : 1;
  RingSet set;
  set.orders = {order};
  set.multiplicity = {rings};
  set.speed_Bps = ring_Bps / rings;
  return set;
}

// Every Hamiltonian cycle from rank 0 over arcs with a good enough transport, or nothing if
// there are more than `limit` (then rings are packed greedily).
std::optional<std::vector<std::vector<int>>> all_cycles(Fabric& fabric, int worst, std::size_t limit) {
  int n = fabric.ranks();
  auto usable = [&](int a, int b) { return transport_rank(fabric.arc(a, b).kind) <= worst; };
  std::vector<std::vector<int>> cycles;
  std::vector<int> path = {0};
  std::vector<bool> used(n, false);
  used[0] = true;
  bool overflow = false;
  std::function<void()> walk = [&]() {
    if (overflow) return;
    int at = path.back();
    if (static_cast<int>(path.size()) == n) {
      if (usable(at, 0)) {
        cycles.push_back(path);
        overflow = cycles.size() > limit;
      }
      return;
    }
    for (int b = 0; b < n && !overflow; ++b) {
      if (used[b] || !usable(at, b)) continue;
      used[b] = true;
      path.push_back(b);
      walk();
      path.pop_back();
      used[b] = false;
    }
  };
  walk();
  if (overflow) return std::nullopt;
  return cycles;
}

// Most rings (up to kMaxRings) that a set of cycles packs into the capacities at `speed`, by
// backtracking; a cycle may be used several times.
// Cycles that load the same resources the same way are interchangeable when packing.
struct CycleClasses {
  std::vector<std::vector<std::pair<int, int>>> uses;  ///< (resource, crossings) per class
  std::vector<std::vector<int>> example;               ///< one cycle of each class
};

CycleClasses classify(Fabric& fabric, const std::vector<std::vector<int>>& cycles) {
  int n = fabric.ranks();
  CycleClasses classes;
  std::map<std::vector<std::pair<int, int>>, std::size_t> seen;
  for (const auto& cycle : cycles) {
    std::map<int, int> total;
    for (int i = 0; i < n; ++i)
      for (const auto& [resource, times] : fabric.arc(cycle[i], cycle[(i + 1) % n]).uses) total[resource] += times;
    std::vector<std::pair<int, int>> signature(total.begin(), total.end());
    if (seen.emplace(signature, classes.uses.size()).second) {
      classes.uses.push_back(signature);
      classes.example.push_back(cycle);
    }
  }
  return classes;
}

// Most rings (up to kMaxRings) the cycle classes pack into the capacities at `speed`, by
// backtracking; a class may be used several times.
RingSet pack_cycles(Fabric& fabric, const CycleClasses& classes, double speed) {
  const auto& uses = classes.uses;
  std::vector<double> residual(fabric.resources());
  for (int r = 0; r < fabric.resources(); ++r) residual[r] = fabric.capacity_Bps(r);
  std::vector<std::size_t> chosen, best;
  long budget = 2000000;  // resource checks; bounds the search on large cycle sets
  std::function<void(std::size_t)> pack = [&](std::size_t from) {
    if (chosen.size() > best.size()) best = chosen;
    if (static_cast<int>(best.size()) == kMaxRings) return;
    for (std::size_t c = from; c < uses.size() && budget > 0; ++c) {
      bool fits = true;
      for (const auto& [resource, times] : uses[c]) {
        --budget;
        if (residual[resource] - times * speed < -1e-9 * fabric.capacity_Bps(resource)) {
          fits = false;
          break;
        }
      }
      if (!fits) continue;
      for (const auto& [resource, times] : uses[c]) residual[resource] -= times * speed;
      chosen.push_back(c);
      pack(c);
      chosen.pop_back();
      for (const auto& [resource, times] : uses[c]) residual[resource] += times * speed;
      if (static_cast<int>(best.size()) == kMaxRings) return;
    }
  };
  pack(0);
  RingSet set;
  set.speed_Bps = speed;
  for (std::size_t c : best) add_ring(set, classes.example[c]);
  return set;
}

// The best ring set whose hops all use transports no worse than `worst_transport`.
RingSet best_rings(Fabric& fabric, int worst_transport) {
  int n = fabric.ranks();
  // Candidate speeds: every resource's capacity split among up to 2 x kMaxRings crossings (a
  // ring can cross a GPU-side resource twice, going in and out).
  std::vector<double> speeds;
  for (int r = 0; r < fabric.resources(); ++r)
    for (int k = 1; k <= 2 * kMaxRings; ++k) speeds.push_back(fabric.capacity_Bps(r) / k);
  std::sort(speeds.begin(), speeds.end(), std::greater<>());
  speeds.erase(std::unique(speeds.begin(), speeds.end(), [](double x, double y) { return std::abs(x - y) <= 1e-9 * x; }),
               speeds.end());
  double unit = fabric.nvlink_unit_Bps();
  if (unit <= 0) unit = speeds.front();

  std::optional<CycleClasses> classes;
  if (auto cycles = all_cycles(fabric, worst_transport, kCycleLimit)) classes = classify(fabric, *cycles);

  RingSet best;
  double best_score = 0;
  for (double speed : speeds) {
    if (speed * kMaxRings < best_score * (1 - 1e-9)) break;
    std::vector<double> residual(fabric.resources());
    // Exact packing when the cycles can be listed; else greedy packing, tried with several tie
    // orders, keeping the one that fits the most rings.
    RingSet set;
    if (classes) set = pack_cycles(fabric, *classes, speed);
    for (int variant = 0; variant < n && !classes && set.rings() < kMaxRings; ++variant) {
      for (int r = 0; r < fabric.resources(); ++r) residual[r] = fabric.capacity_Bps(r);
      RingSet attempt;
      attempt.speed_Bps = speed;
      std::vector<int> ring;
      CycleSearch search(fabric, speed, residual, worst_transport, variant);
      while (attempt.rings() < kMaxRings && search.find(ring)) {
        for (int i = 0; i < n; ++i)
          for (const auto& [resource, times] : fabric.arc(ring[i], ring[(i + 1) % n]).uses)
            residual[resource] -= times * speed;
        add_ring(attempt, ring);
      }
      if (attempt.rings() > set.rings()) set = attempt;
    }
    double score = set.rings() * speed;
    bool better = score > best_score * (1 + 1e-9) ||
                  (score >= best_score * (1 - 1e-9) && std::abs(speed - unit) < std::abs(best.speed_Bps - unit));
    if (set.rings() > 0 && better) {
      best = set;
      best_score = std::max(best_score, score);
    }
  }
  return best;
}

}  // namespace

RingSet search_rings(Fabric& fabric) {
  int n = fabric.ranks();
  if (n < 2) return RingSet{};
  if (n > 32) return rank_order_rings(fabric);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) fabric.arc(a, b);
  // Like NCCL, all rings use the best transport that can close one: NVLink, else PCIe, else SHM.
  for (int worst = transport_rank(RouteKind::nvlink); worst <= transport_rank(RouteKind::host_staged); ++worst) {
    RingSet set = best_rings(fabric, worst);
    if (set.rings() > 0) return set;
  }
  return RingSet{};
}

}  // namespace topsim
