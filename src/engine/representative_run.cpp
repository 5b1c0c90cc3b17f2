// A schedule's classes of identical work (representatives.hpp) as a SimGrid platform of their
// own, built at run time in zones outside the engine's sealed root.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "engine/platform.hpp"
#include "engine/representatives.hpp"

namespace topsim {

namespace {

// Refinement rounds before giving up and simulating in full. Predecessors are refined within a
// round, so the rounds count steps of coupling through shared constraints, a handful in practice.
constexpr int kMaxRefinementRounds = 64;
// A class crossing a constraint M times lists its link M times (SimGrid sums the weights of a
// link listed twice). Past this many links in all, the representative routes would cost more
// than they save: the run is simulated in full.
constexpr std::uint64_t kMaxRouteLinks = std::uint64_t{1} << 24;

}  // namespace

std::optional<RepresentativeRun> representative_run(const Platform& full, const Schedule& schedule,
                                                    const std::string& prefix, const sg4::NetZone* lender, bool tracked) {
  const std::size_t n = schedule.ops.size();
  // Every constraint a flow crosses; a composite's cap is one more, shared by its ops.
  std::vector<double> capacity_Bps = full.key_capacity_Bps;
  std::vector<ConstraintKey> cap_key(full.composite_cap_Bps.size(), OpConstraints::kNoKey);
  std::vector<OpConstraints> ops(n);
  std::size_t flows = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = schedule.ops[i];
    if (op.kind == Op::Kind::transfer) {
      const PairRoute& route = full.pairs.at({op.src_gpu, op.dst_gpu});
      ops[i].keys = &route.keys;
      ops[i].latency_s = op.route_latency ? route.latency_s : 0.0;
      ++flows;
    } else if (op.kind == Op::Kind::composite) {
      ops[i].keys = &full.composite_keys[op.composite];
      if (full.composite_cap_Bps[op.composite] > 0) {
        ConstraintKey& key = cap_key[op.composite];
        if (key == OpConstraints::kNoKey) {
          key = static_cast<ConstraintKey>(capacity_Bps.size());
          capacity_Bps.push_back(full.composite_cap_Bps[op.composite]);
        }
        ops[i].also = key;
      }
      ++flows;
    }
  }
  if (flows < 2) return std::nullopt;
  Representatives classes = representatives(schedule, ops, capacity_Bps, kMaxRefinementRounds);
  if (!classes.stable || classes.representative.size() == n) return std::nullopt;
  const std::size_t k = classes.representative.size();
  // sum_F M(C,F) r_F <= capacity is the same constraint divided by the gcd g of its M(C,F): a
  // link of capacity / g crossed M(C,F) / g times. Symmetric classes often share large factors
  // (the servers a NIC reaches), so routes shrink by them.
  std::vector<std::uint64_t> divisor(classes.constraint.size(), 0);
  for (const auto& row : classes.crossings)
    for (const auto& [constraint, times] : row) divisor[constraint] = std::gcd(divisor[constraint], times);
  std::uint64_t route_links = 0;
  for (auto& row : classes.crossings)
    for (auto& [constraint, times] : row) {
      times /= divisor[constraint];
      route_links += times;
    }
  if (route_links > kMaxRouteLinks) return std::nullopt;

  RepresentativeRun run;
  run.class_of_op = std::move(classes.class_of_op);
  Platform& q = run.platform;
  q.prefix = prefix;
  q.tracked = tracked;
  q.gpus = static_cast<int>(k);
  // A timer per class (the pool's timer c): its delays (or its transfers' latencies) never
  // share one.

  std::vector<sg4::NetZone*> zones;
  const auto lend = [lender](sg4::NetZone* zone) { lend_models(zone, lender); };
  auto zone_for = [&](std::size_t flow) { return flow_zone(zones, flow, prefix + "flows", lend); };
  // One link per constraint class, with its members' capacity, shared like one direction of
  // theirs. The links carry no latency: transfers pay theirs as a delay.
  std::vector<sg4::Link*> links;
  const std::size_t real_keys = full.key_capacity_Bps.size();
  for (std::size_t c = 0; c < classes.constraint.size(); ++c) {
    ConstraintKey key = classes.constraint[c];
    const double link_Bps = capacity_Bps[key] / static_cast<double>(divisor[c]);
    sg4::Link* link = zone_for(0)->create_link(prefix + "c" + std::to_string(c), link_Bps);
    link->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
    link->seal();
    links.push_back(link);
    if (tracked) {
      std::string name = key < real_keys ? full.table->name(key) : prefix + "cap" + std::to_string(key - real_keys);
      q.links.push_back({std::move(name), link_Bps, c});
    }
  }

  std::vector<std::size_t> after;
  run.first_op.resize(k);
  run.last_op.resize(k);
  for (std::size_t c = 0; c < k; ++c) {
    const Op& op = schedule.ops[classes.representative[c]];
    const std::size_t first = run.schedule.ops.size();
    after.clear();
    for (std::size_t p : op.after) after.push_back(run.last_op[run.class_of_op[p]]);
    std::sort(after.begin(), after.end());
    after.erase(std::unique(after.begin(), after.end()), after.end());
    const int timer = static_cast<int>(c);
    if (op.kind == Op::Kind::delay) {
      run.first_op[c] = run.last_op[c] = run.schedule.delay(timer, op.delay_s, after);
      continue;
    }
    const std::size_t flow = q.composites.size();
    std::vector<sg4::LinkInRoute> route;
    LinkIds* ids = tracked ? &q.composite_links.emplace_back() : nullptr;
    for (const auto& [constraint, times] : classes.crossings[c])
      for (std::uint64_t t = 0; t < times; ++t) {
        route.emplace_back(links[constraint]);
        if (ids != nullptr) ids->push_back(constraint);
      }
    sg4::NetZone* zone = zone_for(flow);
    auto* in = zone->create_host(prefix + "flow" + std::to_string(flow) + ".in", 1.0);
    auto* out = zone->create_host(prefix + "flow" + std::to_string(flow) + ".out", 1.0);
    zone->add_route(in->get_netpoint(), out->get_netpoint(), nullptr, nullptr, route, false);
    q.composites.emplace_back(in, out);
    if (op.kind == Op::Kind::transfer) {
      const PairRoute& pair = full.pairs.at({op.src_gpu, op.dst_gpu});
      q.composite_bottleneck_Bps.push_back(pair.bottleneck_Bps);
      if (op.route_latency) {
        std::size_t latency = run.schedule.delay(timer, ops[classes.representative[c]].latency_s, after);
        after = {latency};
      }
    } else {
      q.composite_bottleneck_Bps.push_back(full.composite_bottleneck_Bps[op.composite]);
    }
    run.last_op[c] = run.schedule.composite(flow, op.size_B, after);
    run.first_op[c] = first;
  }
  // Zones without a parent: SimGrid seals their hosts only when told (see Simulator).
  for (sg4::NetZone* zone : zones) zone->seal();
  for (const auto& [in, out] : q.composites) {
    in->seal();
    out->seal();
  }
  return run;
}

std::vector<OpTiming> expand(const RepresentativeRun& run, const std::vector<OpTiming>& timings) {
  std::vector<OpTiming> out(run.class_of_op.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t c = run.class_of_op[i];
    out[i] = {timings[run.first_op[c]].start_s, timings[run.last_op[c]].finish_s};
  }
  return out;
}

}  // namespace topsim
