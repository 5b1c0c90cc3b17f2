#include "topology/cluster.hpp"
#include "topology/network_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "util/error.hpp"
#include "util/processes.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::string prefixed(int node, const std::string& id) { return "n" + std::to_string(node) + "." + id; }

}  // namespace

void check_nics_per_node(const TopologySpec& server, int nics_per_node) {
  long nics = std::count_if(server.devices.begin(), server.devices.end(),
                            [](const DeviceSpec& d) { return d.type == DeviceType::nic; });
  if (nics_per_node > nics)
    throw UsageError("--nics-per-node " + std::to_string(nics_per_node) + ": " + server.name + " has " +
                     std::to_string(nics) + " NICs");
}

namespace {

// cluster_too_big for servers like `node` on this machine.
std::string server_cluster_too_big(long long nodes, const TopologySpec& node) {
  long long node_gpus = std::count_if(node.devices.begin(), node.devices.end(),
                                      [](const DeviceSpec& d) { return d.type == DeviceType::gpu; });
  return cluster_too_big(nodes, node_gpus, static_cast<long long>(node.devices.size()), node.name, physical_memory_B());
}

}  // namespace

std::string cluster_too_big(long long nodes, long long node_gpus, long long node_devices, const std::string& server,
                            double memory_B) {
  long long per_node = std::max<long long>(node_devices, 1);
  if (nodes * per_node > max_cluster_devices)
    return std::to_string(nodes) + " servers of " + std::to_string(per_node) + " devices (" + server + ") make " +
           std::to_string(nodes * per_node) + " devices; a cluster may have at most " + std::to_string(max_cluster_devices) +
           " (" + std::to_string(max_cluster_devices / per_node) + " of these servers)";
  const double gib = 1024.0 * 1024 * 1024;
  double need_B = static_cast<double>(nodes * node_gpus) * kClusterBytesPerGpu;
  if (memory_B > 0 && need_B > memory_B) {
    long long most = static_cast<long long>(memory_B / kClusterBytesPerGpu) / std::max(node_gpus, 1LL);
    return std::to_string(nodes) + " servers x " + std::to_string(node_gpus) + " GPUs (" + server + ") = " +
           std::to_string(nodes * node_gpus) + " GPUs would need about " + fixed(need_B / gib, 1) + " GiB (" +
           fixed(kClusterBytesPerGpu / 1024, 0) + " KiB per GPU), more than this machine's " + fixed(memory_B / gib, 1) +
           " GiB of memory: give at most " + std::to_string(most) + " servers";
  }
  return "";
}

TopologySpec replicate_server(const TopologySpec& server, const ScaleOut& scale, const Catalog& catalog) {
  check_nics_per_node(server, scale.nics_per_node);
  if (!server.scale_out)
    throw UsageError(server.name + " has no default scale-out fabric (\"scale_out\" in " + server.file +
                     "); describe the cluster in a file under topologies/clusters/");
  ClusterSpec cluster;
  cluster.file = server.file;
  cluster.nodes = scale.nodes > 0 ? scale.nodes : 1;
  // The node count came from --nodes, not from the file: say so rather than point into the file.
  if (std::string why = server_cluster_too_big(cluster.nodes, server); !why.empty())
    throw UsageError("--nodes " + std::to_string(cluster.nodes) + ": " + why);
  cluster.name = server.name + "-x" + std::to_string(cluster.nodes);
  cluster.description = std::to_string(cluster.nodes) + " x " + server.name + " on its default " +
                        server.scale_out->kind + " fabric";
  cluster.sources = server.sources;
  cluster.nic = scale.nic;
  cluster.nics_per_node = scale.nics_per_node;
  cluster.fabric = *server.scale_out;
  cluster.where = SourceRef{server.file, ""};
  return expand_cluster(cluster, server, catalog);
}

ClusterSpec rescale_cluster(ClusterSpec cluster, const ScaleOut& scale) {
  if (scale.nodes > 0) cluster.nodes = scale.nodes;
  if (!scale.nic.empty()) cluster.nic = scale.nic;
  if (scale.nics_per_node > 0) cluster.nics_per_node = scale.nics_per_node;
  return cluster;
}

