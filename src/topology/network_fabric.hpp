#pragma once
// The switched network of a cluster (fat-tree, rail, rail-only; two or three tiers; one or
// several independent planes), added to an expanded topology. Internal to topology: called by
// expand_cluster.
#include <string>
#include <utility>
#include <vector>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// A fabric device (node -1) and a link between two devices, as cluster expansion writes them.
DeviceSpec cluster_device(const std::string& id, DeviceType type, const std::string& model, const SourceRef& where);

/// NIC ports to attach: (device id, ports), in the order the leaves fill.
using NicPorts = std::vector<std::pair<std::string, int>>;

/// Adds the leaves, spines and cores of `fabric` above the servers' NICs. `rails[i]` holds NIC
/// index i of every server, server by server (ids already prefixed). Devices are named
/// "fabric.leaf<k>", "fabric.spine<k>", "fabric.core", under "fabric.plane<p>." when there are
/// several planes. InputError at the fabric's place for impossible shapes (planes that do not
/// divide the NICs, spines that do not divide a leaf's up ports, pods larger than a spine takes).
void attach_network_fabric(TopologySpec& out, const FabricSpec& fabric, const std::vector<NicPorts>& rails,
                           int nodes, const SwitchModel& leaf, const std::string& port_model, const Catalog& catalog);

}  // namespace topsim
