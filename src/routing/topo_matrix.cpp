#include "routing/topo_matrix.hpp"

#include "routing/graph_search.hpp"
#include "routing/route.hpp"

namespace topsim {

std::string relation(const Topology& t, Vertex a, Vertex b) {
  if (a == b) return "X";
  const Device& da = t.device(a);
  const Device& db = t.device(b);
  if (da.type == DeviceType::gpu && db.type == DeviceType::gpu) {
    Route route = find_route(t, da.gpu_index, db.gpu_index, RouteOptions{});
    if (route.kind == RouteKind::nvlink) return "NV" + std::to_string(route.nvlinks);
  }
  auto host_fabric = [](const Link& l) {
    return l.kind == LinkKind::pcie || l.kind == LinkKind::socket || l.kind == LinkKind::numa;
  };
  auto passable = [](const Device& d) { return d.type == DeviceType::pcie_switch || d.type == DeviceType::cpu; };
  auto edges = shortest_path(t, a, b, host_fabric, passable);
  if (!edges) return "SYS";
  int switches = 0;
  bool socket = false, numa = false, host_bridge = false, separate_bridges = false;
  Vertex at = a;
  for (std::size_t i = 0; i < edges->size(); ++i) {
    const Link& link = t.link((*edges)[i]);
    socket |= link.kind == LinkKind::socket;
    numa |= link.kind == LinkKind::numa;
    if (i > 0) {
      const Device& d = t.device(at);
      if (d.type == DeviceType::pcie_switch) ++switches;
      if (d.type == DeviceType::cpu) {
        host_bridge = true;
        // Crossing a CPU between two of its PCIe root ports.
        bool between_ports = t.link((*edges)[i - 1]).kind == LinkKind::pcie && link.kind == LinkKind::pcie;
        separate_bridges |= between_ports && !d.cpu().shared_host_bridge;
      }
    }
    at = t.other_end((*edges)[i], at);
  }
  if (socket) return "SYS";
  if (numa || separate_bridges) return "NODE";
  if (host_bridge) return "PHB";
  return switches >= 2 ? "PXB" : "PIX";
}

TopoMatrix topo_matrix(const Topology& t) {
  TopoMatrix m;
  std::vector<Vertex> rows = t.gpus();
  rows.insert(rows.end(), t.nics().begin(), t.nics().end());
  for (Vertex v : t.gpus()) m.labels.push_back("GPU" + std::to_string(t.device(v).gpu_index));
  for (Vertex v : t.nics()) {
    m.labels.push_back("NIC" + std::to_string(t.device(v).nic_index));
    m.nic_names.push_back(t.device(v).id);
  }
  for (Vertex r : rows) {
    std::vector<std::string> row;
    for (Vertex c : rows) row.push_back(relation(t, r, c));
    m.cells.push_back(std::move(row));
    if (t.device(r).type == DeviceType::gpu) {
      const Device& cpu = t.device(t.local_cpu(r));
      m.cpu_affinity.push_back(cpu.cores.empty() ? "N/A" : cpu.cores);
      m.numa_affinity.push_back(cpu.numa_node ? std::to_string(*cpu.numa_node) : "N/A");
    } else {
      m.cpu_affinity.emplace_back();
      m.numa_affinity.emplace_back();
    }
  }
  return m;
}

}  // namespace topsim