std::string resolve_nic_model(const std::string& name, const Catalog& catalog) {
  if (catalog.nics().count(name) != 0) return name;
  // Each alias names the NIC model a what-if means by it (so adding a model of the same port rate
  // does not change what `--nic 100gbe` builds), or a port model when no NIC model is meant.
  static const std::map<std::string, std::string> aliases = {
      {"edr", "connectx4-edr"},          {"hdr", "connectx6-hdr"},       {"hdr200", "connectx6-hdr"},
      {"hdr100", "connectx6-hdr100"},    {"ndr", "connectx7-ndr"},       {"ndr400", "connectx7-ndr"},
      {"25gbe", "eth-25g"},              {"100gbe", "connectx6-dx-100g"}, {"200gbe", "connectx6-dx-200g"},
      {"400gbe", "bluefield3-400gbe"}};
  std::string port = name;
  if (auto alias = aliases.find(name); alias != aliases.end()) {
    if (catalog.nics().count(alias->second) != 0) return alias->second;
    port = alias->second;
  }
  for (const auto& [nic, model] : catalog.nics())
    if (model.port_model == port) return nic;
  std::vector<std::string> known;
  for (const auto& entry : catalog.nics()) known.push_back(entry.first);
  for (const auto& entry : aliases) known.push_back(entry.first);
  throw UsageError(unknown_name_message("NIC", name, known) + " (or a network link model a NIC model speaks)");
}

