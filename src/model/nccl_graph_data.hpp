#pragma once
// What NCCL's topology graph search (src/graph/topo.cc, paths.cc, search.cc) needs besides the
// topology: its link bandwidths, the speeds it tries, its timeouts and its channel duplication
// rules, for one release line (models/nccl_versions.json "graph_search", each value cited in
// the line's sources). Plain data: the search itself is collectives/nccl_graph.cpp. Bandwidths
// in NCCL's own figures (its topo.h constants), in bytes/s.
#include <map>
#include <string>
#include <vector>

namespace topsim {

struct NcclGraphData {
  /// false: the line's search is not modelled (NCCL 2.5: integer widths, another speed rule);
  /// communicators then keep topsim's own ring search.
  bool searchable = false;
  /// speedArrayIntra / speedArrayInter per tuner table row ("default" for rows without their
  /// own: NCCL picks the array by ccMin, which the rows follow), descending.
  std::map<std::string, std::vector<double>> speed_intra_Bps, speed_inter_Bps;
  /// topo.h's link bandwidths by NCCL's name: "loc", "pci_gen3_x16", "qpi", "skl_qpi",
  /// "srp_qpi", "erp_qpi", "amd", "arm", "p9", "zpi", "net", ...
  std::map<std::string, double> link_Bps;
  /// kvDictPciGen: per-lane rate of each PCIe signalling rate (GT/s as text, "8" for Gen3), in
  /// units of 100 Mb/s; a PCIe link of W lanes is W x rate / pci_lane_divisor GB/s.
  std::map<std::string, double> pci_lane_rate;
  double pci_lane_divisor = 80;
  /// The first CPUID model (family 6) of each newer Intel family the line tells apart
  /// ("skylake", "sapphire_rapids", "emerald_rapids"), whose QPI bandwidth is link "skl_qpi",
  /// "srp_qpi", "erp_qpi".
  std::map<std::string, int> intel_first_model;
  double intel_p2p_overhead = 1;   ///< a GPU's PCIe traffic through an Intel root complex costs this much more
  bool nvlink_bounce = false;      ///< PATH_NVB: a path may pass through one other GPU over NVLink
  /// The deepest path type P2P is used over, per CPU family ("intel", "amd", "arm", "other"),
  /// "PXB" or "SYS"; the other pairs go through the CPU.
  std::map<std::string, std::string> p2p_level;
  /// The same for communicators of at most two GPUs, where the line treats them apart.
  std::map<std::string, std::string> p2p_level_two_gpus;
  int search_channels_divisor = 2;  ///< ringGraph.maxChannels = MAXCHANNELS / this
  long search_timeout = 0;          ///< NCCL_SEARCH_TIMEOUT: steps of one search
  long search_timeout_same_channels = 0;
  long search_global_timeout = 0;
  /// Lower the speed while the next one is above this fraction of the best solution's.
  double lower_speed_ratio = 0.49;
  /// Channels are duplicated after the search only when bwIntra is at least this...
  double duplicate_min_Bps = 0;
  /// ...and, on these architectures (NCCL: ccMin > 80), not when bwIntra is below
  /// duplicate_cap_Bps with more than duplicate_cap_channels channels.
  std::vector<std::string> duplicate_cap_architectures;
  double duplicate_cap_Bps = 0;
  int duplicate_cap_channels = 0;
  /// NVSwitch systems try only a GPU's ring neighbours (next, then previous, in the system's
  /// GPU order) as its next hop (ncclTopoSearchNextGpuSort, NCCL 2.19 on).
  bool nvswitch_neighbours_first = false;
  /// MNNVL: the GPUs of one NVLink domain on several hosts are fused into one system and
  /// searched as one server (ncclTopoGetSystem's clique fusion, NCCL 2.21 on).
  bool mnnvl = false;
  /// NCCL_TOPO_MAX_NODES: the most GPUs one system holds; 0 where not transcribed (such a line
  /// keeps topsim's own search past 32 ranks).
  int topo_max_nodes = 0;
};

/// topo.h's name for the socket link of an Intel family a line tells apart by its first CPUID
/// model ("skylake" -> "skl_qpi", "sapphire_rapids" -> "srp_qpi", "emerald_rapids" ->
/// "erp_qpi"); "" for any other name.
inline std::string intel_qpi_link(const std::string& family) {
  if (family == "skylake") return "skl_qpi";
  if (family == "sapphire_rapids") return "srp_qpi";
  if (family == "emerald_rapids") return "erp_qpi";
  return "";
}

}  // namespace topsim
