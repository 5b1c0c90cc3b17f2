#pragma once
// A topology file as written, before validation: devices and links by name. Plain data.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

enum class DeviceType { gpu, nvswitch, pcie_switch, cpu, nic };
const char* to_string(DeviceType type);

struct DeviceSpec {
  std::string id;
  DeviceType type = DeviceType::gpu;
  std::string model;
  std::string cores;                ///< cpu only: CPU affinity list as nvidia-smi prints it ("0-19,40-59")
  std::optional<int> numa_node;     ///< cpu only
  SourceRef where;
};

struct LinkSpec {
  std::string a;
  std::string b;
  std::string model;
  int count = 1;                           ///< parallel links (bonded NVLinks, dual QPI)
  std::optional<double> bandwidth_Bps;     ///< override: one link, one direction
  std::optional<double> latency_s;         ///< override: one hop
  std::optional<double> efficiency;        ///< override, in (0, 1]
  SourceRef where;
};

struct TopologySpec {
  std::string file;
  std::string name;
  std::string description;
  std::vector<std::string> sources;
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
};

}  // namespace topsim
