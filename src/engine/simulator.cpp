#include "engine/simulator.hpp"

#include <simgrid/s4u.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <functional>

#include "routing/resources.hpp"
#include "util/error.hpp"

namespace sg4 = simgrid::s4u;

namespace topsim {

namespace {

// A delay is an Exec of `delay_s` flops on a host of 1 flop/s. The timer host has so many cores
// that concurrent delays never share one: each runs at full speed, like independent GPU streams.
constexpr double kTimerFlopsPerSecond = 1.0;
constexpr int kTimerCores = 1 << 30;
// Pair routes live in a full zone whose table is quadratic in GPUs: 4096^2 entries is 128 MiB.
constexpr int kMaxPairGpus = 4096;

struct PairRoute {
  double latency_s = 0;
};

struct Platform {
  std::string prefix;
  int gpus = 0;
  std::vector<sg4::Host*> hosts;                    ///< by GPU ordinal
  std::map<std::pair<int, int>, PairRoute> pairs;   ///< declared routes
  std::vector<std::pair<sg4::Host*, sg4::Host*>> composites;
  std::vector<sg4::Host*> timers;  ///< by GPU ordinal: where that GPU's delays run
};

// Maps route hops onto SimGrid links through the ResourceTable (the same mapping the platform
// exporter writes), creating each SimGrid link once. Links carry no latency: the engine adds
// each route's latency itself (latency factor 0).
class ResourceMap {
 public:
  ResourceMap(const Topology& topology, const RouteOptions& options, sg4::NetZone* zone, std::string prefix)
      : table_(topology, options.mode), zone_(zone), prefix_(std::move(prefix)) {}

