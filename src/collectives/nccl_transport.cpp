#include "collectives/nccl_transport.hpp"

#include <algorithm>
#include <cstdlib>

#include "util/error.hpp"

namespace topsim {

std::string nccl_cpu_vendor(const CpuModel& cpu) {
  if (cpu.cpuid_vendor == "GenuineIntel") return "intel";
  if (cpu.cpuid_vendor == "AuthenticAMD") return "amd";
  if (cpu.cpuid_vendor == "ARM") return "arm";
  return "other";
}

PeerReach nccl_default_peer_reach(const NcclVersion& version, const CpuModel& cpu, std::size_t gpus_in_server) {
  const NcclGraphData& g = version.graph;
  std::string vendor = nccl_cpu_vendor(cpu);
  const auto& levels = gpus_in_server <= 2 && g.p2p_level_two_gpus.count(vendor) ? g.p2p_level_two_gpus : g.p2p_level;
  auto it = levels.find(vendor);
  if (it == levels.end()) it = g.p2p_level.find("other");
  if (it == g.p2p_level.end()) return PeerReach::socket;
  // The io layer admits "PXB" and "SYS" only (nccl_graph_io.cpp p2p_level_name).
  return it->second == "SYS" ? PeerReach::system : PeerReach::switch_tree;
}

std::optional<PeerReach> parse_nccl_p2p_level(const std::string& value) {
  // topoPathTypeStr order up to PATH_SYS; the old numbers map through levelsOldToNew.
  if (value == "LOC" || value == "0") return std::nullopt;
  if (value == "NVL" || value == "NVB" || value == "C2C") return PeerReach::nvlink_only;
  if (value == "PIX" || value == "1") return PeerReach::one_switch;
  if (value == "PXB" || value == "P2C" || value == "PXN" || value == "2") return PeerReach::switch_tree;
  if (value == "PHB" || value == "3") return PeerReach::socket;
  if (value == "SYS") return PeerReach::system;
  bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) return PeerReach::system;  // 4, 5 and above: PATH_SYS
  throw UsageError("--env NCCL_P2P_LEVEL=" + value + ": expected LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or 0-5");
}

PeerReach nccl_peer_reach(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version,
                          std::optional<PeerReach> requested) {
  if (requested) return *requested;
  if (gpus.empty()) return PeerReach::socket;
  int node = topology.node_of(gpus.front());
  std::size_t in_server = static_cast<std::size_t>(
      std::count_if(gpus.begin(), gpus.end(), [&](int g) { return topology.node_of(g) == node; }));
  Vertex cpu = topology.local_cpu(topology.gpu(gpus.front()));
  return nccl_default_peer_reach(version, topology.device(cpu).cpu(), in_server);
}

}  // namespace topsim
