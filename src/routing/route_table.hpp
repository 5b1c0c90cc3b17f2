#pragma once
// Routes of one topology under one set of route options, each found once, with the resources it
// occupies. A communicator weighs its rings and trees with the table (collectives' Fabric) and
// the engine simulates the same routes from it, so both see the same resources under the same
// names, and a 100,000-GPU cluster is routed once, not once per consumer.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "routing/resources.hpp"
#include "routing/route.hpp"

namespace topsim {

/// A capacity constraint of a max-min system: a split-duplex resource's direction
/// (resource x 2 + 0 up, + 1 down) or a shared resource (resource x 2).
using ConstraintKey = std::uint32_t;

class RouteTable {
 public:
  /// Keeps a reference to `topology`, which must outlive the table.
  RouteTable(const Topology& topology, RouteOptions options);

  struct Entry {
    RouteKind kind = RouteKind::nvlink;
    double latency_s = 0;           ///< path_latency_s
    double bottleneck_Bps = 0;      ///< path_bandwidth_Bps under the options' mode
    std::vector<ResourceUse> uses;  ///< resources crossed, in order, repeats kept
  };

  /// GPU to GPU (find_route), or through NIC ordinals `src_nic` and `dst_nic` of their servers
  /// when both are >= 0 (find_route_via). Found on first use; the reference stays valid.
  const Entry& route(int src_gpu, int dst_gpu, int src_nic = -1, int dst_nic = -1);

  const Topology& topology() const { return topology_; }
  const RouteOptions& options() const { return options_; }
  /// Whether routes under `options` on `topology` are this table's.
  bool serves(const Topology& topology, const RouteOptions& options) const;

  const std::vector<Resource>& resources() const { return table_.resources(); }
  ConstraintKey key(const ResourceUse& use) const;
  /// The resource a key is a direction of.
  static std::size_t resource_of(ConstraintKey key) { return key / 2; }
  /// The resource direction a key names, as `describe` prints the hop crossing it that way.
  /// Described on first ask: a cluster's million resources are named only where a bound or a
  /// link report prints them.
  const std::string& name(ConstraintKey key) const;
  /// The class of a resource as `coll` reports bounds: nvlink, pcie, socket, numa, network
  /// (links); nvswitch, cpu, network (switch cores); memory, copy-engine, staging, gpu.
  const std::string& resource_class(std::size_t resource) const {
    return class_names_.at(class_of_.at(resource));
  }

 private:
  struct Key {
    int src, dst, src_nic, dst_nic;
    bool operator==(const Key& o) const {
      return src == o.src && dst == o.dst && src_nic == o.src_nic && dst_nic == o.dst_nic;
    }
  };
  static std::size_t hash(const Key& k);
  /// The slot holding `k`, or the empty slot where it would go.
  std::size_t slot_of(const Key& k) const;
  void grow();
  /// Keeps the hop that declared each resource not yet seen, and its class.
  void note_new_resources(const Hop& hop, const ResourceUse& use);

  // Per-server templates (issue 51): a route inside one server, and a GPU-NIC segment, found on
  // the server's model (Topology::server_image) and translated by its shifts. A template whose
  // hops leave the model server, or whose search threw, is unusable: such routes are searched
  // on the server itself, as without templates.
  struct Template {
    bool usable = false;
    Route route;  ///< hops in the model server's vertices and links
    double latency_s = 0, bottleneck_Bps = 0;  ///< whole routes only
  };
  /// The template of route src -> dst (same server), or null when none is usable.
  const Template* route_template(Vertex src, Vertex dst, int node);
  /// Appends the GPU-NIC hops of server `node`, from its model's template when usable.
  void append_segment(Vertex gpu, Vertex nic, bool reverse, std::vector<Hop>& hops);
  /// Whether every hop of `path` stays in server `node` (its devices and own links).
  bool inside(const Path& path, int node) const;
  static Hop shifted(const Hop& hop, const Topology::ServerImage& image);
  std::unordered_map<std::uint64_t, Template> route_templates_, segment_templates_;
  GpuNicHops segments_;  ///< append_segment, as find_route_via takes it

  const Topology& topology_;
  RouteOptions options_;
  ResourceTable table_;
  NearestNics nearest_;  ///< each GPU's nearest NIC, searched once
  // Open addressing over a deque: a node-based map cost a cache miss per node and an allocation
  // per route (655,000 lookups at 16,384 GPUs), and the deque keeps handed-out references valid.
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::size_t kFirstSlots = 64;
  struct Slot {
    Key key{};
    std::uint32_t entry = kEmpty;  ///< index into entries_
  };
  std::deque<Entry> entries_;
  std::vector<Slot> slots_;  ///< size a power of two, at most half full
  /// By resource: the hop that first used it, its links and devices in the arenas below, and
  /// the direction it crossed (`up`); `name` describes it from these.
  struct Declaring {
    Hop::Kind kind = Hop::Kind::link;
    bool up = true;
    std::uint32_t first = 0;  ///< into declaring_links_ (links) or declaring_devices_
    std::uint32_t count = 0;
  };
  std::vector<Declaring> declaring_;
  std::vector<LinkUse> declaring_links_;
  std::vector<Vertex> declaring_devices_;
  mutable std::unordered_map<ConstraintKey, std::string> names_;  ///< by key, as asked
  std::vector<std::uint8_t> class_of_;   ///< by resource: index into class_names_
  std::vector<std::string> class_names_;  ///< the few distinct classes
};

}  // namespace topsim
