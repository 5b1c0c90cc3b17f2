#include "routing/route.hpp"

#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "routing/graph_search.hpp"
#include "routing/network_path.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

const char* to_string(RouteKind kind) {
  switch (kind) {
    case RouteKind::nvlink: return "nvlink";
    case RouteKind::pcie_peer: return "pcie";
    case RouteKind::host_staged: return "host";
    case RouteKind::network: return "net";
  }
  return "?";
}

const char* to_string(PeerReach reach) {
  switch (reach) {
    case PeerReach::nvlink_only: return "NVL";
    case PeerReach::one_switch: return "PIX";
    case PeerReach::switch_tree: return "PXB";
    case PeerReach::socket: return "PHB";
    case PeerReach::system: return "SYS";
  }
  return "?";
}

namespace {

bool is_crossbar(const Device& d) {
  return d.type == DeviceType::nvswitch || d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu;
}

Hop link_hop(const Topology& t, Edge e, Vertex from) {
  const Link& link = t.link(e);
  Hop hop;
  hop.kind = Hop::Kind::link;
  hop.links.push_back(LinkUse{link.index, link.a == from});
  return hop;
}

Hop device_hop(Hop::Kind kind, Vertex v) {
  Hop hop;
  hop.kind = kind;
  hop.devices.push_back(v);
  return hop;
}

// Appends the hops of an edge sequence walked from `from`: each link, and the core of every
// switch or CPU passed through in between (not the ends).
Vertex append_walk(const Topology& t, Vertex from, const std::vector<Edge>& edges, std::vector<Hop>& hops) {
  Vertex at = from;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (i > 0 && is_crossbar(t.device(at))) hops.push_back(device_hop(Hop::Kind::crossbar, at));
    hops.push_back(link_hop(t, edges[i], at));
    at = t.other_end(edges[i], at);
  }
  return at;
}

bool nvlink_only(const Link& l) { return l.kind == LinkKind::nvlink; }
bool pcie_only(const Link& l) { return l.kind == LinkKind::pcie; }
bool between_cpus(const Link& l) { return l.kind == LinkKind::socket || l.kind == LinkKind::numa; }

[[noreturn]] void uneven(const Topology& t, Vertex src, Vertex dst, const std::string& why) {
  throw InputError(t.file(), "/links",
                   "NVSwitch planes between " + t.device(src).id + " and " + t.device(dst).id + " are wired unevenly (" +
                       why + "); topsim models striped planes when every stage splits like the source's links");
}

