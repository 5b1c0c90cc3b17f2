#include "engine/simulator.hpp"

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "engine/distinct_constraints.hpp"
#include "engine/invariants.hpp"
#include "engine/platform.hpp"
#include "routing/resources.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

// Pair routes live in a full zone whose table is quadratic in GPUs: 4096^2 entries is 128 MiB.
constexpr int kMaxPairGpus = 4096;
#ifdef TOPSIM_INVARIANTS
constexpr bool kCheckInvariantsByDefault = true;
#else
constexpr bool kCheckInvariantsByDefault = false;
#endif
// Maps a route table's resources onto SimGrid links (the same mapping the platform exporter
// writes), creating each SimGrid link when a route of this platform first needs it. Links carry
// no latency: the engine adds each route's latency itself (latency factor 0).
class ResourceMap {
 public:
  /// `tracked`: where link directions are listed for link_usage(); nullptr when not tracking.
  ResourceMap(const RouteTable& routes, sg4::NetZone* zone, std::string prefix, std::vector<TrackedLink>* tracked)
      : routes_(routes), zone_(zone), prefix_(std::move(prefix)), tracked_(tracked) {}

  /// With tracking, appends the link direction `use` crosses to `ids` (listing the resource's
  /// directions on its first use by this platform).
  void track(const ResourceUse& use, LinkIds* ids) {
    if (ids == nullptr || tracked_ == nullptr || !split(use)) return;
    if (first_id_.size() <= use.resource) first_id_.resize(use.resource + 1, kUntracked);
    std::uint32_t& first = first_id_[use.resource];
    if (first == kUntracked) {
      // Entry first is the UP direction (the resource's lowest-indexed link forward), the next DOWN.
      const Resource& r = routes_.resources()[use.resource];
      first = static_cast<std::uint32_t>(tracked_->size());
      ConstraintKey up = static_cast<ConstraintKey>(use.resource * 2);
      tracked_->push_back({routes_.name(up), r.capacity_Bps, r.links.front() * 2});
      tracked_->push_back({routes_.name(up + 1), r.capacity_Bps, r.links.front() * 2 + 1});
    }
    ids->push_back(first + (use.up ? 0 : 1));
  }

