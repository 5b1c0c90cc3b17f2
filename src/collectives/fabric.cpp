#include "collectives/fabric.hpp"

#include <algorithm>
#include <limits>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::string hop_class(const Topology& t, const Hop& hop) {
  switch (hop.kind) {
    case Hop::Kind::link: return to_string(t.link(hop.links.front().link).kind);
    case Hop::Kind::crossbar: {
      DeviceType type = t.device(hop.devices.front()).type;
      if (type == DeviceType::network_switch) return "network";
      return type == DeviceType::pcie_switch ? "pcie" : to_string(type);
    }
    case Hop::Kind::host_memory: return "memory";
    case Hop::Kind::copy_engine: return "copy-engine";
    case Hop::Kind::staging: return "staging";
    case Hop::Kind::gpu_sm: return "gpu";
  }
  return "?";
}

}  // namespace

Fabric::Fabric(const Topology& topology, std::vector<int> gpus, RouteOptions options)
    : topology_(topology), gpus_(std::move(gpus)), options_(options) {
  for (int g : gpus_) {
    int node = topology_.node_of(g);
    if (std::find(nodes_.begin(), nodes_.end(), node) == nodes_.end()) nodes_.push_back(node);
  }
  std::vector<std::string> names;
  for (Vertex v : topology_.nics()) {
    const Device& d = topology_.device(v);
    std::string local = d.id.substr(d.id.find('.') == std::string::npos ? 0 : d.id.find('.') + 1);
    if (nic_allowed(options_.ib_hca, local)) nics_[d.node].push_back(d.nic_index);
    if (d.node == topology_.device(topology_.nics().front()).node) names.push_back(local);
  }
  if (!options_.ib_hca.empty() && nics_.empty())
    throw UsageError("NCCL_IB_HCA=" + options_.ib_hca + " matches none of the NICs (" + join(names, ", ") + ")");
}

bool nic_allowed(const std::string& ib_hca, const std::string& nic) {
  if (ib_hca.empty()) return true;
  std::string list = ib_hca;
  bool exclude = list[0] == '^';
  if (exclude) list = list.substr(1);
  bool exact = !list.empty() && list[0] == '=';
  if (exact) list = list.substr(1);
  bool named = false;
  for (std::string entry : split(list, ',')) {
    entry = entry.substr(0, entry.find(':'));
    if (entry.empty()) continue;
    named |= exact ? nic == entry : nic.rfind(entry, 0) == 0;
  }
  return named != exclude;
}

int Fabric::nic(int node, int rail) const {
  auto it = nics_.find(node);
  if (it == nics_.end() || rail >= static_cast<int>(it->second.size()))
    throw UsageError("server " + std::to_string(node) + " of " + topology_.name() + " has no NIC " + std::to_string(rail));
  return it->second[static_cast<std::size_t>(rail)];
}

int Fabric::rails() const {
  int least = std::numeric_limits<int>::max();
  for (int node : nodes_) {
    auto it = nics_.find(node);
    least = std::min(least, it == nics_.end() ? 0 : static_cast<int>(it->second.size()));
  }
  return nodes_.empty() ? 0 : least;
}

const Fabric::Arc& Fabric::arc(int from_rank, int to_rank, int rail) const {
  long long n = static_cast<long long>(gpus_.size());
  long long key = (static_cast<long long>(rail) + 1) * n * n + static_cast<long long>(from_rank) * n + to_rank;
  auto found_arc = arcs_.find(key);
  if (found_arc != arcs_.end()) return found_arc->second;
  int a = node_of_rank(from_rank), b = node_of_rank(to_rank);
  Route route = rail >= 0 && a != b
                    ? find_route_via(topology_, gpu(from_rank), nic(a, rail), nic(b, rail), gpu(to_rank), options_)
                    : find_route(topology_, gpu(from_rank), gpu(to_rank), options_);
  Arc arc;
  arc.kind = route.kind;
  arc.latency_s = path_latency_s(topology_, route.path);
  arc.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (const Hop& hop : route.path.hops) {
    auto capacity = hop_capacity_Bps(topology_, hop, options_.mode);
    if (!capacity) continue;
    // A resource is a hop kind with its members; links keep their direction apart.
    std::vector<std::size_t> members;
    // A member of a bundle (ecmp, adaptive) is apart from the whole link and from the others.
    for (const LinkUse& use : hop.links)
      members.push_back(((use.link * 2 + (use.forward ? 0 : 1)) << 20) + static_cast<std::size_t>(use.member + 1));
    for (Vertex v : hop.devices) members.push_back(v);
    std::sort(members.begin(), members.end());
    auto id_key = std::make_pair(static_cast<int>(hop.kind), members);
    auto found = ids_.find(id_key);
    int id;
    if (found == ids_.end()) {
      id = static_cast<int>(capacity_.size());
      ids_[id_key] = id;
      capacity_.push_back(*capacity);
      Path single;
      single.hops.push_back(hop);
      names_.push_back(describe(topology_, single));
      classes_.push_back(hop_class(topology_, hop));
    } else {
      id = found->second;
    }
    auto use = std::find_if(arc.uses.begin(), arc.uses.end(), [&](const auto& u) { return u.first == id; });
    if (use == arc.uses.end()) arc.uses.emplace_back(id, 1);
    else ++use->second;
    arc.bottleneck_Bps = std::min(arc.bottleneck_Bps, *capacity);
  }
  return arcs_.emplace(key, std::move(arc)).first->second;
}

double Fabric::nvlink_unit_Bps() const {
  const Device& d = topology_.device(topology_.gpu(gpus_.front()));
  if (d.gpu().nvlink_model.empty() || !d.nccl || !d.nccl->nvlink_efficiency) return 0;
  for (const Link& link : topology_.links())
    if (link.kind == LinkKind::nvlink && (link.a == topology_.gpu(gpus_.front()) || link.b == topology_.gpu(gpus_.front())))
      return link.bandwidth_Bps * *d.nccl->nvlink_efficiency;
  return 0;
}

}  // namespace topsim