TopologySpec expand_cluster(const ClusterSpec& cluster, const TopologySpec& node, const Catalog& catalog) {
  const SourceRef& where = cluster.fabric.where;
  TopologySpec out;
  out.file = cluster.file;
  out.name = cluster.name;
  out.description = cluster.description;
  out.sources = cluster.sources;
  out.nodes = cluster.nodes;

  if (std::string why = server_cluster_too_big(cluster.nodes, node); !why.empty()) fail(cluster.where.at("nodes"), why);

  // Which NICs each server keeps, and what they become.
  std::vector<std::string> nics;
  for (const auto& d : node.devices)
    if (d.type == DeviceType::nic) nics.push_back(d.id);
  if (cluster.nics_per_node > static_cast<int>(nics.size()))
    fail(cluster.where.at("nics_per_node"), node.name + " has " + std::to_string(nics.size()) + " NICs, not " +
                                                std::to_string(cluster.nics_per_node));
  std::set<std::string> dropped;
  if (cluster.nics_per_node > 0) dropped.insert(nics.begin() + cluster.nics_per_node, nics.end());
  if (cluster.nics_per_node > 0) nics.resize(static_cast<std::size_t>(cluster.nics_per_node));
  std::string nic_model = cluster.nic.empty() ? "" : resolve_nic_model(cluster.nic, catalog);

  out.devices.reserve(node.devices.size() * static_cast<std::size_t>(cluster.nodes));
  out.links.reserve(node.links.size() * static_cast<std::size_t>(cluster.nodes));
  for (int k = 0; k < cluster.nodes; ++k) {
    for (const auto& d : node.devices) {
      if (dropped.count(d.id)) continue;
      DeviceSpec copy = d;
      copy.id = prefixed(k, d.id);
      copy.node = k;
      if (d.type == DeviceType::nic && !nic_model.empty()) copy.model = nic_model;
      out.devices.push_back(copy);
    }
    for (const auto& l : node.links) {
      if (dropped.count(l.a) || dropped.count(l.b)) continue;
      LinkSpec copy = l;
      copy.a = prefixed(k, l.a);
      copy.b = prefixed(k, l.b);
      out.links.push_back(copy);
    }
  }

  const FabricSpec& fabric = cluster.fabric;
  if (fabric.kind == "fat-tree" || fabric.kind == "rail" || fabric.kind == "rail-only") {
    if (nics.empty()) fail(where, node.name + " has no NIC to attach to a " + fabric.kind + " fabric");
    std::string port;
    std::map<std::string, int> ports_of;
    for (const auto& d : node.devices) {
      if (d.type != DeviceType::nic || dropped.count(d.id)) continue;
      const NicModel& m = catalog.nic(nic_model.empty() ? d.model : nic_model, d.where);
      if (!port.empty() && port != m.port_model)
        fail(where, "the NICs of " + node.name + " speak different networks (" + port + ", " + m.port_model + ")");
      port = m.port_model;
      ports_of[d.id] = m.ports;
    }
    std::string leaf_name = fabric.switch_model;
    // A NIC replaced by one of another port type takes a switch that speaks it.
    if (!leaf_name.empty() && !cluster.nic.empty() && catalog.switches().count(leaf_name) &&
        catalog.switches().at(leaf_name).port_model != port)
      leaf_name.clear();
    if (leaf_name.empty()) {
      for (const auto& [name, model] : catalog.switches())
        if (model.kind == SwitchKind::network && model.port_model == port) {
          leaf_name = name;
          break;
        }
      if (leaf_name.empty()) fail(where, "no network switch model in models/ has " + port + " ports; name one with \"switch\"");
    }
    const SwitchModel& leaf = catalog.switch_model(leaf_name, where.at("switch"));
    if (leaf.kind != SwitchKind::network) fail(where.at("switch"), "'" + leaf_name + "' is not a network switch");
    if (!leaf.port_model.empty() && leaf.port_model != port)
      fail(where.at("switch"), leaf_name + " has " + leaf.port_model + " ports but the NICs speak " + port);
    std::vector<NicPorts> rails;
    for (const auto& nic : nics) {
      rails.emplace_back();
      for (int k = 0; k < cluster.nodes; ++k) rails.back().emplace_back(prefixed(k, nic), ports_of[nic]);
    }
    attach_network_fabric(out, fabric, rails, cluster.nodes, leaf, port, catalog);
    return out;
  }

  // NVLink: the servers' NVSwitches reach one NVLink Switch System, or the GPUs reach planes.
  std::vector<const DeviceSpec*> switches, gpus;
  for (const auto& d : node.devices) {
    if (d.type == DeviceType::nvswitch) switches.push_back(&d);
    if (d.type == DeviceType::gpu) gpus.push_back(&d);
  }
  if (!switches.empty()) {
    std::string system = fabric.switch_model.empty() ? "nvlink-switch-system" : fabric.switch_model;
    const SwitchModel& model = catalog.switch_model(system, where.at("switch"));
    out.devices.push_back(cluster_device("fabric.nvlink", DeviceType::nvswitch, system, where));
    for (const DeviceSpec* chip : switches) {
      int gpu_links = 0;
      for (const auto& l : node.links)
        if (l.a == chip->id || l.b == chip->id) {
          const std::string& other = l.a == chip->id ? l.b : l.a;
          for (const DeviceSpec* g : gpus)
            if (g->id == other) gpu_links += l.count;
        }
      int external = static_cast<int>(std::lround(gpu_links * fabric.external_ratio));
      if (external == 0) continue;
      for (int k = 0; k < cluster.nodes; ++k)
        out.links.push_back(link_spec(prefixed(k, chip->id), "fabric.nvlink", model.nvlink_model, external, where));
    }
    return out;
  }
  if (fabric.planes < 1) fail(where, node.name + " has no NVSwitch: give \"planes\", the switch chips its GPUs spread over");
  if (fabric.switch_model.empty()) fail(where, "name the NVLink switch chip model with \"switch\"");
  const SwitchModel& chip = catalog.switch_model(fabric.switch_model, where.at("switch"));
  for (int p = 0; p < fabric.planes; ++p)
    out.devices.push_back(cluster_device("fabric.nvswitch" + std::to_string(p), DeviceType::nvswitch, chip.name, where));
  for (int k = 0; k < cluster.nodes; ++k)
    for (const DeviceSpec* g : gpus) {
      const GpuModel& m = catalog.gpu(g->model, g->where);
      if (m.nvlink_count % fabric.planes != 0)
        fail(where.at("planes"), g->model + " has " + std::to_string(m.nvlink_count) + " NVLinks, not divisible over " +
                                     std::to_string(fabric.planes) + " planes");
      for (int p = 0; p < fabric.planes; ++p)
        out.links.push_back(link_spec(prefixed(k, g->id), "fabric.nvswitch" + std::to_string(p), m.nvlink_model,
                                 m.nvlink_count / fabric.planes, where));
    }
  return out;
}

}  // namespace topsim