  /// The SimGrid link (and direction) of a resource use, created on first call.
  sg4::LinkInRoute link(const ResourceUse& use) {
    if (links_.size() <= use.resource) links_.resize(use.resource + 1, nullptr);
    sg4::Link*& link = links_[use.resource];
    const Resource& r = routes_.resources()[use.resource];
    if (link == nullptr) {
      if (r.sharing == Resource::Sharing::split_duplex) {
        link = zone_->create_split_duplex_link(prefix_ + r.name, r.capacity_Bps);
      } else {
        link = zone_->create_link(prefix_ + r.name, r.capacity_Bps);
        link->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
      }
      link->seal();
    }
    if (!split(use)) return sg4::LinkInRoute(link);
    return sg4::LinkInRoute(link, use.up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
  }

 private:
  static constexpr std::uint32_t kUntracked = UINT32_MAX;
  bool split(const ResourceUse& use) const {
    return routes_.resources()[use.resource].sharing == Resource::Sharing::split_duplex;
  }

  const RouteTable& routes_;
  sg4::NetZone* zone_;
  std::string prefix_;
  std::vector<sg4::Link*> links_;  ///< by resource index; nullptr until a route needs it
  std::vector<TrackedLink>* tracked_;
  std::vector<std::uint32_t> first_id_;  ///< by resource index: its UP direction in tracked_
};

// SimGrid has one engine per process, and a destroyed engine cannot be made again (a second
// one aborts inside SimGrid). So the engine is made on first use and never destroyed. The first
// Simulator builds its platforms under the engine's root zone; that zone is sealed at its first
// run and then takes no children, so every later Simulator builds in a root zone of its own
// with no parent: it takes the engine root's models (network, CPU, host, disk), and its hosts
// route inside it alone.
struct ProcessEngine {
  sg4::Engine* engine = nullptr;  ///< never deleted: SimGrid cannot make another
  sg4::NetZone* root = nullptr;   ///< the engine's root zone; only lends its models
  int simulators = 0;             ///< Simulators made so far: names their platforms apart
  TimerPool timers;               ///< every platform's and representative run's timers
  bool root_taken = false;        ///< the first Simulator builds in the engine's root zone
  /// The running schedule's completion handler. SimGrid's completion signal is static and
  /// cannot be disconnected: it is connected once and dispatches to the run in progress.
  std::function<void(const sg4::Activity&)> on_done;
};

// A function-local static, not a global: only engine code can reach it, and it is made when a
// Simulator first needs it.
ProcessEngine& process_engine() {
  static ProcessEngine* shared = [] {
    auto* made = new ProcessEngine;
    // SimGrid reads --cfg/--log from argv; hand it a controlled one so the CLI's own arguments
    // never reach it, and keep its informational chatter off the user's terminal.
    static char program[] = "topsim";
    static char quiet[] = "--log=root.thresh:critical";
    char* argv[] = {program, quiet, nullptr};
    int argc = 2;
    made->engine = new sg4::Engine(&argc, argv);
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:0");
    sg4::Engine::set_config("network/weight-S:0");
    sg4::Engine::set_config("network/latency-factor:0");
    sg4::Engine::set_config("network/bandwidth-factor:1");
    sg4::Engine::set_config("network/optim:Full");
    made->root = sg4::create_full_zone("topsim");
    sg4::Activity::on_completion_cb([made](const sg4::Activity& act) {
      if (made->on_done) made->on_done(act);
    });
    return made;
  }();
  return *shared;
}

}  // namespace

struct Simulator::Impl {
  ProcessEngine* shared = nullptr;
  std::string prefix;  ///< "" for the process's first Simulator, "sN." after: SimGrid names are global
  sg4::NetZone* root = nullptr;
  bool own_root = false;  ///< a parentless zone (not the engine's root): its hosts are sealed here
  std::vector<Platform> platforms;
  bool sealed = false;

  bool track = false;
  bool check = kCheckInvariantsByDefault;
  bool reduce = true;  ///< give SimGrid only the constraints that can bind (distinct_constraints.hpp)
  std::size_t last_platform = 0;
  double last_duration_s = -1;  ///< < 0 before the first run
  std::vector<Segment> segments;
  bool represent = true;  ///< simulate one representative per class of identical work (representatives.hpp)
  std::size_t representative_runs = 0;  ///< names each representative run's SimGrid resources apart
  std::size_t simulated_ops = 0;        ///< by the most recent run

  static constexpr std::size_t kNoPlatform = SIZE_MAX;  ///< execute() of a representative run
  /// Runs `schedule` (checked) on `p`; `platform` is p's index, or kNoPlatform.
  std::vector<OpTiming> execute(const Platform& p, const Schedule& schedule, std::size_t platform);
};

Simulator::Simulator() : impl_(std::make_unique<Impl>()) {
  ProcessEngine& shared = process_engine();
  impl_->shared = &shared;
  int index = shared.simulators++;
  impl_->prefix = index == 0 ? "" : "s" + std::to_string(index) + ".";
  if (!shared.root_taken) {
    // The common case, one Simulator per command: its platforms under the engine's root zone,
    // where SimGrid seals and routes them itself (the fastest shape, and the one it tests).
    shared.root_taken = true;
    impl_->root = shared.root;
    return;
  }
  impl_->root = sg4::create_full_zone(impl_->prefix + "topsim.platforms");
  impl_->own_root = true;
  lend_models(impl_->root, shared.root);
}

Simulator::~Simulator() = default;

