#pragma once
// The resources a set of routes occupies, declared the way a simulation platform needs them:
// one split-duplex resource per topology link or bundle of striped NVSwitch-plane links, one
// shared resource per switch core, host memory or GPU-side limit crossed. The engine turns them
// into SimGrid links and the exporter into a SimGrid platform file, so both see one mapping.
// No simulation here.
#include <cstddef>
#include <array>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace topsim {

const char* to_string(Hop::Kind kind);

struct Resource {
  enum class Sharing {
    split_duplex,  ///< topology links: each direction has the full capacity
    shared,        ///< one capacity for everything crossing it, whatever the direction
  };
  std::string name;  ///< unique in its table: "link.3", "link.12.13" (a bundle), "link.7#2" (member 2 of link 7's
                     ///< parallel links, ecmp/adaptive), "crossbar.nvswitch0"
  Sharing sharing = Sharing::split_duplex;
  Hop::Kind kind = Hop::Kind::link;
  double capacity_Bps = 0;          ///< per direction when split-duplex
  double latency_s = 0;             ///< hop_latency_s of every hop mapped onto it (one value by construction)
  std::vector<std::size_t> links;   ///< split-duplex: topology link indices, ascending (a link repeats
                                    ///< for each of its members a hop names)
  std::vector<Vertex> devices;      ///< shared: the devices of its hops, ascending
};

/// A hop's resource and, when split-duplex, the direction crossed.
struct ResourceUse {
  std::size_t resource = 0;  ///< index into ResourceTable::resources()
  /// split-duplex: true ("UP") in the direction in which its lowest-indexed link runs forward
  bool up = true;
};

/// Resource ids by a dense ordinal (a link's index, a device's slot), kNone where unset, in pages
/// allocated on first use: a communicator inside one server of a 16,384-server cluster holds
/// that server's pages, not a vector over the whole cluster (thousands of such communicators
/// made a 16,384-GPU LLM iteration fault in 2 GB of zeros).
class PagedOwners {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t& operator[](std::size_t ordinal);

 private:
  static constexpr std::size_t kPageBits = 10;
  std::vector<std::unique_ptr<std::array<std::size_t, std::size_t{1} << kPageBits>>> pages_;
};

class ResourceTable {
 public:
  /// Capacities are those of `mode` (hop_capacity_Bps).
  ResourceTable(const Topology& topology, TransferMode mode) : topology_(topology), mode_(mode) {}

  /// The resource a hop occupies, declared on its first use; nullopt when the hop imposes no
  /// limit (a GPU without a published copy-engine limit). Throws InputError when a link is
  /// striped with different sets of NVSwitch planes on different routes: one link may belong to
  /// one bundle only.
  std::optional<ResourceUse> use(const Hop& hop);

  /// Every resource declared so far, in order of first use.
  const std::vector<Resource>& resources() const { return resources_; }

 private:
  std::size_t declare(Resource resource);

  /// Keys of link members: link index x this + member + 1 (parallel links per link stay below it).
  static constexpr std::size_t kMemberStride = 1u << 20;

  const Topology& topology_;
  TransferMode mode_;
  std::vector<Resource> resources_;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  /// The resource owning a member key (link x kMemberStride + member + 1), or kNone; whole
  /// links (member -1) in a vector by link, members of a bundle (ecmp, adaptive) in a map.
  std::size_t& owner_of(std::size_t member_key);
  PagedOwners link_owner_;                                   ///< by link index
  std::map<std::size_t, std::size_t> member_owner_;          ///< by member key of a bundle member
  std::vector<std::vector<std::size_t>> keys_;               ///< by resource: its member keys (links only)
  PagedOwners single_owner_;  ///< by device x kinds + kind: a one-device shared resource
  std::map<std::pair<int, std::vector<Vertex>>, std::size_t> shared_;  ///< (kind, devices) -> resource, 2+ devices
};

}  // namespace topsim