// The planes' paths merged stage by stage into one path. Valid when every stage carries the
// same fractions as the source's links (what the hardware's striping does); else uneven().
Path bundle_planes(const Topology& t, Vertex src, Vertex dst, const std::vector<Path>& planes) {
  double first_total = 0;
  for (const Path& p : planes) first_total += t.link(p.hops.front().links.front().link).line_rate_Bps();
  Path merged;
  std::size_t stages = planes.front().hops.size();
  for (const Path& p : planes)
    if (p.hops.size() != stages) uneven(t, src, dst, "the planes have paths of different lengths");
  for (std::size_t k = 0; k < stages; ++k) {
    Hop hop;
    hop.kind = planes.front().hops[k].kind;
    double total = 0;
    for (const Path& p : planes) {
      const Hop& h = p.hops[k];
      if (h.kind != hop.kind) uneven(t, src, dst, "the planes differ in the kind of hop at stage " + std::to_string(k));
      hop.links.insert(hop.links.end(), h.links.begin(), h.links.end());
      hop.devices.insert(hop.devices.end(), h.devices.begin(), h.devices.end());
      if (h.kind == Hop::Kind::link) total += t.link(h.links.front().link).line_rate_Bps();
    }
    if (hop.kind == Hop::Kind::link) {
      for (std::size_t p = 0; p < planes.size(); ++p) {
        double share = t.link(planes[p].hops.front().links.front().link).line_rate_Bps() / first_total;
        double stage = t.link(planes[p].hops[k].links.front().link).line_rate_Bps() / total;
        if (std::abs(share - stage) > 1e-9)
          uneven(t, src, dst, "plane " + std::to_string(p) + " carries " + std::to_string(share) + " of the bytes but has " +
                                  std::to_string(stage) + " of the capacity at stage " + std::to_string(k));
      }
      for (std::size_t i = 0; i < hop.links.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (hop.links[i].link == hop.links[j].link) uneven(t, src, dst, "two planes share a link");
    }
    merged.hops.push_back(std::move(hop));
  }
  return merged;
}

std::optional<Route> nvlink_route(const Topology& t, Vertex src, Vertex dst) {
  const Graph& g = t.graph();
  for (Edge e : boost::make_iterator_range(boost::out_edges(src, g))) {
    if (t.link(e).kind == LinkKind::nvlink && t.other_end(e, src) == dst) {
      Route route;
      route.kind = RouteKind::nvlink;
      route.nvlinks = t.link(e).count;
      route.path.hops.push_back(link_hop(t, e, src));
      return route;
    }
  }
  // Through NVSwitches: one path per switch the source has links into (a plane).
  auto switches_only = [](const Device& d) { return d.type == DeviceType::nvswitch; };
  std::vector<Path> planes;
  Route route;
  route.kind = RouteKind::nvlink;
  // The destination's switch planes, in link order: plane p of the source meets plane p of the
  // destination (DGX-2's twin switches, a SuperPOD's matching node switches).
  std::vector<Edge> dst_planes;
  for (Edge last : boost::make_iterator_range(boost::out_edges(dst, g)))
    if (t.link(last).kind == LinkKind::nvlink && t.device(t.other_end(last, dst)).type == DeviceType::nvswitch)
      dst_planes.push_back(last);
  std::size_t index = 0;
  for (Edge first : boost::make_iterator_range(boost::out_edges(src, g))) {
    Vertex plane = t.other_end(first, src);
    if (t.link(first).kind != LinkKind::nvlink || t.device(plane).type != DeviceType::nvswitch) continue;
    std::size_t p = index++;
    std::optional<std::vector<Edge>> rest;
    for (Edge last : dst_planes)  // the destination hangs on this very switch
      if (t.other_end(last, dst) == plane) rest = std::vector<Edge>{last};
    if (!rest && p < dst_planes.size()) {  // else to the matching plane of the destination
      Vertex twin = t.other_end(dst_planes[p], dst);
      if (auto middle = shortest_path(t, plane, twin, nvlink_only, switches_only)) {
        middle->push_back(dst_planes[p]);
        rest = middle;
      }
    }
    if (!rest) rest = shortest_path(t, plane, dst, nvlink_only, switches_only);
    if (!rest) continue;
    Path path;
    path.hops.push_back(link_hop(t, first, src));
    path.hops.push_back(device_hop(Hop::Kind::crossbar, plane));
    append_walk(t, plane, *rest, path.hops);
    route.nvlinks += t.link(first).count;
    planes.push_back(std::move(path));
  }
  if (planes.empty()) return std::nullopt;
  route.planes = static_cast<int>(planes.size());
  if (planes.size() == 1) route.path = std::move(planes.front());
  else route.path = bundle_planes(t, src, dst, planes);
  return route;
}

std::optional<Route> pcie_peer_route(const Topology& t, Vertex src, Vertex dst, PeerReach reach) {
  // switch_tree: through PCIe switches only; socket: also a CPU's root complex; system: also the
  // links between sockets.
  if (reach == PeerReach::nvlink_only) return std::nullopt;
  auto switches = [](const Device& d) { return d.type == DeviceType::pcie_switch; };
  auto fabric = [](const Device& d) { return d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu; };
  auto pcie_or_sockets = [](const Link& l) { return pcie_only(l) || between_cpus(l); };
  bool tree = reach == PeerReach::one_switch || reach == PeerReach::switch_tree;
  auto edges = tree                        ? shortest_path(t, src, dst, pcie_only, switches)
               : reach == PeerReach::socket ? shortest_path(t, src, dst, pcie_only, fabric)
                                            : shortest_path(t, src, dst, pcie_or_sockets, fabric);
  if (!edges || (reach == PeerReach::one_switch && edges->size() > 2)) return std::nullopt;
  Route route;
  route.kind = RouteKind::pcie_peer;
  append_walk(t, src, *edges, route.path.hops);
  return route;
}

Route host_route(const Topology& t, Vertex src, Vertex dst, bool staging, bool at_receiver) {
  // GPU -> PCIe -> memory of one socket -> (socket links) -> PCIe -> GPU: a staged cudaMemcpy
  // pipelines its two copies in chunks through the source socket's memory; NCCL's SHM transport
  // has the sender's SMs write a host buffer the receiver's SMs read, allocated by the receiver
  // (`at_receiver`: NCCL_SHM_LOCALITY's default); either way one flow.
  Vertex src_cpu = t.local_cpu(src);
  Vertex dst_cpu = t.local_cpu(dst);
  auto fabric = [](const Device& d) { return d.type == DeviceType::pcie_switch; };
  auto cpus = [](const Device& d) { return d.type == DeviceType::cpu; };
  auto up = shortest_path(t, src, src_cpu, pcie_only, fabric);
  auto across = shortest_path(t, src_cpu, dst_cpu, between_cpus, cpus);
  auto down = shortest_path(t, dst_cpu, dst, pcie_only, fabric);
  if (!up || !across || !down)
    throw InputError(t.file(), "", "no path through host memory between " + t.device(src).id + " and " +
                                       t.device(dst).id + ": their CPUs are not joined by socket links");
  Route route;
  route.kind = RouteKind::host_staged;
  std::vector<Hop>& hops = route.path.hops;
  if (staging) hops.push_back(device_hop(Hop::Kind::staging, src));
  append_walk(t, src, *up, hops);
  // The socket holding the buffer is a memory hop; the other one passed is a crossbar.
  bool crossing = src_cpu != dst_cpu;
  hops.push_back(device_hop(at_receiver && crossing ? Hop::Kind::crossbar : Hop::Kind::host_memory, src_cpu));
  append_walk(t, src_cpu, *across, hops);
  if (crossing) hops.push_back(device_hop(at_receiver ? Hop::Kind::host_memory : Hop::Kind::crossbar, dst_cpu));
  append_walk(t, dst_cpu, *down, hops);
  if (staging) hops.push_back(device_hop(Hop::Kind::staging, dst));
  return route;
}

// Efficiency of NCCL's kernels on an NVLink: that of the architecture of the GPU at either end;
// for switch-to-switch trunks, the lowest among the topology's GPUs.
double nccl_nvlink_efficiency(const Topology& t, const Link& link) {
  auto of = [&](Vertex v) -> std::optional<double> {
    const Device& d = t.device(v);
    if (d.type != DeviceType::gpu) return std::nullopt;
    if (!d.nccl || !d.nccl->nvlink_efficiency)
      throw InputError(t.file(), d.where.pointer,
                       d.id + " (" + d.model_name + "): models/ has no NCCL NVLink efficiency for architecture '" +
                           d.gpu().architecture + "' (nccl_models." + d.gpu().architecture + ".nvlink_efficiency)");
    return d.nccl->nvlink_efficiency;
  };
  if (auto e = of(link.a)) return *e;
  if (auto e = of(link.b)) return *e;
  if (auto missing = t.gpu_without_nccl_nvlink()) of(*missing);  // throws, naming it
  return t.lowest_nccl_nvlink_efficiency().value_or(1.0);
}

// NCCL's PCIe efficiency, from the architecture of the topology's GPUs (the lowest if mixed);
// the link's own when no NCCL model gives one.
double nccl_pcie_efficiency(const Topology& t, const Link& link) {
  return t.lowest_nccl_pcie_efficiency().value_or(link.efficiency);
}

}  // namespace