std::size_t Simulator::add_platform(const Topology& topology, const RouteOptions& options, const PlatformNeeds& needs) {
  if (impl_->sealed) throw std::logic_error("Simulator: platforms must all be added before the first run");
  Platform p;
  p.prefix = impl_->prefix + "p" + std::to_string(impl_->platforms.size()) + ".";
  p.tracked = impl_->track || impl_->check;
  p.gpus = topology.gpu_count();
  // Full zones: one for GPU hosts and their pair routes (a table quadratic in GPUs, built only
  // when pairs are declared), one holding the links, and the composite flows' end points
  // kFlowsPerZone to a zone. Links are shared by all. A Dijkstra zone would be linear but
  // reroutes declared pairs through other hosts' routes when those are shorter.
  sg4::NetZone* flows = sg4::create_full_zone(p.prefix + topology.name() + ".flows");
  flows->set_parent(impl_->root);
  std::vector<sg4::NetZone*> ends;  ///< the composites' end points (flow_zone)
  const auto under_root = [this](sg4::NetZone* zone) { zone->set_parent(impl_->root); };
  // A communicator's table when it serves this platform: its routes are not found again.
  std::shared_ptr<RouteTable> table = needs.routes;
  if (table == nullptr || !table->serves(topology, options)) table = std::make_shared<RouteTable>(topology, options);
  p.table = table;
  ResourceMap resources(*table, flows, p.prefix, p.tracked ? &p.links : nullptr);

  std::vector<std::pair<int, int>> pairs = needs.pairs;
  if (needs.all_pairs)
    for (int s = 0; s < p.gpus; ++s)
      for (int d = 0; d < p.gpus; ++d)
        if (s != d) pairs.emplace_back(s, d);
  sg4::NetZone* zone = nullptr;
  if (!pairs.empty()) {
    // Hosts only for the GPUs that pair routes join: the full zone's table is quadratic in them.
    std::vector<bool> joined(static_cast<std::size_t>(p.gpus), false);
    int count = 0;
    for (const auto& pair : pairs)
      for (int g : {pair.first, pair.second})
        if (g >= 0 && g < p.gpus && !joined[static_cast<std::size_t>(g)]) {
          joined[static_cast<std::size_t>(g)] = true;
          ++count;
        }
    if (count > kMaxPairGpus)
      throw UsageError("routes between individual GPUs are limited to " + std::to_string(kMaxPairGpus) + " GPUs (" +
                       topology.name() + " needs them for " + std::to_string(count) +
                       "): use ring algorithms with the flow model at this scale");
    zone = sg4::create_full_zone(p.prefix + topology.name() + ".gpus");
    zone->set_parent(impl_->root);
    p.hosts.assign(static_cast<std::size_t>(p.gpus), nullptr);
    for (int g = 0; g < p.gpus; ++g)
      if (joined[static_cast<std::size_t>(g)])
        p.hosts[static_cast<std::size_t>(g)] = zone->create_host(p.prefix + "gpu" + std::to_string(g), 1.0);
  }
  auto check_pair = [&](const std::pair<int, int>& pair) {
    if (pair.first < 0 || pair.second < 0 || pair.first >= p.gpus || pair.second >= p.gpus || pair.first == pair.second)
      throw std::invalid_argument("Simulator: route between invalid GPUs " + std::to_string(pair.first) + " -> " +
                                  std::to_string(pair.second));
  };
  std::vector<bool> pinned;  ///< by constraint key: loaded by a pair route, kept whatever composites do
  for (const auto& pair : pairs) {
    check_pair(pair);
    if (p.pairs.count(pair) != 0) continue;
    const RouteTable::Entry& route = table->route(pair.first, pair.second);
    std::vector<sg4::LinkInRoute> links;
    LinkIds* ids = p.tracked ? &p.pair_links[pair] : nullptr;
    PairRoute& pair_route = p.pairs[pair];
    for (const ResourceUse& u : route.uses) {
      resources.track(u, ids);
      links.push_back(resources.link(u));
      ConstraintKey key = table->key(u);
      if (pinned.size() <= key) pinned.resize(key + 1, false);
      pinned[key] = true;
      pair_route.keys.push_back(key);
    }
    zone->add_route(p.hosts[pair.first]->get_netpoint(), p.hosts[pair.second]->get_netpoint(), nullptr, nullptr, links,
                    false);
    pair_route.latency_s = route.latency_s;
    pair_route.bottleneck_Bps = route.bottleneck_Bps;
  }
  // Composite flows: every route's resources first, then only the constraints that can bind
  // (distinct_constraints.hpp); pair routes' constraints stay, since any transfer may load them.
  // By composite: the routes of its hops, in order (entries of the table, which outlives this
  // function); their uses are read twice below rather than copied (a tree's composite at
  // 131,072 GPUs crosses a million resources).
  std::vector<std::vector<const RouteTable::Entry*>> routes(needs.composites.size());
  std::vector<std::vector<ConstraintKey>>& keys = p.composite_keys;
  keys.resize(needs.composites.size());
  for (std::size_t c = 0; c < needs.composites.size(); ++c) {
    LinkIds* ids = p.tracked ? &p.composite_links.emplace_back() : nullptr;
    double bottleneck_Bps = needs.composites[c].cap_Bps.value_or(std::numeric_limits<double>::infinity());
    // Routes first, so that the keys are stored at their size (a composite of a tree's chain
    // crosses hundreds of resources; grown by doubling they held up to twice that).
    routes[c].reserve(needs.composites[c].hops.size());
    std::size_t crossed = 0;
    for (const CompositeHop& hop : needs.composites[c].hops) {
      check_pair({hop.src, hop.dst});
      routes[c].push_back(&table->route(hop.src, hop.dst, hop.src_nic, hop.dst_nic));
      crossed += routes[c].back()->uses.size();
    }
    keys[c].reserve(crossed);
    for (const RouteTable::Entry* route : routes[c]) {
      for (const ResourceUse& u : route->uses) {
        resources.track(u, ids);
        keys[c].push_back(table->key(u));
      }
      bottleneck_Bps = std::min(bottleneck_Bps, route->bottleneck_Bps);
    }
    p.composite_bottleneck_Bps.push_back(bottleneck_Bps);
  }
  std::vector<double>& key_capacity_Bps = p.key_capacity_Bps;
  for (const Resource& r : table->resources()) key_capacity_Bps.insert(key_capacity_Bps.end(), 2, r.capacity_Bps);
  pinned.resize(key_capacity_Bps.size(), false);
  std::vector<bool> keep = impl_->reduce ? distinct_constraints(keys, key_capacity_Bps, pinned)
                                         : std::vector<bool>(key_capacity_Bps.size(), true);
  for (std::size_t c = 0; c < needs.composites.size(); ++c) {
    p.composite_cap_Bps.push_back(needs.composites[c].cap_Bps.value_or(0.0));
    std::vector<sg4::LinkInRoute> links;
    std::size_t crossing = 0;  ///< into keys[c], which lists the same uses in the same order
    for (const RouteTable::Entry* route : routes[c])
      for (const ResourceUse& u : route->uses)
        if (keep[keys[c][crossing++]]) links.push_back(resources.link(u));
    if (auto cap = needs.composites[c].cap_Bps) {
      auto* limit = flows->create_link(p.prefix + "composite" + std::to_string(c) + ".cap", *cap);
      limit->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
      limit->seal();
      links.emplace_back(limit);
    }
    sg4::NetZone* zone_c = flow_zone(ends, c, p.prefix + topology.name() + ".ends", under_root);
    auto* a = zone_c->create_host(p.prefix + "composite" + std::to_string(c) + ".in", 1.0);
    auto* b = zone_c->create_host(p.prefix + "composite" + std::to_string(c) + ".out", 1.0);
    zone_c->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, links, false);
    p.composites.emplace_back(a, b);
  }
  if (zone != nullptr) zone->seal();
  for (sg4::NetZone* z : ends) z->seal();
  flows->seal();
  // SimGrid seals hosts with the engine's root zone, and this Simulator's zones are not under
  // it (see ProcessEngine): an unsealed host has no CPU constraint and crashes the first Exec.
  if (impl_->own_root) {
    for (sg4::Host* host : p.hosts)
      if (host != nullptr) host->seal();
    for (const auto& [in, out] : p.composites) {
      in->seal();
      out->seal();
    }
  }
  impl_->platforms.push_back(std::move(p));
  return impl_->platforms.size() - 1;
}

