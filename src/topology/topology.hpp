#pragma once
// A validated server topology: devices and links on a Boost.Graph undirected graph.
//
//   GPU ==NVLink== GPU          GPU ==NVLink== NVSwitch ==NVLink== GPU
//    |                            |
//   PCIe -- PCIe switch -- CPU == socket link == CPU -- PCIe switch -- NIC
//
// Pure data plus queries: no routing decisions, no simulation.
#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

struct Device {
  std::string id;
  DeviceType type = DeviceType::gpu;
  std::string model_name;
  /// Shared by every device of one model: a 100,000-GPU cluster holds each model once.
  std::shared_ptr<const std::variant<GpuModel, SwitchModel, CpuModel, NicModel>> model;
  int gpu_index = -1;  ///< CUDA ordinal: order of appearance among GPUs; -1 for other devices
  int nic_index = -1;  ///< NIC ordinal as nvidia-smi numbers them; -1 for other devices
  int node = 0;        ///< server of a cluster it belongs to; -1 for fabric devices
  /// Network switches: hops over network links from the nearest NIC (a leaf is 1, a spine 2);
  /// 0 for every other device. Routing climbs a tree by it.
  int tier = 0;
  /// NICs and network switches: which independent network (connected piece of network links)
  /// the device is on, numbered from 0 in order of the first NIC; -1 for other devices. NICs on
  /// different islands (rail-only, multi-plane) cannot talk over the network.
  int island = -1;
  std::string cores;
  std::optional<int> numa_node;
  /// gpu only: NCCL's behaviour on its architecture, when models/ has it (null otherwise);
  /// shared by the GPUs of one architecture.
  std::shared_ptr<const NcclModel> nccl;
  double slowdown = 1;  ///< gpu only: compute and NCCL kernels take this many times longer (--straggler), >= 1
  SourceRef where;

  const GpuModel& gpu() const { return std::get<GpuModel>(*model); }
  const SwitchModel& switch_model() const { return std::get<SwitchModel>(*model); }
  const CpuModel& cpu() const { return std::get<CpuModel>(*model); }
  const NicModel& nic() const { return std::get<NicModel>(*model); }
};

struct Link {
  std::size_t index = 0;     ///< position in the topology file's links array
  std::string model_name;
  LinkKind kind = LinkKind::nvlink;
  int count = 1;             ///< parallel links, striped as one
  double bandwidth_Bps = 0;  ///< one link, one direction, line rate (override and --degrade applied)
  double efficiency = 1;
  double latency_s = 0;
  int lanes = 0;             ///< PCIe lanes of one link
  std::size_t a = 0;         ///< vertex of the end named "a" in the file; "forward" runs a -> b
  std::size_t b = 0;         ///< vertex of the end named "b"
  SourceRef where;

  /// All parallel links together, one direction, at line rate.
  double line_rate_Bps() const { return count * bandwidth_Bps; }
  /// What bulk transfers achieve over all parallel links, one direction.
  double achieved_Bps() const { return count * bandwidth_Bps * efficiency; }
};

/// The graph's edge property: which Link (by index) the edge is. Links live in a vector beside the
/// graph so that copying a Topology never leaves a pointer into another graph's edge storage.
struct EdgeRef {
  std::size_t link = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Device, EdgeRef>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

/// A Graph that moves: Boost's adjacency_list declares a copy constructor and no move, and its
/// swap() copies three times, so moving a Topology copied its whole graph (a million vertices at
/// 131,072 GPUs). Moving swaps the vertex list, the edge list and the graph property (members
/// Boost leaves public for this); a std::list swap keeps the out-edges' iterators into it valid.
class MovableGraph : public Graph {
 public:
  using Graph::Graph;
  MovableGraph() = default;
  MovableGraph(const MovableGraph&) = default;
  MovableGraph& operator=(const MovableGraph&) = default;
  MovableGraph(MovableGraph&& other) noexcept { take(other); }
  MovableGraph& operator=(MovableGraph&& other) noexcept {
    take(other);
    return *this;
  }
  ~MovableGraph() = default;

 private:
  void take(MovableGraph& other) noexcept {
    m_vertices.swap(other.m_vertices);
    m_edges.swap(other.m_edges);
    m_property.swap(other.m_property);
  }
};

class Topology {
 public:
  /// Resolves models and checks everything a file can get wrong beyond syntax: duplicate ids,
  /// dangling references, link kinds between wrong devices, NVLink generation mismatches, more
  /// NVLinks than a GPU has, ports and lanes over a switch's or CPU's budget, devices without a
  /// path to a CPU. Throws InputError at the offending JSON pointer.
  static Topology build(const TopologySpec& spec, const Catalog& catalog);

  const Graph& graph() const { return graph_; }
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& file() const { return file_; }
  /// The --gpu what-if applied to it, "" for none (topology/gpu_swap.hpp GpuSwap::text()).
  const std::string& gpu_swap() const { return gpu_swap_; }
  /// The name as headers print it: "dgx-a100", or "dgx-a100 with a800 (8 of 12 NVLinks)".
  std::string label() const { return gpu_swap_.empty() ? name_ : name_ + " with " + gpu_swap_; }
  const std::vector<std::string>& sources() const { return sources_; }

  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  int node_count() const { return nodes_; }
  /// Server of a cluster a GPU (by ordinal) belongs to.
  int node_of(int gpu) const { return graph_[gpus_.at(static_cast<std::size_t>(gpu))].node; }
  Vertex gpu(int index) const { return gpus_.at(static_cast<std::size_t>(index)); }
  const std::vector<Vertex>& gpus() const { return gpus_; }
  const std::vector<Vertex>& nics() const { return nics_; }
  const std::vector<Link>& links() const { return links_; }
  std::size_t device_count() const { return boost::num_vertices(graph_); }

