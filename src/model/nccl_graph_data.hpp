#pragma once
// What NCCL's topology graph search (src/graph/topo.cc, paths.cc, search.cc) needs besides the
// topology: its link bandwidths, the speeds it tries, its timeouts and its channel duplication
// rules, for one release line (models/nccl_versions.json "graph_search"). Plain data: the
// search itself is collectives/nccl_graph.cpp. Bandwidths in NCCL's own figures (its topo.h
// constants), in bytes/s.
#include <map>
#include <string>
#include <vector>

namespace topsim {

struct NcclGraphData {
  bool present = false;  ///< false: the line has no graph_search (a model file without one)
  /// speedArrayIntra by the least compute capability it is for (x10; 0: the default array):
  /// NCCL takes the one with the highest threshold at or below the GPUs' ccMin. Descending.
  std::map<int, std::vector<double>> speed_intra_Bps;
  /// NCCL 2.5's search has no speed array: it starts at the widest path and lowers the speed by
  /// this step while it stays at or above half the best found. 0 when speed_intra is given.
  double speed_step_Bps = 0;
  /// kvDictPciGen: per-lane rate of each PCIe signalling rate (GT/s as text, "8" for Gen3), in
  /// units of 100 Mb/s; a PCIe link of W lanes is W x rate / pci_lane_divisor GB/s.
  std::map<std::string, double> pci_lane_rate;
  double pci_lane_divisor = 80;
  /// The bandwidth NCCL gives a link between two CPU sockets, per CPU family: "intel"
  /// (Broadwell and older), "intel_skylake", "intel_sapphire_rapids", "intel_emerald_rapids"
  /// (where the line tells them apart), "amd", "arm", "other".
  std::map<std::string, double> inter_cpu_Bps;
  /// The first CPUID model (family 6) of each newer Intel family the line tells apart.
  std::map<std::string, int> intel_first_model;
  double local_Bps = 0;            ///< LOC_BW: a node to itself, and links NCCL does not limit
  double intel_p2p_overhead = 1;   ///< a GPU's PCIe traffic through an Intel root complex costs this much more
  bool nvlink_bounce = false;      ///< PATH_NVB: a path may pass through one other GPU over NVLink
  /// The deepest path type P2P is used over, per CPU family (the others go through the CPU):
  /// "PXB" or "SYS", as NCCL names them.
  std::map<std::string, std::string> p2p_level;
  /// The same for communicators of at most two GPUs, where the line treats them apart.
  std::map<std::string, std::string> p2p_level_two_gpus;
  int max_search_channels = 16;    ///< ringGraph.maxChannels (MAXCHANNELS / 2)
  long search_timeout = 0;         ///< NCCL_SEARCH_TIMEOUT: steps of one search
  long search_timeout_same_channels = 0;
  long search_global_timeout = 0;
  /// Lower the speed while the next one is above this fraction of the best solution's.
  double lower_speed_ratio = 0.49;
  /// Channels are duplicated after the search only when bwIntra is at least this...
  double duplicate_min_Bps = 0;
  /// ...and, above this compute capability, not when bwIntra is below duplicate_cap_Bps with
  /// more than duplicate_cap_channels channels.
  int duplicate_cap_above_cc = 80;
  double duplicate_cap_Bps = 0;
  int duplicate_cap_channels = 0;
  /// Compute capability (x10: 80 is SM80) of each architecture, for NCCL's ccMin tests.
  std::map<std::string, int> compute_capability;
};

}  // namespace topsim
