#include "engine/simulator.hpp"

#include <simgrid/s4u.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace sg4 = simgrid::s4u;

namespace topsim {

namespace {

// A delay is an Exec of `delay_s` flops on a host of 1 flop/s. The timer host has so many cores
// that concurrent delays never share one: each runs at full speed, like independent GPU streams.
constexpr double kTimerFlopsPerSecond = 1.0;
constexpr int kTimerCores = 1 << 30;

struct Platform {
  std::string prefix;
  int gpus = 0;
  std::size_t planes = 1;
  std::vector<std::vector<sg4::Host*>> hosts;          ///< [gpu][plane]
  std::vector<std::vector<std::vector<double>>> shares;  ///< [src][dst][plane]
  sg4::Host* timer = nullptr;
};

}  // namespace

struct Simulator::Impl {
  std::unique_ptr<sg4::Engine> engine;
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
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  impl_->root = sg4::create_full_zone("topsim");
}

Simulator::~Simulator() = default;

std::size_t Simulator::add_platform(const Topology& topology, const RouteOptions& options) {
  if (impl_->sealed) throw std::logic_error("Simulator: platforms must all be added before the first run");
  Platform p;
  p.prefix = "p" + std::to_string(impl_->platforms.size()) + ".";
  p.gpus = topology.gpu_count();
  sg4::NetZone* zone = sg4::create_full_zone(p.prefix + topology.name());
  zone->set_parent(impl_->root);

  std::vector<sg4::Link*> links;
  for (const Link& l : topology.links()) {
    auto* link = zone->create_split_duplex_link(p.prefix + "link" + std::to_string(l.index), l.achieved_Bps());
    link->set_latency(l.latency_s);
    link->seal();
    links.push_back(link);
  }
  std::map<std::pair<int, Vertex>, sg4::Link*> device_links;
  auto device_link = [&](const Hop& hop) -> sg4::Link* {
    auto capacity = hop_capacity_Bps(topology, hop);
    if (!capacity) return nullptr;
    auto key = std::make_pair(static_cast<int>(hop.kind), hop.device);
    auto it = device_links.find(key);
    if (it != device_links.end()) return it->second;
    std::string name = p.prefix + topology.device(hop.device).id + "." + std::to_string(static_cast<int>(hop.kind));
    auto* link = zone->create_link(name, *capacity);
    link->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
    link->set_latency(hop_latency_s(topology, hop));
    link->seal();
    device_links[key] = link;
    return link;
  };

  std::vector<std::vector<Route>> routes(p.gpus, std::vector<Route>(p.gpus));
  for (int s = 0; s < p.gpus; ++s)
    for (int d = 0; d < p.gpus; ++d)
      if (s != d) {
        routes[s][d] = find_route(topology, s, d, options);
        p.planes = std::max(p.planes, routes[s][d].paths.size());
      }
  p.hosts.assign(p.gpus, {});
  for (int g = 0; g < p.gpus; ++g)
    for (std::size_t plane = 0; plane < p.planes; ++plane)
      p.hosts[g].push_back(zone->create_host(p.prefix + "gpu" + std::to_string(g) + "." + std::to_string(plane), 1.0));
  p.timer = zone->create_host(p.prefix + "timer", kTimerFlopsPerSecond);
  p.timer->set_core_count(kTimerCores);

  p.shares.assign(p.gpus, std::vector<std::vector<double>>(p.gpus));
  for (int s = 0; s < p.gpus; ++s)
    for (int d = 0; d < p.gpus; ++d) {
      if (s == d) continue;
      const Route& route = routes[s][d];
      for (std::size_t plane = 0; plane < route.paths.size(); ++plane) {
        const Path& path = route.paths[plane];
        std::vector<sg4::LinkInRoute> hops;
        for (const Hop& hop : path.hops) {
          if (hop.kind == Hop::Kind::link) {
            hops.emplace_back(links.at(hop.link), hop.forward ? sg4::LinkInRoute::Direction::UP
                                                              : sg4::LinkInRoute::Direction::DOWN);
          } else if (sg4::Link* link = device_link(hop)) {
            hops.emplace_back(link);
          }
        }
        zone->add_route(p.hosts[s][plane]->get_netpoint(), p.hosts[d][plane]->get_netpoint(), nullptr, nullptr, hops,
                        false);
        p.shares[s][d].push_back(path.share);
      }
    }
  zone->seal();
  impl_->platforms.push_back(std::move(p));
  return impl_->platforms.size() - 1;
}

std::vector<OpTiming> Simulator::run(std::size_t platform, const Schedule& schedule) {
  const Platform& p = impl_->platforms.at(platform);
  if (!impl_->sealed) {
    impl_->root->seal();
    impl_->sealed = true;
  }
  // Each op becomes one Exec (a delay) or one Comm per plane (a transfer). add_successor is only
  // public on the typed activities, hence the two vectors.
  struct OpActivities {
    sg4::ExecPtr exec;
    std::vector<sg4::CommPtr> comms;
    std::vector<sg4::ActivityPtr> all() const {
      std::vector<sg4::ActivityPtr> out(comms.begin(), comms.end());
      if (exec) out.push_back(exec);
      return out;
    }
    void precede(const sg4::ActivityPtr& next) const {
      if (exec) exec->add_successor(next);
      for (const auto& comm : comms) comm->add_successor(next);
    }
  };
  std::vector<OpActivities> acts(schedule.ops.size());
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& op = schedule.ops[i];
    if (op.kind == Op::Kind::delay) {
      if (!(op.delay_s >= 0) || !std::isfinite(op.delay_s))
        throw std::invalid_argument("Simulator: delay must be finite and >= 0");
      acts[i].exec = sg4::Exec::init()->set_flops_amount(op.delay_s * kTimerFlopsPerSecond)->set_host(p.timer);
    } else {
      if (op.src_gpu < 0 || op.dst_gpu < 0 || op.src_gpu >= p.gpus || op.dst_gpu >= p.gpus || op.src_gpu == op.dst_gpu)
        throw std::invalid_argument("Simulator: transfer between invalid GPUs " + std::to_string(op.src_gpu) + " -> " +
                                    std::to_string(op.dst_gpu));
      if (!(op.size_B >= 0) || op.size_B > static_cast<double>(std::numeric_limits<uint64_t>::max() / 2))
        throw std::invalid_argument("Simulator: transfer size out of range");
      const auto& shares = p.shares[op.src_gpu][op.dst_gpu];
      // Split the bytes over the planes; the last plane takes the rounding remainder.
      uint64_t total = static_cast<uint64_t>(std::llround(op.size_B));
      uint64_t assigned = 0;
      for (std::size_t plane = 0; plane < shares.size(); ++plane) {
        uint64_t bytes = plane + 1 == shares.size() ? total - assigned
                                                    : static_cast<uint64_t>(std::llround(shares[plane] * total));
        bytes = std::min(bytes, total - assigned);
        assigned += bytes;
        acts[i].comms.push_back(sg4::Comm::sendto_init(p.hosts[op.src_gpu][plane], p.hosts[op.dst_gpu][plane])
                                    ->set_payload_size(bytes));
      }
    }
    for (std::size_t before : op.after)
      for (const auto& act : acts[i].all()) acts.at(before).precede(act);
  }
  double start = sg4::Engine::get_clock();
  for (const auto& op : acts)
    for (const auto& act : op.all()) act->vetoable_start();
  impl_->engine->run();

  std::vector<OpTiming> timings(schedule.ops.size());
  for (std::size_t i = 0; i < acts.size(); ++i) {
    double first = std::numeric_limits<double>::infinity(), last = 0;
    for (const auto& act : acts[i].all()) {
      if (act->get_state() != sg4::Activity::State::FINISHED)
        throw std::logic_error("Simulator: an activity did not finish (dependency cycle or engine failure)");
      first = std::min(first, act->get_start_time());
      last = std::max(last, act->get_finish_time());
    }
    timings[i] = OpTiming{first - start, last - start};
  }
  return timings;
}

}  // namespace topsim
