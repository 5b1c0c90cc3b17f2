#include "topology/analysis.hpp"

// Boost 1.74's edge iterators trip GCC 12's -Wmaybe-uninitialized inside the max-flow templates
// (a false positive in boost/graph/detail/adj_list_edge_iterator.hpp), not in topsim's code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/graphviz.hpp>
#include <limits>

namespace topsim {

namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<boost::vertex_index_t, long,
                    boost::property<boost::vertex_color_t, boost::default_color_type,
                                    boost::property<boost::vertex_distance_t, long,
                                                    boost::property<boost::vertex_predecessor_t, FlowTraits::edge_descriptor>>>>,
    boost::property<boost::edge_capacity_t, double,
                    boost::property<boost::edge_residual_capacity_t, double,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

class FlowNetwork {
 public:
  explicit FlowNetwork(std::size_t vertices) : graph_(vertices) {}

  void add_arc(std::size_t from, std::size_t to, double capacity) {
    auto forward = boost::add_edge(from, to, graph_).first;
    auto backward = boost::add_edge(to, from, graph_).first;
    boost::put(boost::edge_capacity, graph_, forward, capacity);
    boost::put(boost::edge_capacity, graph_, backward, 0.0);
    boost::put(boost::edge_reverse, graph_, forward, backward);
    boost::put(boost::edge_reverse, graph_, backward, forward);
  }

  double max_flow(std::size_t source, std::size_t sink) {
    return boost::boykov_kolmogorov_max_flow(graph_, source, sink);
  }

 private:
  FlowGraph graph_;
};

}  // namespace

std::optional<double> bisection_Bps(const Topology& t, bool nvlink_only) {
  int n = t.gpu_count();
  if (n < 2 || n > kMaxExactBisectionGpus) return std::nullopt;
  const Graph& g = t.graph();
  std::size_t devices = boost::num_vertices(g);
  double total = 0;
  for (const Link& link : t.links()) total += 2 * link.line_rate_Bps();
  double unbounded = total + 1;  // more than every link together: never the cut

  double best = std::numeric_limits<double>::infinity();
  int half = n / 2;
  // Splits containing GPU0 on the small side cover every balanced split up to symmetry; with an
  // odd count both orientations are tried because the halves differ in size.
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != half) continue;
    if (n % 2 == 0 && (mask & 1u) == 0) continue;
    FlowNetwork net(devices + 2);
    std::size_t source = devices, sink = devices + 1;
    for (const Link& link : t.links()) {
      if (nvlink_only && link.kind != LinkKind::nvlink) continue;
      net.add_arc(link.a, link.b, link.line_rate_Bps());
      net.add_arc(link.b, link.a, link.line_rate_Bps());
    }
    for (int i = 0; i < n; ++i) {
      if (mask & (1u << i)) net.add_arc(source, t.gpu(i), unbounded);
      else net.add_arc(t.gpu(i), sink, unbounded);
    }
    best = std::min(best, net.max_flow(source, sink));
  }
  return best;
}

void write_dot(std::ostream& out, const Topology& t) {
  const Graph& g = t.graph();
  auto vertex_writer = [&](std::ostream& os, Vertex v) {
    const Device& d = g[v];
    const char* shape = "box";
    switch (d.type) {
      case DeviceType::gpu: shape = "box"; break;
      case DeviceType::nvswitch: shape = "hexagon"; break;
      case DeviceType::pcie_switch: shape = "diamond"; break;
      case DeviceType::cpu: shape = "octagon"; break;
      case DeviceType::nic: shape = "ellipse"; break;
      case DeviceType::network_switch: shape = "doubleoctagon"; break;
    }
    std::string label = d.id + "\\n" + d.model_name;
    if (d.gpu_index >= 0) label = "GPU" + std::to_string(d.gpu_index) + "\\n" + label;
    os << "[label=\"" << label << "\", shape=" << shape << ", type=\"" << to_string(d.type) << "\"]";
  };
  auto edge_writer = [&](std::ostream& os, Edge e) {
    const Link& l = t.link(e);
    const char* style = l.kind == LinkKind::nvlink ? "bold" : l.kind == LinkKind::pcie ? "solid" : "dashed";
    os << "[label=\"" << l.model_name << (l.count > 1 ? " x" + std::to_string(l.count) : std::string()) << "\", style="
       << style << ", kind=\"" << to_string(l.kind) << "\"]";
  };
  auto graph_writer = [&](std::ostream& os) {
    os << "label=\"" << t.name() << "\";\n"
       << "node [fontname=\"Helvetica\"];\n";
  };
  boost::write_graphviz(out, g, vertex_writer, edge_writer, graph_writer);
}

}  // namespace topsim
