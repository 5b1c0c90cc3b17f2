#pragma once
// NCCL's ring graph search inside one server (src/graph/topo.cc, paths.cc, search.cc and the
// channel duplication of connect.cc), run on topsim's topology with the constants of one
// release line (model/nccl_graph_data.hpp). It gives what NCCL's own init gives: the ring
// orders, their count, the per-channel bandwidth bwIntra in NCCL's figures, and the deepest
// path type a ring crosses (typeIntra), which decides transports and the tuner's hop latency.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/nccl_version.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// NCCL's path types, shallowest first (src/graph/topo.h); the search allows a path type and
/// every shallower one.
enum class PathType { loc = 0, nvl = 1, nvb = 2, pix = 3, pxb = 4, pxn = 5, phb = 6, sys = 7 };
const char* to_string(PathType type);

struct NcclRingGraph {
  /// Ring orders as ranks, one per channel of ringGraph after the search's own duplication
  /// (orders repeat); NCCL's init doubles these once more (connect.cc), at most MAXCHANNELS.
  std::vector<std::vector<int>> rings;
  double bw_intra_Bps = 0;    ///< per channel after that duplication, NCCL's figures
  PathType type_intra = PathType::nvl;
  bool fallback = false;      ///< nothing found: NCCL's PCI-order ring at 0.1 GB/s
  /// ringGraph.nChannels: the channels the tuner's bandwidth counts.
  int graph_channels() const { return static_cast<int>(rings.size()); }
};

/// Searches already run, by release line and by everything else a search reads (the server's
/// graph as NCCL's system holds it, with the ranks on it, and peer access). Servers wired alike
/// search once, however many communicators an LLM layout puts on them; exact, since the key
/// is the search's whole input. Lines are told apart by name: one cache serves one catalog.
class NcclRingGraphCache {
 public:
  /// Distinct searches held.
  std::size_t size() const { return graphs_.size(); }

 private:
  friend NcclRingGraph nccl_ring_graph(const Topology&, const std::vector<int>&, const NcclVersion&, bool,
                                       NcclRingGraphCache*);
  std::map<std::pair<std::string, std::string>, NcclRingGraph> graphs_;
};

/// The most ranks nccl_ring_graph searches for `gpus`: 32, or the line's NCCL_TOPO_MAX_NODES
/// where every GPU has an NVLink to an NVSwitch and the line tries only ring neighbours behind
/// NVSwitches (each step then has at most two candidates, so the search stays short).
int nccl_search_rank_limit(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version);

/// Searches the rings of the GPUs `gpus` (topology ordinals in rank order, all in one server,
/// or under MNNVL in the servers of one NVLink domain)
/// as NCCL `version` does. `peer_access` false is NCCL_P2P_DISABLE=1: every path goes through
/// the CPU. UsageError when the line has no graph_search data. With `cache`, a search whose
/// input it holds is not run again.
NcclRingGraph nccl_ring_graph(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version,
                              bool peer_access, NcclRingGraphCache* cache = nullptr);

}  // namespace topsim
