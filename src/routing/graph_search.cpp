#include "routing/graph_search.hpp"

#include <deque>
#include <unordered_map>

namespace topsim {

std::optional<std::vector<Edge>> shortest_path(const Topology& topology, Vertex from, Vertex to,
                                               const std::function<bool(const Link&)>& use_link,
                                               const std::function<bool(const Device&)>& may_pass) {
  if (from == to) return std::vector<Edge>{};
  // Breadth-first over the Boost graph's adjacency, with the visited set sized by what the
  // search explores rather than by the graph: routes in a 2048-server cluster touch a handful
  // of its 70 000 devices, and are asked for tens of thousands of times.
  const Graph& g = topology.graph();
  std::unordered_map<Vertex, Edge> predecessor;
  std::deque<Vertex> frontier = {from};
  predecessor.emplace(from, Edge{});
  while (!frontier.empty()) {
    Vertex v = frontier.front();
    frontier.pop_front();
    if (v != from && !may_pass(topology.device(v))) continue;  // an end point: reached, not crossed
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, g))) {
      if (!use_link(topology.link(e))) continue;
      Vertex w = topology.other_end(e, v);
      if (predecessor.count(w) != 0) continue;
      if (w != to && !may_pass(topology.device(w))) continue;
      predecessor.emplace(w, e);
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
