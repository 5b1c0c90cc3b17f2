#include "topology/network_fabric.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace topsim {

DeviceSpec cluster_device(const std::string& id, DeviceType type, const std::string& model, const SourceRef& where) {
  DeviceSpec d;
  d.id = id;
  d.type = type;
  d.model = model;
  d.node = -1;
  d.where = where;
  return d;
}


namespace {

DeviceSpec switch_device(const std::string& id, const std::string& model, const SourceRef& where) {
  return cluster_device(id, DeviceType::network_switch, model, where);
}

using Groups = std::vector<NicPorts>;

int ports_of(const Groups& groups) {
  int total = 0;
  for (const auto& g : groups)
    for (const auto& nic : g) total += nic.second;
  return total;
}

// Leaf down ports at a tier's oversubscription (down per up): floor(ports x o / (1 + o)).
int down_ports(const SwitchModel& model, double oversubscription) {
  return static_cast<int>(std::floor(model.ports * oversubscription / (1 + oversubscription)));
}

// Two tiers: leaves for NIC ports grouped as `groups` (each group starts a fresh leaf), each
// leaf of `down` ports under one aggregated core by `up` links. One switch when every port fits.
void attach_leaves(TopologySpec& out, const Groups& groups, const SwitchModel& leaf, const std::string& port_model,
                   double oversubscription, const Catalog& catalog, const SourceRef& where, const std::string& prefix) {
  if (ports_of(groups) <= leaf.ports) {  // one switch holds every port
    out.devices.push_back(switch_device(prefix + "leaf0", leaf.name, where));
    for (const auto& g : groups)
      for (const auto& [nic, ports] : g) out.links.push_back(link_spec(nic, prefix + "leaf0", port_model, ports, where));
    return;
  }
  int down = down_ports(leaf, oversubscription);
  int up = leaf.ports - down;
  if (down < 1 || up < 1) fail(where, "oversubscription leaves " + leaf.name + " no down or no up ports");
  out.devices.push_back(switch_device(prefix + "core", "fabric-core", where));
  catalog.switch_model("fabric-core", where);
  int leaves = 0, used = down;  // start a fresh leaf for the first port
  for (const auto& g : groups) {
    used = down;  // each group starts on its own leaf
    for (const auto& [nic, ports] : g) {
      if (used + ports > down) {
        out.devices.push_back(switch_device(prefix + "leaf" + std::to_string(leaves), leaf.name, where));
        out.links.push_back(link_spec(prefix + "leaf" + std::to_string(leaves), prefix + "core", port_model, up, where));
        ++leaves;
        used = 0;
      }
      out.links.push_back(link_spec(nic, prefix + "leaf" + std::to_string(leaves - 1), port_model, ports, where));
      used += ports;
    }
  }
}

// Three tiers: leaves as above, then pods of `leaves_per_pod` leaves, each leaf joined to every
// spine of its pod by up / spines links; spines under one aggregated core (when there are
// several pods) by ceil(down links / spine oversubscription) links.
void attach_three_tiers(TopologySpec& out, const Groups& groups, const SwitchModel& leaf, const std::string& port_model,
                        const FabricSpec& fabric, const Catalog& catalog, const std::string& prefix) {
  const SourceRef& where = fabric.where;
  int down = down_ports(leaf, fabric.oversubscription);
  int up = leaf.ports - down;
  if (down < 1 || up < 1) fail(where.at("oversubscription"), "oversubscription leaves " + leaf.name + " no down or no up ports");
  // NIC ports by leaf: each group starts a fresh leaf.
  std::vector<NicPorts> leaves;
  for (const auto& g : groups) {
    int used = down;
    for (const auto& nic : g) {
      if (used + nic.second > down) leaves.emplace_back(), used = 0;
      leaves.back().push_back(nic);
      used += nic.second;
    }
  }
  int spines = fabric.spines_per_pod > 0 ? fabric.spines_per_pod : up;
  if (up % spines != 0)
    fail(where.at("spines_per_pod"), std::to_string(spines) + " spines per pod do not divide the " + std::to_string(up) +
                                         " up ports of a " + leaf.name + " leaf; give a divisor of " + std::to_string(up));
  int per_spine = up / spines;  // links from one leaf to one spine
  int spine_down = down_ports(leaf, fabric.spine_oversubscription);
  int most = spine_down / per_spine;
  if (most < 1)
    fail(where.at("spine_oversubscription"), "a " + leaf.name + " spine has " + std::to_string(spine_down) +
                                                 " down ports, fewer than the " + std::to_string(per_spine) +
                                                 " links each leaf sends it");
  int pod = fabric.leaves_per_pod > 0 ? fabric.leaves_per_pod : most;
  if (pod > most)
    fail(where.at("leaves_per_pod"), std::to_string(pod) + " leaves per pod need " + std::to_string(pod * per_spine) +
                                         " down ports on each spine; a " + leaf.name + " spine has " +
                                         std::to_string(spine_down) + ": give at most " + std::to_string(most));
  int pods = (static_cast<int>(leaves.size()) + pod - 1) / pod;
  if (pods > 1) {
    out.devices.push_back(switch_device(prefix + "core", "fabric-core", where));
    catalog.switch_model("fabric-core", where);
  }
  for (int q = 0; q < pods; ++q) {
    int first = q * pod, last = std::min(first + pod, static_cast<int>(leaves.size()));
    int spine_up = static_cast<int>(std::ceil((last - first) * per_spine / fabric.spine_oversubscription));
    for (int s = 0; s < spines; ++s) {
      std::string spine = prefix + "spine" + std::to_string(q * spines + s);
      out.devices.push_back(switch_device(spine, leaf.name, where));
      if (pods > 1) out.links.push_back(link_spec(spine, prefix + "core", port_model, spine_up, where));
    }
    for (int k = first; k < last; ++k) {
      std::string id = prefix + "leaf" + std::to_string(k);
      out.devices.push_back(switch_device(id, leaf.name, where));
      for (const auto& [nic, ports] : leaves[static_cast<std::size_t>(k)]) out.links.push_back(link_spec(nic, id, port_model, ports, where));
      for (int s = 0; s < spines; ++s)
        out.links.push_back(link_spec(id, prefix + "spine" + std::to_string(q * spines + s), port_model, per_spine, where));
    }
  }
}

}  // namespace

