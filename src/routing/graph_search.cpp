#include "routing/graph_search.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <boost/container/small_vector.hpp>

namespace topsim {

namespace {

// Each reached vertex's predecessor edge. Routes inside a server reach a handful of vertices
// and a cluster asks for millions of them, so the first few live in a flat array scanned
// linearly (no allocation per vertex); a search that reaches more (a fabric without a tree)
// moves them into a hash map.
class Predecessors {
 public:
  bool has(Vertex v) const {
    if (!map_.empty()) return map_.count(v) != 0;
    for (const auto& entry : flat_)
      if (entry.first == v) return true;
    return false;
  }
  void add(Vertex v, Edge e) {
    if (map_.empty() && flat_.size() < kFlat) {
      flat_.emplace_back(v, e);
      return;
    }
    if (map_.empty()) map_.insert(flat_.begin(), flat_.end());
    map_.emplace(v, e);
  }
  Edge at(Vertex v) const {
    if (!map_.empty()) return map_.at(v);
    for (const auto& entry : flat_)
      if (entry.first == v) return entry.second;
    throw std::logic_error("shortest_path: a vertex on the path has no predecessor");
  }

 private:
  static constexpr std::size_t kFlat = 32;
  boost::container::small_vector<std::pair<Vertex, Edge>, kFlat> flat_;
  std::unordered_map<Vertex, Edge> map_;
};

}  // namespace

std::optional<std::vector<Edge>> shortest_path(const Topology& topology, Vertex from, Vertex to,
                                               const std::function<bool(const Link&)>& use_link,
                                               const std::function<bool(const Device&)>& may_pass) {
  if (from == to) return std::vector<Edge>{};
  // Breadth-first over the Boost graph's adjacency, with the visited set sized by what the
  // search explores rather than by the graph: routes in a 2048-server cluster touch a handful
  // of its 70 000 devices, and are asked for tens of thousands of times.
  const Graph& g = topology.graph();
  Predecessors predecessor;
  boost::container::small_vector<Vertex, 16> frontier = {from};
  predecessor.add(from, Edge{});
  for (std::size_t next = 0; next < frontier.size(); ++next) {
    Vertex v = frontier[next];
    if (v != from && !may_pass(topology.device(v))) continue;  // an end point: reached, not crossed
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, g))) {
      if (!use_link(topology.link(e))) continue;
      Vertex w = topology.other_end(e, v);
      if (predecessor.has(w)) continue;
      if (w != to && !may_pass(topology.device(w))) continue;
      predecessor.add(w, e);
      if (w == to) {
        std::vector<Edge> path;
        for (Vertex at = to; at != from;) {
          Edge back = predecessor.at(at);
          path.push_back(back);
          at = topology.other_end(back, at);
        }
        std::reverse(path.begin(), path.end());
        return path;
      }
      frontier.push_back(w);
    }
  }
  return std::nullopt;
}

}  // namespace topsim