namespace {

uint64_t checked_size(double size_B) {
  if (!(size_B >= 0) || size_B > static_cast<double>(std::numeric_limits<uint64_t>::max() / 2))
    throw std::invalid_argument("Simulator: transfer size out of range");
  return static_cast<uint64_t>(std::llround(size_B));
}

// Everything the engine will be asked, checked before anything reaches SimGrid.
void check_schedule(const Platform& p, const Schedule& schedule) {
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& op = schedule.ops[i];
    if (op.kind == Op::Kind::delay && (!(op.delay_s >= 0) || !std::isfinite(op.delay_s)))
      throw std::invalid_argument("Simulator: delay must be finite and >= 0");
    if (op.kind == Op::Kind::transfer && p.pairs.find({op.src_gpu, op.dst_gpu}) == p.pairs.end())
      throw std::invalid_argument("Simulator: no declared route " + std::to_string(op.src_gpu) + " -> " +
                                  std::to_string(op.dst_gpu));
    if (op.kind == Op::Kind::composite && op.composite >= p.composites.size())
      throw std::invalid_argument("Simulator: undeclared composite route");
    if (op.kind != Op::Kind::delay) checked_size(op.size_B);
    for (std::size_t before : op.after)
      if (before >= i) throw std::invalid_argument("Simulator: an op may only wait for earlier ops");
  }
}

}  // namespace