int nearest_nic(const Topology& t, int gpu) {
  Vertex from = t.gpu(gpu);
  auto passable = [](const Device& d) { return d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu; };
  auto host_links = [](const Link& l) { return l.kind == LinkKind::pcie || l.kind == LinkKind::socket || l.kind == LinkKind::numa; };
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::vector<int> tied;
  // The server's own NICs (in ordinal order, as t.nics() lists them): linear in the server.
  for (Vertex nic : t.server_nics(t.device(from).node)) {
    auto path = shortest_path(t, from, nic, host_links, passable);
    if (!path) continue;
    if (path->size() < best) {
      best = path->size();
      tied = {t.device(nic).nic_index};
    } else if (path->size() == best) {
      tied.push_back(t.device(nic).nic_index);
    }
  }
  if (tied.empty())
    throw InputError(t.file(), t.device(from).where.pointer, t.device(from).id + " has no NIC in its server to reach other servers");
  return tied[static_cast<std::size_t>(gpu) % tied.size()];
}

int NearestNics::of(int gpu) {
  if (nic_.empty()) nic_.assign(static_cast<std::size_t>(topology_.gpu_count()), -1);
  int& nic = nic_.at(static_cast<std::size_t>(gpu));
  if (nic < 0) nic = nearest_nic(topology_, gpu);
  return nic;
}

