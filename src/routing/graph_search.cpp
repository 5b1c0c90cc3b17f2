#include "routing/graph_search.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>

namespace topsim {

namespace {

struct LinkFilter {
  const Topology* topology = nullptr;
  const std::function<bool(const Link&)>* accept = nullptr;
  bool operator()(Edge e) const { return (*accept)(topology->link(e)); }
};

struct DeviceFilter {
  const Graph* graph = nullptr;
  const std::function<bool(const Device&)>* accept = nullptr;
  Vertex from = 0, to = 0;
  bool operator()(Vertex v) const { return v == from || v == to || (*accept)((*graph)[v]); }
};

}  // namespace

std::optional<std::vector<Edge>> shortest_path(const Topology& topology, Vertex from, Vertex to,
                                               const std::function<bool(const Link&)>& use_link,
                                               const std::function<bool(const Device&)>& may_pass) {
  if (from == to) return std::vector<Edge>{};
  const Graph& g = topology.graph();
  LinkFilter links{&topology, &use_link};
  DeviceFilter devices{&g, &may_pass, from, to};
  boost::filtered_graph<Graph, LinkFilter, DeviceFilter> view(g, links, devices);

  std::size_t n = boost::num_vertices(g);
  std::vector<Edge> predecessor(n);
  std::vector<bool> reached(n, false);
  std::vector<boost::default_color_type> colors(n);
  auto color_map = boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  struct Recorder : boost::default_bfs_visitor {
    std::vector<Edge>* predecessor;
    std::vector<bool>* reached;
    const Graph* graph;
    void tree_edge(Edge e, const boost::filtered_graph<Graph, LinkFilter, DeviceFilter>& fg) {
      Vertex child = boost::target(e, fg);
      (*predecessor)[child] = e;
      (*reached)[child] = true;
    }
  } recorder;
  recorder.predecessor = &predecessor;
  recorder.reached = &reached;
  recorder.graph = &g;
  boost::breadth_first_search(view, from, boost::visitor(recorder).color_map(color_map));
  if (!reached[to]) return std::nullopt;

  std::vector<Edge> path;
  for (Vertex v = to; v != from;) {
    Edge e = predecessor[v];
    path.push_back(e);
    v = topology.other_end(e, v);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace topsim