std::vector<OpTiming> Simulator::run(std::size_t platform, const Schedule& schedule) {
  const Platform& p = impl_->platforms.at(platform);
  check_schedule(p, schedule);
  if (!impl_->sealed) {
    impl_->root->seal();
    impl_->sealed = true;
  }
  // Link usage reports every link of the full system; the representative one has a link per
  // class. Everything else (times, the invariants) is the same in both.
  if (impl_->represent && !impl_->track) {
    std::string prefix = impl_->prefix + "r" + std::to_string(impl_->representative_runs++) + ".";
    if (auto reduced = representative_run(p, schedule, prefix, impl_->shared->root, impl_->check)) {
      impl_->simulated_ops = reduced->schedule.ops.size();
      return expand(*reduced, impl_->execute(reduced->platform, reduced->schedule, Impl::kNoPlatform));
    }
  }
  impl_->simulated_ops = schedule.ops.size();
  return impl_->execute(p, schedule, platform);
}

std::vector<OpTiming> Simulator::Impl::execute(const Platform& p, const Schedule& schedule, std::size_t platform) {
  // One timer host per GPU, made for the GPUs this schedule delays (the process's pool):
  // SimGrid keeps a host's running activities in a list, so a single timer for thousands of
  // concurrent delays is quadratic.
  auto timer_index = [&](int gpu) { return static_cast<std::size_t>(gpu >= 0 && gpu < p.gpus ? gpu : 0); };
  std::size_t timers = 1;
  for (const Op& op : schedule.ops) timers = std::max(timers, timer_index(op.src_gpu) + 1);
  shared->timers.reserve(timers, shared->root);
  auto timer = [&](int gpu) { return shared->timers.at(timer_index(gpu)); };
  auto check_size = checked_size;
  std::vector<std::vector<std::size_t>> successors(schedule.ops.size());
  std::vector<std::size_t> waiting(schedule.ops.size(), 0);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i)
    for (std::size_t before : schedule.ops[i].after) {
      successors[before].push_back(i);
      ++waiting[i];
    }
  // Ops are created only when their last dependency finishes: SimGrid scans the activities it
  // holds on every completion, so handing it a whole DAG up front is quadratic in its size.
  // A transfer is two stages, its route latency (an Exec on the sender's timer) then its bytes.
  double start = sg4::Engine::get_clock();
  std::vector<OpTiming> timings(schedule.ops.size());
  struct Stage {
    sg4::ActivityPtr activity;  ///< keeps it alive until SimGrid is done with it
    std::size_t op;
    int stage;
  };
  std::unordered_map<const sg4::Activity*, Stage> stage_of;
  // With tracking: flows in flight, the links they cross and their bytes still to move when the
  // last event happened. Rates are constant between events, so what a flow moved since then
  // moved evenly over that interval.
  // Keyed by op index, not by activity address: sample() appends segments in this map's order
  // and link_usage() sums them in floating point, so an address-ordered map made the figures
  // depend on where the allocator put each activity (run to run, with ASLR).
  struct Moving {
    const sg4::Activity* activity;
    const LinkIds* links;
    double remaining_B;
  };
  std::map<std::size_t, Moving> moving;  ///< by op index: a fixed order, so sums are reproducible
  double last_event_s = 0;
  const bool tracking = p.tracked;
  std::vector<double> moved_B(tracking ? schedule.ops.size() : 0, 0.0);
  if (tracking) {
    segments.clear();
    if (platform != kNoPlatform) last_platform = platform;
  }
  auto sample = [&](const sg4::Activity* done, double now_s) {
    for (auto& [op, m] : moving) {
      double remaining = m.activity == done ? 0.0 : m.activity->get_remaining();
      if (m.remaining_B - remaining > 0) {
        segments.push_back({last_event_s, now_s, m.links, m.remaining_B - remaining});
        moved_B[op] += m.remaining_B - remaining;
      }
      m.remaining_B = remaining;
    }
    last_event_s = now_s;
  };
  std::size_t finished = 0;
  std::vector<sg4::ActivityPtr> finished_earlier;
  std::function<void(std::size_t, int)> launch = [&](std::size_t i, int stage) {
    const Op& op = schedule.ops[i];
    if (stage == 0) timings[i].start_s = sg4::Engine::get_clock() - start;
    sg4::ActivityPtr act;
    if (op.kind == Op::Kind::delay) {
      act = sg4::Exec::init()->set_flops_amount(op.delay_s * kTimerFlopsPerSecond)->set_host(timer(op.src_gpu));
    } else if (op.kind == Op::Kind::transfer && stage == 0 && op.route_latency) {
      double latency = p.pairs.at({op.src_gpu, op.dst_gpu}).latency_s;
      act = sg4::Exec::init()->set_flops_amount(latency * kTimerFlopsPerSecond)->set_host(timer(op.src_gpu));
    } else if (op.kind == Op::Kind::transfer) {
      stage = 1;
      act = sg4::Comm::sendto_init(p.hosts[op.src_gpu], p.hosts[op.dst_gpu])->set_payload_size(check_size(op.size_B));
      if (tracking) moving[i] = {act.get(), &p.pair_links.at({op.src_gpu, op.dst_gpu}), static_cast<double>(check_size(op.size_B))};
    } else {
      const auto& [in, out] = p.composites[op.composite];
      act = sg4::Comm::sendto_init(in, out)->set_payload_size(check_size(op.size_B));
      if (tracking) moving[i] = {act.get(), &p.composite_links[op.composite], static_cast<double>(check_size(op.size_B))};
    }
    stage_of[act.get()] = {act, i, stage};
    act->start();
  };
  shared->on_done = [&](const sg4::Activity& act) {
    auto it = stage_of.find(&act);
    if (it == stage_of.end()) return;
    // Activities completed by earlier callbacks are released now; this one is still in use by
    // SimGrid until its callback returns.
    finished_earlier.clear();
    finished_earlier.push_back(it->second.activity);
    std::size_t i = it->second.op;
    if (tracking) {
      sample(&act, sg4::Engine::get_clock() - start);
      moving.erase(it->second.op);
    }
    int stage = it->second.stage;
    stage_of.erase(it);
    const Op& op = schedule.ops[i];
    if (op.kind == Op::Kind::transfer && stage == 0) {
      launch(i, 1);
      return;
    }
    timings[i].finish_s = sg4::Engine::get_clock() - start;
    ++finished;
    for (std::size_t next : successors[i])
      if (--waiting[next] == 0) launch(next, 0);
  };
  for (std::size_t i = 0; i < schedule.ops.size(); ++i)
    if (waiting[i] == 0) launch(i, 0);
  shared->engine->run();
  shared->on_done = nullptr;
  if (finished != schedule.ops.size())
    throw std::logic_error("Simulator: " + std::to_string(schedule.ops.size() - finished) +
                           " ops did not finish (engine failure)");
  if (tracking) {
    last_duration_s = 0;
    for (const OpTiming& t : timings) last_duration_s = std::max(last_duration_s, t.finish_s);
  }
  if (check) check_run(p, segments, schedule, timings, moved_B);
  return timings;
}