void gpu_nic_hops(const Topology& t, Vertex gpu, Vertex nic, bool reverse, bool gpu_direct, std::vector<Hop>& hops) {
  auto fabric = [](const Device& d) { return d.type == DeviceType::pcie_switch; };
  if (gpu_direct)
    if (auto direct = shortest_path(t, reverse ? nic : gpu, reverse ? gpu : nic, pcie_only, fabric)) {
      append_walk(t, reverse ? nic : gpu, *direct, hops);
      return;
    }
  Route bounce = host_route(t, reverse ? nic : gpu, reverse ? gpu : nic, false, false);
  hops.insert(hops.end(), std::make_move_iterator(bounce.path.hops.begin()), std::make_move_iterator(bounce.path.hops.end()));
}

Route find_route_via(const Topology& t, int src_gpu, int src_nic, int dst_nic, int dst_gpu, const RouteOptions& options,
                     const GpuNicHops* segments) {
  Vertex src = t.gpu(src_gpu), dst = t.gpu(dst_gpu);
  Vertex a = t.nics().at(static_cast<std::size_t>(src_nic)), b = t.nics().at(static_cast<std::size_t>(dst_nic));
  Route route;
  route.kind = RouteKind::network;
  std::vector<Hop>& hops = route.path.hops;
  if (options.mode == TransferMode::sm) hops.push_back(device_hop(Hop::Kind::gpu_sm, src));
  if (segments != nullptr) (*segments)(src, a, false, hops);
  else gpu_nic_hops(t, src, a, false, options.gpu_direct, hops);
  append_network(t, a, b, options, hops);
  if (segments != nullptr) (*segments)(dst, b, true, hops);
  else gpu_nic_hops(t, dst, b, true, options.gpu_direct, hops);
  if (options.mode == TransferMode::sm) hops.push_back(device_hop(Hop::Kind::gpu_sm, dst));
  return route;
}

namespace {

// NCCL's PXN: the source's bytes cross NVLink to the GPU of its server beside a NIC on the
// destination NIC's network (rail-only, multi-plane), which sends them. The lowest-ordinal
// such NIC is used; InputError when the server has none or no NVLink reaches its GPU.
Route pxn_route(const Topology& t, int src_gpu, int dst_nic, int dst_gpu, const RouteOptions& options,
                NearestNics& nearest) {
  Vertex src = t.gpu(src_gpu), dst = t.gpu(dst_gpu);
  int island = t.device(t.nics().at(static_cast<std::size_t>(dst_nic))).island;
  auto fail_pxn = [&](const std::string& why) -> Route {
    throw InputError(t.file(), "", t.device(src).id + " cannot reach " + t.device(dst).id + ": their nearest NICs are on "
                                       "separate networks (rail-only or multi-plane fabric) and " + why);
  };
  // A cluster numbers each server's GPUs consecutively: scan the source's neighbours only.
  int first = src_gpu, last = src_gpu;
  while (first > 0 && t.node_of(first - 1) == t.node_of(src_gpu)) --first;
  while (last + 1 < t.gpu_count() && t.node_of(last + 1) == t.node_of(src_gpu)) ++last;
  std::vector<std::string> tried;  // GPUs beside a NIC on that network, without an NVLink from src
  for (Vertex nic : t.server_nics(t.device(src).node)) {
    const Device& n = t.device(nic);
    if (n.island != island) continue;
    for (int proxy = first; proxy <= last; ++proxy) {
      if (nearest.of(proxy) != n.nic_index) continue;
      if (proxy == src_gpu) return find_route_via(t, src_gpu, n.nic_index, dst_nic, dst_gpu, options);
      std::optional<Route> hop = options.peer_access ? nvlink_route(t, src, t.gpu(proxy)) : std::nullopt;
      if (!hop) {
        tried.push_back(t.device(t.gpu(proxy)).id + " (beside " + n.id + ")");
        continue;
      }
      Route via = find_route_via(t, proxy, n.nic_index, dst_nic, dst_gpu, options);
      Route route;
      route.kind = RouteKind::network;
      std::vector<Hop>& hops = route.path.hops;
      if (options.mode == TransferMode::sm) hops.push_back(device_hop(Hop::Kind::gpu_sm, src));
      hops.insert(hops.end(), std::make_move_iterator(hop->path.hops.begin()), std::make_move_iterator(hop->path.hops.end()));
      // The proxy's own SM limit (first hop of `via` in sm mode) applies to what it forwards.
      hops.insert(hops.end(), std::make_move_iterator(via.path.hops.begin()), std::make_move_iterator(via.path.hops.end()));
      return route;
    }
  }
  if (!tried.empty())
    return fail_pxn(std::string(options.peer_access ? "no NVLink joins " : "peer access is off, so no NVLink joins ") +
                    t.device(src).id + " to " + join(tried, " or "));
  return fail_pxn(t.device(src).id + "'s server has no NIC on " + t.device(t.nics().at(static_cast<std::size_t>(dst_nic))).id +
                  "'s network with a GPU beside it");
}

}  // namespace

