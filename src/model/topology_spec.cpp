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

LinkSpec link_spec(const std::string& a, const std::string& b, const std::string& model, int count, const SourceRef& where) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.model = model;
  l.count = count;
  l.where = where;
  return l;
}

std::string ScaleOut::text() const {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (nodes > 0) add(std::to_string(nodes) + " nodes");
  if (!nic.empty()) add("NIC " + nic);
  if (nics_per_node > 0) add(std::to_string(nics_per_node) + " NICs per node");
  return out;
}

}  // namespace topsim
