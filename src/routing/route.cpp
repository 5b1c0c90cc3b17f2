#include "routing/route.hpp"

#include <limits>
#include <stdexcept>

#include "routing/graph_search.hpp"

namespace topsim {

const char* to_string(RouteKind kind) {
  switch (kind) {
    case RouteKind::nvlink: return "nvlink";
    case RouteKind::pcie_peer: return "pcie";
    case RouteKind::host_staged: return "host";
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
  hop.link = link.index;
  hop.forward = link.a == from;
  return hop;
}

Hop device_hop(Hop::Kind kind, Vertex v) {
  Hop hop;
  hop.kind = kind;
  hop.device = v;
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

std::optional<Route> nvlink_route(const Topology& t, Vertex src, Vertex dst) {
  const Graph& g = t.graph();
  for (Edge e : boost::make_iterator_range(boost::out_edges(src, g))) {
    if (t.link(e).kind == LinkKind::nvlink && t.other_end(e, src) == dst) {
      Route route;
      route.kind = RouteKind::nvlink;
      route.nvlinks = t.link(e).count;
      route.paths.push_back(Path{1.0, {link_hop(t, e, src)}});
      return route;
    }
  }
  // Through NVSwitches: the source stripes its bytes evenly over all its NVLinks, so each switch
  // plane carries the share of the source's links that enter it.
  Route route;
  route.kind = RouteKind::nvlink;
  auto switches_only = [](const Device& d) { return d.type == DeviceType::nvswitch; };
  for (Edge first : boost::make_iterator_range(boost::out_edges(src, g))) {
    Vertex plane = t.other_end(first, src);
    if (t.link(first).kind != LinkKind::nvlink || t.device(plane).type != DeviceType::nvswitch) continue;
    auto rest = shortest_path(t, plane, dst, nvlink_only, switches_only);
    if (!rest) continue;
    Path path;
    path.share = t.link(first).count;
    path.hops.push_back(link_hop(t, first, src));
    path.hops.push_back(device_hop(Hop::Kind::crossbar, plane));
    append_walk(t, plane, *rest, path.hops);
    route.nvlinks += t.link(first).count;
    route.paths.push_back(std::move(path));
  }
  if (route.paths.empty()) return std::nullopt;
  for (Path& path : route.paths) path.share /= route.nvlinks;
  return route;
}

std::optional<Route> pcie_peer_route(const Topology& t, Vertex src, Vertex dst) {
  // Peer-to-peer over PCIe stays inside one socket: CUDA does not enable it across QPI/UPI.
  auto fabric = [](const Device& d) { return d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu; };
  auto edges = shortest_path(t, src, dst, pcie_only, fabric);
  if (!edges) return std::nullopt;
  Route route;
  route.kind = RouteKind::pcie_peer;
  Path path;
  append_walk(t, src, *edges, path.hops);
  route.paths.push_back(std::move(path));
  return route;
}

Route staged_route(const Topology& t, Vertex src, Vertex dst) {
  // GPU -> PCIe -> memory of the source's socket -> (socket links) -> PCIe -> GPU, with the
  // staging pipelines of both GPUs. One flow: the driver pipelines the two copies in chunks.
  Vertex src_cpu = t.local_cpu(src);
  Vertex dst_cpu = t.local_cpu(dst);
  auto fabric = [](const Device& d) { return d.type == DeviceType::pcie_switch; };
  auto cpus = [](const Device& d) { return d.type == DeviceType::cpu; };
  auto up = shortest_path(t, src, src_cpu, pcie_only, fabric);
  auto across = shortest_path(t, src_cpu, dst_cpu, between_cpus, cpus);
  auto down = shortest_path(t, dst_cpu, dst, pcie_only, fabric);
  if (!up || !across || !down)
    throw std::logic_error("no host path between " + t.device(src).id + " and " + t.device(dst).id +
                           "; Topology::build should have rejected this topology");
  Path path;
  path.hops.push_back(device_hop(Hop::Kind::staging, src));
  append_walk(t, src, *up, path.hops);
  path.hops.push_back(device_hop(Hop::Kind::host_memory, src_cpu));
  Vertex at = append_walk(t, src_cpu, *across, path.hops);
  if (at != src_cpu) path.hops.push_back(device_hop(Hop::Kind::crossbar, at));
  append_walk(t, dst_cpu, *down, path.hops);
  path.hops.push_back(device_hop(Hop::Kind::staging, dst));
  Route route;
  route.kind = RouteKind::host_staged;
  route.paths.push_back(std::move(path));
  return route;
}

}  // namespace

Route find_route(const Topology& t, int src_gpu, int dst_gpu, const RouteOptions& options) {
  if (src_gpu == dst_gpu) throw std::invalid_argument("find_route: source and destination are the same GPU");
  Vertex src = t.gpu(src_gpu);
  Vertex dst = t.gpu(dst_gpu);
  std::optional<Route> route;
  if (options.peer_access) {
    route = nvlink_route(t, src, dst);
    if (!route && t.gpu_model(src_gpu).peer_over_pcie && t.gpu_model(dst_gpu).peer_over_pcie)
      route = pcie_peer_route(t, src, dst);
  }
  if (!route) route = staged_route(t, src, dst);
  if (options.copy_engine) {
    for (Path& path : route->paths) {
      path.hops.insert(path.hops.begin(), device_hop(Hop::Kind::copy_engine, src));
      path.hops.push_back(device_hop(Hop::Kind::copy_engine, dst));
    }
  }
  return *route;
}

std::optional<double> hop_capacity_Bps(const Topology& t, const Hop& hop) {
  switch (hop.kind) {
    case Hop::Kind::link: return t.link(hop.link).achieved_Bps();
    case Hop::Kind::crossbar: {
      // A non-blocking crossbar moves at most what all its ports bring in; never the bottleneck
      // unless the topology is wired beyond its ports, but it keeps the resource finite.
      double total = 0;
      for (Edge e : boost::make_iterator_range(boost::out_edges(hop.device, t.graph()))) total += t.link(e).line_rate_Bps();
      return total;
    }
    case Hop::Kind::host_memory:
      // Staged bytes cross DRAM twice: written by the first copy, read by the second.
      return t.device(hop.device).cpu().memory_Bps / 2;
    case Hop::Kind::copy_engine: return t.device(hop.device).gpu().copy.bidirectional_Bps;
    case Hop::Kind::staging: return t.device(hop.device).gpu().copy.staging_Bps;
  }
  return std::nullopt;
}

double hop_latency_s(const Topology& t, const Hop& hop) {
  switch (hop.kind) {
    case Hop::Kind::link: return t.link(hop.link).latency_s;
    case Hop::Kind::crossbar: {
      const Device& d = t.device(hop.device);
      return d.type == DeviceType::cpu ? d.cpu().latency_s : d.switch_model().latency_s;
    }
    case Hop::Kind::host_memory: return t.device(hop.device).cpu().latency_s;
    case Hop::Kind::copy_engine:
    case Hop::Kind::staging: return 0;
  }
  return 0;
}

double path_latency_s(const Topology& t, const Path& path) {
  double total = 0;
  for (const Hop& hop : path.hops) total += hop_latency_s(t, hop);
  return total;
}

double path_bandwidth_Bps(const Topology& t, const Path& path) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (const Hop& hop : path.hops)
    if (auto capacity = hop_capacity_Bps(t, hop)) narrowest = std::min(narrowest, *capacity);
  return narrowest;
}

std::string describe(const Topology& t, const Path& path) {
  std::string text;
  for (const Hop& hop : path.hops) {
    if (!text.empty()) text += " ";
    switch (hop.kind) {
      case Hop::Kind::link: {
        const Link& link = t.link(hop.link);
        const std::string& from = t.device(hop.forward ? link.a : link.b).id;
        const std::string& to = t.device(hop.forward ? link.b : link.a).id;
        text += from + " -" + link.model_name + (link.count > 1 ? "x" + std::to_string(link.count) : "") + "-> " + to;
        break;
      }
      case Hop::Kind::crossbar: text += "[" + t.device(hop.device).id + "]"; break;
      case Hop::Kind::host_memory: text += "[" + t.device(hop.device).id + " memory]"; break;
      case Hop::Kind::copy_engine: text += "[" + t.device(hop.device).id + " copy engines]"; break;
      case Hop::Kind::staging: text += "[" + t.device(hop.device).id + " staging]"; break;
    }
  }
  return text;
}

}  // namespace topsim