Route find_route(const Topology& t, int src_gpu, int dst_gpu, const RouteOptions& options, NearestNics* nearest) {
  if (src_gpu == dst_gpu) throw std::invalid_argument("find_route: source and destination are the same GPU");
  Vertex src = t.gpu(src_gpu);
  Vertex dst = t.gpu(dst_gpu);
  std::optional<Route> route;
  if (options.peer_access) {
    route = nvlink_route(t, src, dst);
    if (!route && t.gpu_model(src_gpu).peer_over_pcie && t.gpu_model(dst_gpu).peer_over_pcie)
      route = pcie_peer_route(t, src, dst, options.peer_reach.value_or(PeerReach::socket));
  }
  if (!route && t.node_of(src_gpu) != t.node_of(dst_gpu)) {
    std::optional<NearestNics> own;
    if (nearest == nullptr) nearest = &own.emplace(t);
    int src_nic = nearest->of(src_gpu), dst_nic = nearest->of(dst_gpu);
    if (t.device(t.nics().at(static_cast<std::size_t>(src_nic))).island ==
        t.device(t.nics().at(static_cast<std::size_t>(dst_nic))).island)
      return find_route_via(t, src_gpu, src_nic, dst_nic, dst_gpu, options);
    return pxn_route(t, src_gpu, dst_nic, dst_gpu, options, *nearest);
  }
  if (!route)
    route = host_route(t, src, dst, options.mode == TransferMode::copy_engine, options.mode == TransferMode::sm);
  std::vector<Hop>& hops = route->path.hops;
  if (options.mode == TransferMode::copy_engine) {
    hops.insert(hops.begin(), device_hop(Hop::Kind::copy_engine, src));
    hops.push_back(device_hop(Hop::Kind::copy_engine, dst));
  } else if (options.mode == TransferMode::sm) {
    hops.insert(hops.begin(), device_hop(Hop::Kind::gpu_sm, src));
    hops.push_back(device_hop(Hop::Kind::gpu_sm, dst));
  }
  return std::move(*route);
}

std::optional<double> hop_capacity_Bps(const Topology& t, const Hop& hop, TransferMode mode) {
  auto sum = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b) return std::nullopt;
    return *a + *b;
  };
  std::optional<double> total = 0.0;
  if (hop.kind == Hop::Kind::link) {
    for (const LinkUse& use : hop.links) {
      const Link& link = t.link(use.link);
      double efficiency = link.efficiency;
      if (mode == TransferMode::sm && link.kind == LinkKind::nvlink) efficiency = nccl_nvlink_efficiency(t, link);
      if (mode == TransferMode::sm && link.kind == LinkKind::pcie) efficiency = nccl_pcie_efficiency(t, link);
      total = sum(total, (use.member < 0 ? link.line_rate_Bps() : link.bandwidth_Bps) * efficiency);
    }
    return total;
  }
  for (Vertex v : hop.devices) {
    const Device& d = t.device(v);
    std::optional<double> capacity;
    switch (hop.kind) {
      case Hop::Kind::crossbar: {
        // A non-blocking crossbar moves at most what all its ports bring in: never the bottleneck
        // unless wired beyond its ports, but it keeps the resource finite.
        double ports = 0;
        for (Edge e : boost::make_iterator_range(boost::out_edges(v, t.graph()))) ports += t.link(e).line_rate_Bps();
        capacity = ports;
        break;
      }
      // Bounced bytes cross DRAM twice: written by the first copy, read by the second.
      case Hop::Kind::host_memory: capacity = d.cpu().memory_Bps / 2; break;
      case Hop::Kind::copy_engine: capacity = d.gpu().copy.bidirectional_Bps; break;
      case Hop::Kind::staging: capacity = d.gpu().copy.staging_Bps; break;
      case Hop::Kind::gpu_sm:
        if (d.nccl) capacity = d.nccl->gpu_Bps;
        break;
      case Hop::Kind::link: break;
    }
    total = sum(total, capacity);
  }
  return total;
}

