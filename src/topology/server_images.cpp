// Servers built alike (issue 51): which servers of a cluster are translated copies of an earlier
// one. A copy has the same devices and own links in the same order at the same offsets from its
// first vertex and first own link, and the same links leaving it; whatever is found inside the
// model server (a route that stays in it) is then found inside the copy by adding the shifts.
// Linear in the cluster: each server is hashed once and compared in full with at most the
// models sharing its hash.
#include <functional>
#include <string_view>
#include <unordered_map>

#include "topology/topology.hpp"

namespace topsim {

namespace {

// A device's id within its server: "gpu0" of "n3.gpu0"; the whole id outside a cluster.
std::string_view local_id(const Device& d) {
  std::string_view id = d.id;
  if (d.node < 0 || id.empty() || id[0] != 'n') return id;
  std::size_t dot = id.find('.');
  return dot == std::string_view::npos ? id : id.substr(dot + 1);
}

bool same_device(const Device& x, const Device& y) {
  return x.type == y.type && x.model == y.model && x.nccl == y.nccl && x.model_name == y.model_name &&
         x.tier == y.tier && x.island == y.island && x.cores == y.cores && x.numa_node == y.numa_node &&
         x.slowdown == y.slowdown && local_id(x) == local_id(y);
}

bool same_link_values(const Link& x, const Link& y) {
  return x.kind == y.kind && x.model_name == y.model_name && x.count == y.count && x.bandwidth_Bps == y.bandwidth_Bps &&
         x.efficiency == y.efficiency && x.latency_s == y.latency_s && x.lanes == y.lanes;
}

std::size_t mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

}  // namespace

bool Topology::in_server(int node, Vertex v) const {
  if (node < 0 || node >= static_cast<int>(server_ranges_.size())) return false;
  const ServerRange& r = server_ranges_[static_cast<std::size_t>(node)];
  return v >= r.first_vertex && v < r.first_vertex + r.vertices;
}

bool Topology::own_link(int node, std::size_t link) const {
  if (node < 0 || node >= static_cast<int>(server_ranges_.size())) return false;
  const ServerRange& r = server_ranges_[static_cast<std::size_t>(node)];
  return link >= r.first_link && link < r.first_link + r.links;
}

void Topology::find_server_images() {
  const std::size_t servers = server_links_.size();
  server_ranges_.assign(servers, ServerRange{});
  server_images_.assign(servers, ServerImage{});
  // Ranges: first and count of each server's vertices and own links; contiguous or nothing.
  std::vector<std::size_t> last_vertex(servers, 0), last_link(servers, 0);
  std::vector<bool> seen(servers, false), broken(servers, false);
  for (Vertex v : boost::make_iterator_range(boost::vertices(graph_))) {
    int node = graph_[v].node;
    if (node < 0 || node >= static_cast<int>(servers)) continue;
    auto k = static_cast<std::size_t>(node);
    ServerRange& r = server_ranges_[k];
    if (!seen[k]) r.first_vertex = v, seen[k] = true;
    else if (v != last_vertex[k] + 1) broken[k] = true;
    last_vertex[k] = v;
    ++r.vertices;
  }
  std::vector<bool> any_link(servers, false);
  for (const Link& link : links_) {
    int a = graph_[link.a].node, b = graph_[link.b].node;
    if (a != b || a < 0 || a >= static_cast<int>(servers)) continue;
    auto k = static_cast<std::size_t>(a);
    ServerRange& r = server_ranges_[k];
    if (!any_link[k]) r.first_link = link.index, any_link[k] = true;
    else if (link.index != last_link[k] + 1) broken[k] = true;
    last_link[k] = link.index;
    ++r.links;
  }
  // Hash of what same_server compares, so that only servers likely alike are compared in full.
  auto signature = [&](std::size_t k) {
    const ServerRange& r = server_ranges_[k];
    std::size_t h = mix(r.vertices, r.links);
    for (std::size_t i = 0; i < r.vertices; ++i) {
      const Device& d = graph_[r.first_vertex + i];
      h = mix(h, std::hash<std::string_view>{}(local_id(d)));
      h = mix(h, static_cast<std::size_t>(d.type));
    }
    for (std::size_t i = 0; i < r.links; ++i) h = mix(h, std::hash<double>{}(links_[r.first_link + i].bandwidth_Bps));
    h = mix(h, server_links_[k].size());
    for (std::size_t l : server_links_[k]) h = mix(h, std::hash<double>{}(links_[l].bandwidth_Bps));
    return h;
  };
  auto same_server = [&](std::size_t k, std::size_t m) {
    const ServerRange& rk = server_ranges_[k];
    const ServerRange& rm = server_ranges_[m];
    if (rk.vertices != rm.vertices || rk.links != rm.links || server_links_[k].size() != server_links_[m].size()) return false;
    for (std::size_t i = 0; i < rk.vertices; ++i)
      if (!same_device(graph_[rk.first_vertex + i], graph_[rm.first_vertex + i])) return false;
    for (std::size_t i = 0; i < rk.links; ++i) {
      const Link& x = links_[rk.first_link + i];
      const Link& y = links_[rm.first_link + i];
      if (!same_link_values(x, y) || x.a - rk.first_vertex != y.a - rm.first_vertex ||
          x.b - rk.first_vertex != y.b - rm.first_vertex)
        return false;
    }
    // Links leaving the server: the same values, from the same device, to the same kind of device.
    for (std::size_t i = 0; i < server_links_[k].size(); ++i) {
      const Link& x = links_[server_links_[k][i]];
      const Link& y = links_[server_links_[m][i]];
      if (!same_link_values(x, y)) return false;
      bool x_own_a = graph_[x.a].node == static_cast<int>(k), y_own_a = graph_[y.a].node == static_cast<int>(m);
      bool x_own_b = graph_[x.b].node == static_cast<int>(k), y_own_b = graph_[y.b].node == static_cast<int>(m);
      if (x_own_a != y_own_a || x_own_b != y_own_b) return false;
      for (bool a_end : {true, false}) {
        Vertex xv = a_end ? x.a : x.b, yv = a_end ? y.a : y.b;
        bool own = a_end ? x_own_a : x_own_b;
        if (own ? xv - rk.first_vertex != yv - rm.first_vertex
                : graph_[xv].type != graph_[yv].type || graph_[xv].model != graph_[yv].model)
          return false;
      }
    }
    return true;
  };
  std::unordered_multimap<std::size_t, std::size_t> models;  ///< signature -> model server
  for (std::size_t k = 0; k < servers; ++k) {
    server_images_[k].model = static_cast<int>(k);
    if (broken[k] || !seen[k]) {
      server_ranges_[k].vertices = server_ranges_[k].links = 0;
      continue;
    }
    std::size_t h = signature(k);
    bool found = false;
    for (auto [it, end] = models.equal_range(h); it != end && !found; ++it) {
      std::size_t m = it->second;
      if (!same_server(k, m)) continue;
      ServerImage& image = server_images_[k];
      image.model = static_cast<int>(m);
      image.vertex_shift = static_cast<std::ptrdiff_t>(server_ranges_[k].first_vertex) -
                           static_cast<std::ptrdiff_t>(server_ranges_[m].first_vertex);
      image.link_shift = static_cast<std::ptrdiff_t>(server_ranges_[k].first_link) -
                         static_cast<std::ptrdiff_t>(server_ranges_[m].first_link);
      found = true;
    }
    if (!found) models.emplace(h, k);
  }
}

}  // namespace topsim
