#pragma once
// NCCL-style ring search: as many rings (Hamiltonian cycles over the ranks) as the fabric can
// carry at one per-ring speed, each ring consuming that speed on every resource it crosses.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collectives/fabric.hpp"

namespace topsim {

struct RingSet {
  std::vector<std::vector<int>> orders;  ///< distinct ring orders, as ranks starting at rank 0
  std::vector<int> multiplicity;         ///< how many rings follow each order
  double speed_Bps = 0;                  ///< bandwidth each ring is given
  /// Found by NCCL's own graph search (nccl_graph.hpp): its bwIntra per ring in NCCL's figures
  /// and the deepest path type a ring crosses. Unset for topsim's search (spans of servers in
  /// one NVLink domain, or more than 32 ranks).
  bool nccl_search = false;
  double nccl_bw_intra_Bps = 0;
  std::string type_intra;  ///< NCCL's name: NVL, NVB, PIX, PXB, PHB, SYS
  int max_channels = 2 * 16;  ///< MAXCHANNELS of the release line

  int rings() const;
  /// NCCL runs two channels per ring found (init duplicates them once more), at most MAXCHANNELS.
  int channels() const;
};

/// NCCL caps channels at 32; two per ring.
constexpr int kMaxRings = 16;

/// Best ring set: the most total bandwidth (rings x speed); among equals, the speed nearest one
/// NVLink's worth (NCCL searches at per-link speeds). Rings prefer NVLink hops, then PCIe, then
/// host memory (NCCL's P2P, then SHM transports), so a GPU subset without an NVLink ring still
/// gets one through the host. Communicators of more than 32 ranks try the rank order only.
RingSet search_rings(Fabric& fabric);

}  // namespace topsim
