#pragma once
// The matrix `nvidia-smi topo -m` prints: how each GPU and NIC reaches each other one.
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace topsim {

/// "X" (self), "NV#" (# bonded NVLinks, direct or through NVSwitches, GPUs only), else the PCIe
/// relation: PIX (at most one PCIe switch), PXB (several switches, no host bridge), PHB (through a
/// CPU whose root ports share a host bridge), NODE (between host bridges of one NUMA node), SYS
/// (across the socket interconnect).
std::string relation(const Topology& topology, Vertex a, Vertex b);

struct TopoMatrix {
  std::vector<std::string> labels;            ///< GPU0.., then NIC0..
  std::vector<std::vector<std::string>> cells;  ///< cells[row][column], square
  std::vector<std::string> cpu_affinity;      ///< per row; "" for NICs, "N/A" when unknown
  std::vector<std::string> numa_affinity;     ///< per row; "" for NICs, "N/A" when unknown
  std::vector<std::string> nic_names;         ///< device ids of NIC0..
};

TopoMatrix topo_matrix(const Topology& topology);

}  // namespace topsim