  void append(const Hop& hop, std::vector<sg4::LinkInRoute>& out) {
    auto use = table_.use(hop);
    if (!use) return;
    while (links_.size() < table_.resources().size()) {
      const Resource& r = table_.resources()[links_.size()];
      sg4::Link* link = nullptr;
      if (r.sharing == Resource::Sharing::split_duplex) {
        link = zone_->create_split_duplex_link(prefix_ + r.name, r.capacity_Bps);
      } else {
        link = zone_->create_link(prefix_ + r.name, r.capacity_Bps);
        link->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
      }
      link->seal();
      links_.push_back(link);
    }
    sg4::Link* link = links_[use->resource];
    if (table_.resources()[use->resource].sharing == Resource::Sharing::split_duplex)
      out.emplace_back(link, use->up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    else
      out.emplace_back(link);
  }

 private:
  ResourceTable table_;
  sg4::NetZone* zone_;
  std::string prefix_;
  std::vector<sg4::Link*> links_;  ///< by resource index
};

}  // namespace

struct Simulator::Impl {
  std::unique_ptr<sg4::Engine> engine;
  std::function<void(const sg4::Activity&)> on_done;  ///< the running schedule's completion handler
  sg4::NetZone* root = nullptr;
  std::vector<Platform> platforms;
  bool sealed = false;
};

Simulator::Simulator() : impl_(std::make_unique<Impl>()) {
  if (sg4::Engine::has_instance())
    throw std::logic_error("Simulator: SimGrid allows one engine per process and one already exists");
  // SimGrid reads --cfg/--log from argv; hand it a controlled one so the CLI's own arguments
  // never reach it, and keep its informational chatter off the user's terminal.
  static char program[] = "topsim";
  static char quiet[] = "--log=root.thresh:critical";
  char* argv[] = {program, quiet, nullptr};
  int argc = 2;
  impl_->engine = std::make_unique<sg4::Engine>(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/latency-factor:0");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/optim:Full");
  impl_->root = sg4::create_full_zone("topsim");
  // SimGrid's completion signal is static and cannot be disconnected: connect once, dispatch to
  // whatever schedule is running.
  sg4::Activity::on_completion_cb([impl = impl_.get()](const sg4::Activity& act) {
    if (impl->on_done) impl->on_done(act);
  });
}

Simulator::~Simulator() = default;

std::size_t Simulator::add_platform(const Topology& topology, const RouteOptions& options, const PlatformNeeds& needs) {
  if (impl_->sealed) throw std::logic_error("Simulator: platforms must all be added before the first run");
  Platform p;
  p.prefix = "p" + std::to_string(impl_->platforms.size()) + ".";
  p.gpus = topology.gpu_count();
  // Two full zones: one for GPU hosts and their pair routes (a table quadratic in GPUs, built
  // only when pairs are declared), one for the timer and the composite flows' end points
  // (quadratic in composites only). Links are shared by both. A Dijkstra zone would be linear
  // but reroutes declared pairs through other hosts' routes when those are shorter.
  sg4::NetZone* flows = sg4::create_full_zone(p.prefix + topology.name() + ".flows");
  flows->set_parent(impl_->root);
  ResourceMap resources(topology, options, flows, p.prefix);
  // One timer host per GPU, in a zone without routes: SimGrid keeps a host's running
  // activities in a list, so a single timer for thousands of concurrent delays is quadratic.
  sg4::NetZone* clocks = sg4::create_empty_zone(p.prefix + topology.name() + ".timers");
  clocks->set_parent(impl_->root);
  for (int g = 0; g < p.gpus; ++g) {
    p.timers.push_back(clocks->create_host(p.prefix + "timer" + std::to_string(g), kTimerFlopsPerSecond));
    p.timers.back()->set_core_count(kTimerCores);
  }
  clocks->seal();

  std::vector<std::pair<int, int>> pairs = needs.pairs;
  if (needs.all_pairs)
    for (int s = 0; s < p.gpus; ++s)
      for (int d = 0; d < p.gpus; ++d)
        if (s != d) pairs.emplace_back(s, d);
  sg4::NetZone* zone = nullptr;
  if (!pairs.empty()) {
    if (p.gpus > kMaxPairGpus)
      throw UsageError("routes between individual GPUs are limited to " + std::to_string(kMaxPairGpus) + " GPUs (" +
                       topology.name() + " has " + std::to_string(p.gpus) +
                       "): use ring algorithms with the flow model at this scale");
    zone = sg4::create_full_zone(p.prefix + topology.name() + ".gpus");
    zone->set_parent(impl_->root);
    for (int g = 0; g < p.gpus; ++g) p.hosts.push_back(zone->create_host(p.prefix + "gpu" + std::to_string(g), 1.0));
  }
  auto check_pair = [&](const std::pair<int, int>& pair) {
    if (pair.first < 0 || pair.second < 0 || pair.first >= p.gpus || pair.second >= p.gpus || pair.first == pair.second)
      throw std::invalid_argument("Simulator: route between invalid GPUs " + std::to_string(pair.first) + " -> " +
                                  std::to_string(pair.second));
  };
  for (const auto& pair : pairs) {
    check_pair(pair);
    if (p.pairs.count(pair) != 0) continue;
    Route route = find_route(topology, pair.first, pair.second, options);
    std::vector<sg4::LinkInRoute> links;
    for (const Hop& hop : route.path.hops) resources.append(hop, links);
    zone->add_route(p.hosts[pair.first]->get_netpoint(), p.hosts[pair.second]->get_netpoint(), nullptr, nullptr, links,
                    false);
    p.pairs[pair] = PairRoute{path_latency_s(topology, route.path)};
  }
  for (std::size_t c = 0; c < needs.composites.size(); ++c) {
    std::vector<sg4::LinkInRoute> links;
    for (const CompositeHop& hop : needs.composites[c].hops) {
      check_pair({hop.src, hop.dst});
      Route route = hop.src_nic >= 0 ? find_route_via(topology, hop.src, hop.src_nic, hop.dst_nic, hop.dst, options)
                                     : find_route(topology, hop.src, hop.dst, options);
      for (const Hop& h : route.path.hops) resources.append(h, links);
    }
    if (auto cap = needs.composites[c].cap_Bps) {
      auto* limit = flows->create_link(p.prefix + "composite" + std::to_string(c) + ".cap", *cap);
      limit->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
      limit->seal();
      links.emplace_back(limit);
    }
    auto* a = flows->create_host(p.prefix + "composite" + std::to_string(c) + ".in", 1.0);
    auto* b = flows->create_host(p.prefix + "composite" + std::to_string(c) + ".out", 1.0);
    flows->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, links, false);
    p.composites.emplace_back(a, b);
  }
  if (zone != nullptr) zone->seal();
  flows->seal();
  impl_->platforms.push_back(std::move(p));
  return impl_->platforms.size() - 1;
}

std::vector<OpTiming> Simulator::run(std::size_t platform, const Schedule& schedule) {
  const Platform& p = impl_->platforms.at(platform);
  auto timer = [&](int gpu) { return p.timers[gpu >= 0 && gpu < p.gpus ? gpu : 0]; };
  auto check_size = [](double size_B) {
    if (!(size_B >= 0) || size_B > static_cast<double>(std::numeric_limits<uint64_t>::max() / 2))
      throw std::invalid_argument("Simulator: transfer size out of range");
    return static_cast<uint64_t>(std::llround(size_B));
  };
  // Validate everything before anything reaches SimGrid.
  std::vector<std::vector<std::size_t>> successors(schedule.ops.size());
  std::vector<std::size_t> waiting(schedule.ops.size(), 0);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& op = schedule.ops[i];
    if (op.kind == Op::Kind::delay && (!(op.delay_s >= 0) || !std::isfinite(op.delay_s)))
      throw std::invalid_argument("Simulator: delay must be finite and >= 0");
    if (op.kind == Op::Kind::transfer && p.pairs.find({op.src_gpu, op.dst_gpu}) == p.pairs.end())
      throw std::invalid_argument("Simulator: no declared route " + std::to_string(op.src_gpu) + " -> " +
                                  std::to_string(op.dst_gpu));
    if (op.kind == Op::Kind::composite && op.composite >= p.composites.size())
      throw std::invalid_argument("Simulator: undeclared composite route");
    if (op.kind != Op::Kind::delay) check_size(op.size_B);
    for (std::size_t before : op.after) {
      if (before >= i) throw std::invalid_argument("Simulator: an op may only wait for earlier ops");
      successors[before].push_back(i);
      ++waiting[i];
    }
  }
  if (!impl_->sealed) {
    impl_->root->seal();
    impl_->sealed = true;
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
    } else {
      const auto& [in, out] = p.composites[op.composite];
      act = sg4::Comm::sendto_init(in, out)->set_payload_size(check_size(op.size_B));
    }
    stage_of[act.get()] = {act, i, stage};
    act->start();
  };
  impl_->on_done = [&](const sg4::Activity& act) {
    auto it = stage_of.find(&act);
    if (it == stage_of.end()) return;
    // Activities completed by earlier callbacks are released now; this one is still in use by
    // SimGrid until its callback returns.
    finished_earlier.clear();
    finished_earlier.push_back(it->second.activity);
    std::size_t i = it->second.op;
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
  impl_->engine->run();
  impl_->on_done = nullptr;
  if (finished != schedule.ops.size())
    throw std::logic_error("Simulator: " + std::to_string(schedule.ops.size() - finished) +
                           " ops did not finish (engine failure)");
  return timings;
}

}  // namespace topsim