void Simulator::check_invariants(bool on) { impl_->check = on; }

void Simulator::reduce_identical(bool on) { impl_->reduce = on; }

void Simulator::represent_identical(bool on) { impl_->represent = on; }

std::size_t Simulator::simulated_ops() const { return impl_->simulated_ops; }


void Simulator::track_links() { impl_->track = true; }

LinkUsage Simulator::link_usage(int bins) const {
  if (!impl_->track) throw std::logic_error("Simulator: link_usage() without track_links()");
  if (impl_->last_duration_s < 0) throw std::logic_error("Simulator: link_usage() before any tracked run");
  if (bins < 1) throw std::invalid_argument("Simulator: link_usage() needs at least one bin");
  const Platform& p = impl_->platforms.at(impl_->last_platform);
  LinkUsage usage;
  usage.duration_s = impl_->last_duration_s;
  usage.bin_s = usage.duration_s / bins;
  const std::size_t n = p.links.size();
  std::vector<double> bytes(n * static_cast<std::size_t>(bins), 0.0), total(n, 0.0);
  auto bin_of = [&](double t_s) {
    if (!(usage.bin_s > 0)) return 0;
    return std::clamp(static_cast<int>(t_s / usage.bin_s), 0, bins - 1);
  };
  for (const auto& seg : impl_->segments) {
    // Spread evenly over the segment's interval, bin by bin.
    double length = seg.end_s - seg.start_s;
    for (int b = bin_of(seg.start_s); b <= bin_of(seg.end_s); ++b) {
      double share = 1;
      if (length > 0) {
        double lo = std::max(seg.start_s, b * usage.bin_s);
        double hi = b == bins - 1 ? seg.end_s : std::min(seg.end_s, (b + 1) * usage.bin_s);
        share = std::max(0.0, hi - lo) / length;
      } else if (b != bin_of(seg.start_s)) {
        break;
      }
      for (std::uint32_t id : *seg.links) bytes[id * static_cast<std::size_t>(bins) + b] += seg.bytes_B * share;
    }
    for (std::uint32_t id : *seg.links) total[id] += seg.bytes_B;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p.links[a].order < p.links[b].order; });
  for (std::size_t i : order) {
    LinkLoad load;
    load.link = p.links[i].name;
    load.capacity_Bps = p.links[i].capacity_Bps;
    load.bytes_B = total[i];
    for (int b = 0; b < bins; ++b) {
      double capacity_B = load.capacity_Bps * usage.bin_s;
      load.utilisation.push_back(capacity_B > 0 ? bytes[i * static_cast<std::size_t>(bins) + b] / capacity_B : 0.0);
    }
    usage.links.push_back(std::move(load));
  }
  return usage;
}

}  // namespace topsim
