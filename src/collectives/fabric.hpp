#pragma once
// The GPUs of one communicator and the resources between them, as NCCL's kernels see them:
// every rank-to-rank route (SM transfer mode) reduced to the shared resources it occupies.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memory>

#include <boost/container/small_vector.hpp>

#include "routing/route_table.hpp"

namespace topsim {

/// Whether NCCL_IB_HCA (`ib_hca`, "" for all) lets NCCL use the NIC named `nic` (its id in its
/// server, e.g. "mlx5_0").
bool nic_allowed(const std::string& ib_hca, std::string_view nic);

class Fabric {
 public:
  /// `gpus` are topology GPU ordinals in rank order; `options.mode` should be TransferMode::sm.
  Fabric(const Topology& topology, std::vector<int> gpus, RouteOptions options);

  struct Arc {
    /// (resource, times crossed), in the fabric's arena: a cluster's arcs are counted in
    /// millions, and a heap block each was a tenth of a 4,096-server allreduce's time and, inline,
    /// a third of its memory.
    struct Uses {
      const std::pair<int, int>* first = nullptr;
      const std::pair<int, int>* last = nullptr;  ///< one past
      const std::pair<int, int>* begin() const { return first; }
      const std::pair<int, int>* end() const { return last; }
      std::size_t size() const { return static_cast<std::size_t>(last - first); }
    } uses;
    double bottleneck_Bps = 0;              ///< what the route carries alone
    RouteKind kind = RouteKind::nvlink;
    double latency_s = 0;
  };

  int ranks() const { return static_cast<int>(gpus_.size()); }
  int gpu(int rank) const { return gpus_.at(static_cast<std::size_t>(rank)); }
  const std::vector<int>& gpus() const { return gpus_; }
  const Topology& topology() const { return topology_; }
  const RouteOptions& options() const { return options_; }
  /// The routes arcs were found on, shared with the engine (PlatformNeeds::routes).
  const std::shared_ptr<RouteTable>& route_table() const { return routes_; }

  /// Route from one rank to another, computed on first use (hence the mutable caches). With a
  /// rail, ranks of different servers go through that NIC index of each server.
  const Arc& arc(int from_rank, int to_rank, int rail = -1) const;

  /// Servers the ranks span, in order of first appearance, and NICs per server (ordinals).
  const std::vector<int>& nodes() const { return nodes_; }
  int node_of_rank(int rank) const { return topology_.node_of(gpu(rank)); }
  /// NIC ordinal `rail` of a server; InputError when the server has fewer NICs.
  int nic(int node, int rail) const;
  /// NICs every server of the communicator has.
  int rails() const;
  int resources() const { return static_cast<int>(capacity_.size()); }
  double capacity_Bps(int resource) const { return capacity_.at(static_cast<std::size_t>(resource)); }
  /// The resource's name as RouteTable::name gives it (a reference into the route table).
  const std::string& resource_name(int resource) const { return routes_->name(keys_.at(static_cast<std::size_t>(resource))); }
  /// The class of a resource, as `coll` reports bounds: nvlink, pcie, socket, numa, network
  /// (links); nvswitch, cpu, network (switch cores); memory, copy-engine, staging, gpu.
  const std::string& resource_class(int resource) const {
    return routes_->resource_class(RouteTable::resource_of(keys_.at(static_cast<std::size_t>(resource))));
  }

  /// Capacity of one NVLink of the first GPU's generation under NCCL (the natural ring speed
  /// NCCL searches with), or 0 when the GPUs have no NVLink.
  double nvlink_unit_Bps() const;

 private:
  /// Keeps in nics_ only the NICs (by id within their server, `locals`, beside nics_) that every
  /// server has; a no-op when all servers have the same NICs.
  /// `everywhere`: per NIC id, how many of the cluster's `servers` with NICs have it.
  void keep_common_rails(const std::map<int, std::vector<std::string>>& locals,
                         const std::map<std::string, std::size_t, std::less<>>& everywhere, std::size_t servers);

  const Topology& topology_;
  std::vector<int> gpus_;
  RouteOptions options_;
  std::vector<int> nodes_;
  std::map<int, std::vector<int>> nics_;  ///< by server
  std::shared_ptr<RouteTable> routes_;
  // Arcs by key (rail + 1) x ranks^2 + from x ranks + to, filled on first use: open addressing
  // over a deque (references stay valid), as RouteTable indexes its routes.
  struct ArcSlot {
    long long key = -1;
    std::uint32_t arc = 0;  ///< index into arc_list_; meaningless where key < 0
  };
  mutable std::deque<Arc> arc_list_;
  /// The arcs' uses, in blocks that never move (an arc's uses lie in one block).
  static constexpr std::size_t kUseBlock = std::size_t{1} << 16;  ///< the largest block
  static constexpr std::size_t kFirstUseBlock = 64;
  mutable std::vector<std::unique_ptr<std::pair<int, int>[]>> use_blocks_;
  mutable std::size_t block_free_ = 0;  ///< pairs left in the last block
  mutable std::pair<int, int>* next_use_ = nullptr;  ///< the first of them
  mutable std::vector<ArcSlot> arc_slots_ = std::vector<ArcSlot>(64);  ///< a power of two, at most half full
  std::size_t arc_slot(long long key) const;
  /// Resource ids by constraint key, in order of first use here (bound reports break ties by it).
  mutable std::vector<int> ids_;
  mutable std::vector<double> capacity_;
  /// Constraint key by resource id: names and classes are the route table's, not copies (two
  /// strings per resource per communicator).
  mutable std::vector<ConstraintKey> keys_;
};

}  // namespace topsim
