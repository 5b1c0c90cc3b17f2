#include "model/topology_spec.hpp"

namespace topsim {

const char* to_string(DeviceType type) {
  switch (type) {
    case DeviceType::gpu: return "gpu";
    case DeviceType::nvswitch: return "nvswitch";
    case DeviceType::pcie_switch: return "pcie_switch";
    case DeviceType::cpu: return "cpu";
    case DeviceType::nic: return "nic";
    case DeviceType::network_switch: return "network_switch";
  }
  return "?";
}

}  // namespace topsim