  const Device& device(Vertex v) const { return graph_[v]; }
  const Link& link(Edge e) const { return links_[graph_[e].link]; }
  const Link& link(std::size_t index) const { return links_.at(index); }
  /// Indices (ascending) of the links with at least one end in server `node`: a server's own
  /// view of the cluster in time linear in that server, not in the cluster.
  const std::vector<std::size_t>& server_links(int node) const { return server_links_.at(static_cast<std::size_t>(node)); }
  /// NICs of server `node`, in ordinal order.
  const std::vector<Vertex>& server_nics(int node) const { return server_nics_.at(static_cast<std::size_t>(node)); }
  /// A NIC's id within its server: its id after the server's prefix ("mlx5_0" of "n3.mlx5_0").
  std::string_view nic_local_id(Vertex nic) const;
  /// Servers with NICs, counted by the local ids of their NICs (in ordinal order): one entry
  /// when all servers are wired alike, a few more when a NIC failed somewhere.
  const std::map<std::vector<std::string>, int>& server_nic_ids() const { return server_nic_ids_; }

  /// A server as a translated copy of an earlier one built alike (issue 51), so that what is
  /// found inside one server (its routes) is found once per distinct server, not once per server.
  /// Server k is the image of server `model` when their devices and their own links are equal
  /// field by field, in the same order, at the same positions relative to each server's first
  /// vertex and first own link, and the links leaving them are equal too (a --degrade of a NIC's
  /// cable breaks the likeness). A server not built alike, or whose devices or own links are not
  /// contiguous, is its own model (shifts 0).
  struct ServerImage {
    int model = 0;                  ///< the lowest-numbered server it is a copy of (itself if none)
    std::ptrdiff_t vertex_shift = 0;  ///< this server's vertex = the model's vertex + shift
    std::ptrdiff_t link_shift = 0;    ///< this server's own link = the model's own link + shift
  };
  /// -1 (fabric) and out-of-range servers have none: nullptr.
  const ServerImage* server_image(int node) const {
    return node >= 0 && node < static_cast<int>(server_images_.size()) ? &server_images_[static_cast<std::size_t>(node)] : nullptr;
  }
  /// Whether vertex `v` / link `link` is one of server `node`'s devices / own links (both ends
  /// in it), as server_image counts them.
  bool in_server(int node, Vertex v) const;
  bool own_link(int node, std::size_t link) const;
  const GpuModel& gpu_model(int index) const { return graph_[gpu(index)].gpu(); }
  Vertex other_end(Edge e, Vertex v) const;
  std::optional<Vertex> find(const std::string& id) const;

  /// The lowest NCCL PCIe efficiency among the GPUs' architectures (nullopt: none gives one).
  std::optional<double> lowest_nccl_pcie_efficiency() const { return lowest_nccl_pcie_; }
  /// The lowest NCCL NVLink efficiency among GPUs with NVLink, and the first such GPU whose
  /// architecture has none (callers report it), both found once at build().
  std::optional<double> lowest_nccl_nvlink_efficiency() const { return lowest_nccl_nvlink_; }
  std::optional<Vertex> gpu_without_nccl_nvlink() const { return gpu_without_nccl_nvlink_; }

  /// The CPU whose root port the device hangs under (nearest over PCIe only); GPUs and NICs always
  /// have one after build().
  Vertex local_cpu(Vertex device) const;

 private:
  std::optional<Vertex> find_local_cpu(Vertex device) const;
  /// Sets Device::tier and Device::island (linear in the network's size).
  void find_network_tiers();
  /// Sets server_images_ and the servers' ranges (server_images.cpp), after server_links_.
  void find_server_images();

  MovableGraph graph_;
  std::string name_, description_, file_, gpu_swap_;
  std::vector<std::string> sources_;
  std::vector<Vertex> gpus_;
  std::vector<Vertex> nics_;
  std::vector<Link> links_;  ///< by Link::index
  std::vector<std::vector<std::size_t>> server_links_;  ///< by server: see server_links()
  std::vector<std::vector<Vertex>> server_nics_;        ///< by server
  std::map<std::vector<std::string>, int> server_nic_ids_;
  std::vector<ServerImage> server_images_;  ///< by server
  /// By server: [first, first + count) of its vertices and of its own links; count 0 when they
  /// are not contiguous (then the server is its own model).
  struct ServerRange {
    std::size_t first_vertex = 0, vertices = 0, first_link = 0, links = 0;
  };
  std::vector<ServerRange> server_ranges_;
  int nodes_ = 1;
  std::optional<double> lowest_nccl_pcie_;
  std::optional<double> lowest_nccl_nvlink_;
  std::optional<Vertex> gpu_without_nccl_nvlink_;
};

}  // namespace topsim