void attach_network_fabric(TopologySpec& out, const FabricSpec& fabric, const std::vector<NicPorts>& rails, int nodes,
                           const SwitchModel& leaf, const std::string& port_model, const Catalog& catalog) {
  const SourceRef& where = fabric.where;
  int nics = static_cast<int>(rails.size());
  int planes = fabric.kind == "rail-only" ? nics : std::max(fabric.planes, 1);
  if (nics % planes != 0)
    fail(where.at("planes"), std::to_string(planes) + " planes do not divide the " + std::to_string(nics) +
                                 " NICs of each server; give a divisor of " + std::to_string(nics));
  for (int p = 0; p < planes; ++p) {
    std::string prefix = planes == 1 ? "fabric." : "fabric.plane" + std::to_string(p) + ".";
    std::vector<int> mine;  // NIC indices on this plane
    for (int i = p; i < nics; i += planes) mine.push_back(i);
    Groups groups;
    if (fabric.kind == "fat-tree") {
      groups.emplace_back();
      for (int k = 0; k < nodes; ++k)
        for (int i : mine) groups.back().push_back(rails[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)]);
    } else if (fabric.tiers == 2) {
      for (int i : mine) groups.push_back(rails[static_cast<std::size_t>(i)]);
    } else {
      // Three-tier rails fill scalable units: one leaf per rail for each block of servers, so
      // that a pod holds every rail of its servers (DGX SuperPOD).
      int ports = 1;
      for (int i : mine) ports = std::max(ports, rails[static_cast<std::size_t>(i)].front().second);
      int block = std::max(1, down_ports(leaf, fabric.oversubscription) / ports);
      for (int first = 0; first < nodes; first += block)
        for (int i : mine) {
          const NicPorts& rail = rails[static_cast<std::size_t>(i)];
          groups.emplace_back(rail.begin() + first, rail.begin() + std::min(first + block, nodes));
        }
    }
    if (fabric.tiers == 3 && ports_of(groups) > leaf.ports)
      attach_three_tiers(out, groups, leaf, port_model, fabric, catalog, prefix);
    else
      attach_leaves(out, groups, leaf, port_model, fabric.oversubscription, catalog, where, prefix);
  }
}

}  // namespace topsim