double hop_latency_s(const Topology& t, const Hop& hop) {
  double latency = 0;
  for (const LinkUse& use : hop.links) latency = std::max(latency, t.link(use.link).latency_s);
  if (hop.kind == Hop::Kind::crossbar || hop.kind == Hop::Kind::host_memory) {
    for (Vertex v : hop.devices) {
      const Device& d = t.device(v);
      latency = std::max(latency, d.type == DeviceType::cpu ? d.cpu().latency_s : d.switch_model().latency_s);
    }
  }
  return latency;
}

double path_latency_s(const Topology& t, const Path& path) {
  double total = 0;
  for (const Hop& hop : path.hops) total += hop_latency_s(t, hop);
  return total;
}

double path_bandwidth_Bps(const Topology& t, const Path& path, TransferMode mode) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (const Hop& hop : path.hops)
    if (auto capacity = hop_capacity_Bps(t, hop, mode)) narrowest = std::min(narrowest, *capacity);
  return narrowest;
}

namespace {

// "nvswitch0..5" for ids that differ only in a contiguous numeric suffix, else "a+b+c".
std::string device_set(const Topology& t, const Hop::Devices& devices) {
  std::vector<std::string> ids;
  for (Vertex v : devices) {
    const std::string& id = t.device(v).id;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.size() == 1) return ids.front();
  auto split = [](const std::string& id) {
    std::size_t digits = id.find_last_not_of("0123456789") + 1;
    return std::make_pair(id.substr(0, digits), digits < id.size() ? std::stol(id.substr(digits)) : -1L);
  };
  auto [prefix, first] = split(ids.front());
  bool range = first >= 0;
  for (std::size_t i = 1; i < ids.size() && range; ++i) {
    auto [p, n] = split(ids[i]);
    range = p == prefix && n == first + static_cast<long>(i);
  }
  if (range) return prefix + std::to_string(first) + ".." + std::to_string(first + static_cast<long>(ids.size()) - 1);
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : "+") + id;
  return out;
}

}  // namespace

std::string describe(const Topology& t, const Hop& hop) {
  if (hop.kind == Hop::Kind::link) {
    Hop::Devices from, to;
    int count = 0;
    for (const LinkUse& use : hop.links) {
      const Link& link = t.link(use.link);
      from.push_back(use.forward ? link.a : link.b);
      to.push_back(use.forward ? link.b : link.a);
      count += use.member < 0 ? link.count : 1;
    }
    const std::string& model = t.link(hop.links.front().link).model_name;
    // One member of a bundle (ecmp, adaptive): "#k", the k-th of the link's parallel links.
    int member = hop.links.size() == 1 ? hop.links.front().member : -1;
    std::string which = member >= 0 ? "#" + std::to_string(member) : count > 1 ? "x" + std::to_string(count) : "";
    return device_set(t, from) + " -" + model + which + "-> " + device_set(t, to);
  }
  std::string set = device_set(t, hop.devices);
  switch (hop.kind) {
    case Hop::Kind::crossbar: return "[" + set + "]";
    case Hop::Kind::host_memory: return "[" + set + " memory]";
    case Hop::Kind::copy_engine: return "[" + set + " copy engines]";
    case Hop::Kind::staging: return "[" + set + " staging]";
    case Hop::Kind::gpu_sm: return "[" + set + " SMs]";
    case Hop::Kind::link: break;
  }
  return set;
}

std::string describe(const Topology& t, const Path& path) {
  std::string text;
  for (const Hop& hop : path.hops) text += (text.empty() ? "" : " ") + describe(t, hop);
  return text;
}

}  // namespace topsim
