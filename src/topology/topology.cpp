#include "topology/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>
#include <unordered_map>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

bool is_endpoint(DeviceType type) { return type == DeviceType::gpu || type == DeviceType::nic; }

std::string describe_device(const Device& d) { return d.id + " (" + d.model_name + ")"; }

// Which device types a link kind may join; the message names the rule that was broken.
void check_link_ends(const Device& a, const Device& b, const LinkModel& model, const SourceRef& where) {
  auto either = [&](DeviceType t) { return a.type == t || b.type == t; };
  auto both_in = [&](std::initializer_list<DeviceType> types) {
    auto in = [&](DeviceType t) {
      for (auto allowed : types)
        if (t == allowed) return true;
      return false;
    };
    return in(a.type) && in(b.type);
  };
  // Built only for a message: a million links pass.
  auto pair_text = [&] { return a.id + " (" + to_string(a.type) + ") and " + b.id + " (" + to_string(b.type) + ")"; };
  switch (model.kind) {
    case LinkKind::nvlink:
      if (!both_in({DeviceType::gpu, DeviceType::nvswitch}))
        fail(where, "NVLink model '" + model.name + "' cannot join " + pair_text() + "; NVLink joins GPUs and NVSwitches");
      return;
    case LinkKind::pcie:
      if (both_in({DeviceType::gpu, DeviceType::nic}) || (a.type == DeviceType::cpu && b.type == DeviceType::cpu) ||
          either(DeviceType::nvswitch))
        fail(where, "PCIe model '" + model.name + "' cannot join " + pair_text() +
                        "; PCIe joins a GPU or NIC to a PCIe switch or CPU, or switches and CPUs to each other");
      return;
    case LinkKind::socket:
    case LinkKind::numa:
      if (!both_in({DeviceType::cpu}))
        fail(where, std::string(to_string(model.kind)) + " link model '" + model.name + "' cannot join " + pair_text() +
                        "; it joins two CPUs");
      return;
    case LinkKind::network:
      if (!both_in({DeviceType::nic, DeviceType::network_switch}))
        fail(where, "network link model '" + model.name + "' cannot join " + pair_text() +
                        "; network links join NICs and network switches");
      return;
  }
}

// A GPU or NVSwitch speaks one NVLink generation; a link of another generation is a wiring error.
// `link_at` is the link's place; errors point at its model.
void check_nvlink_generation(const Device& d, const LinkModel& model, const SourceRef& link_at) {
  auto fail = [&](const std::string& message) { topsim::fail(link_at.at("model"), message); };
  if (d.type == DeviceType::gpu) {
    const GpuModel& gpu = d.gpu();
    if (gpu.nvlink_model.empty()) fail(describe_device(d) + " has no NVLink");
    if (gpu.nvlink_model != model.name) fail(describe_device(d) + " speaks " + gpu.nvlink_model + ", not " + model.name);
  } else if (d.type == DeviceType::nvswitch) {
    const SwitchModel& sw = d.switch_model();
    if (sw.nvlink_model != model.name) fail(describe_device(d) + " has " + sw.nvlink_model + " ports, not " + model.name);
  }
}

// A NIC's or network switch's ports speak one network link model.
void check_port_model(const Device& d, const LinkModel& model, const SourceRef& link_at) {
  const std::string* speaks = d.type == DeviceType::nic              ? &d.nic().port_model
                              : d.type == DeviceType::network_switch ? &d.switch_model().port_model
                                                                     : nullptr;
  if (speaks != nullptr && !speaks->empty() && *speaks != model.name)
    fail(link_at.at("model"), describe_device(d) + " has " + *speaks + " ports, not " + model.name);
}

// Ports, lanes and host interfaces used so far on one device; checked as each link is added so
// that the error points at the first link over budget.
struct Budget {
  int nvlinks = 0;
  int ports = 0;  ///< network ports
  int lanes = 0;
  int host_links = 0;
  std::string cpu;  ///< pcie_switch: the CPU its upstream port goes to
};

void charge(const Device& d, const Link& link, Budget& used, const SourceRef& where) {
  if (link.kind == LinkKind::nvlink) {
    used.nvlinks += link.count;
    if (d.type == DeviceType::gpu && used.nvlinks > d.gpu().nvlink_count)
      fail(where, describe_device(d) + " would have " + std::to_string(used.nvlinks) + " NVLinks; its model " +
                      d.model_name + " has " + std::to_string(d.gpu().nvlink_count));
    if (d.type == DeviceType::nvswitch && used.nvlinks > d.switch_model().ports)
      fail(where, describe_device(d) + " would use " + std::to_string(used.nvlinks) + " NVLink ports; its model " +
                      d.model_name + " has " + std::to_string(d.switch_model().ports));
  }
  if (link.kind == LinkKind::network) {
    used.ports += link.count;
    int ports = d.type == DeviceType::nic ? d.nic().ports : d.switch_model().ports;
    if (used.ports > ports)
      fail(where, describe_device(d) + " would use " + std::to_string(used.ports) + " network ports; its model " +
                      d.model_name + " has " + std::to_string(ports));
  }
  if (link.kind == LinkKind::pcie) {
    used.lanes += link.lanes * link.count;
    if (d.type == DeviceType::pcie_switch && used.lanes > d.switch_model().lanes)
      fail(where, describe_device(d) + " would use " + std::to_string(used.lanes) + " PCIe lanes; its model " +
                      d.model_name + " has " + std::to_string(d.switch_model().lanes));
    if (d.type == DeviceType::cpu && used.lanes > d.cpu().pcie_lanes)
      fail(where, describe_device(d) + " would use " + std::to_string(used.lanes) + " PCIe lanes; its model " +
                      d.model_name + " has " + std::to_string(d.cpu().pcie_lanes));
    if (is_endpoint(d.type) && (used.host_links += link.count) > 1)
      fail(where, describe_device(d) + " already has a PCIe host link; a " + to_string(d.type) +
                      " has exactly one host interface");
  }
}

}  // namespace

Vertex Topology::other_end(Edge e, Vertex v) const {
  Vertex s = boost::source(e, graph_);
  return s == v ? boost::target(e, graph_) : s;
}

std::optional<Vertex> Topology::find(const std::string& id) const {
  for (Vertex v : boost::make_iterator_range(boost::vertices(graph_)))
    if (graph_[v].id == id) return v;
  return std::nullopt;
}

Vertex Topology::local_cpu(Vertex device) const {
  if (auto cpu = find_local_cpu(device)) return *cpu;
  throw std::logic_error("device " + graph_[device].id + " has no CPU; build() should have rejected it");
}

std::optional<Vertex> Topology::find_local_cpu(Vertex start) const {
  // Breadth-first over PCIe links only: the first CPU reached owns the root port.
  std::vector<bool> seen(boost::num_vertices(graph_), false);
  std::queue<Vertex> frontier;
  frontier.push(start);
  seen[start] = true;
  while (!frontier.empty()) {
    Vertex v = frontier.front();
    frontier.pop();
    if (graph_[v].type == DeviceType::cpu) return v;
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, graph_))) {
      if (link(e).kind != LinkKind::pcie) continue;
      Vertex w = other_end(e, v);
      // Endpoints do not forward PCIe traffic to each other's children.
      if (seen[w] || (is_endpoint(graph_[w].type) && w != start)) continue;
      seen[w] = true;
      frontier.push(w);
    }
  }
  return std::nullopt;
}

Topology Topology::build(const TopologySpec& spec, const Catalog& catalog) {
  Topology t;
  t.name_ = spec.name;
  t.description_ = spec.description;
  t.file_ = spec.file;
  t.gpu_swap_ = spec.gpu_swap;
  t.sources_ = spec.sources;
  t.nodes_ = spec.nodes;

  // Hashed, not ordered: a 131,072-GPU cluster has a million ids, and the sorted list only an
  // error message needs.
  std::unordered_map<std::string, Vertex> by_id;
  by_id.reserve(spec.devices.size());
  t.graph_ = MovableGraph(spec.devices.size());
  t.links_.reserve(spec.links.size());
  using Model = std::variant<GpuModel, SwitchModel, CpuModel, NicModel>;
  std::map<std::pair<DeviceType, std::string>, std::shared_ptr<const Model>> models;  ///< one copy per model
  std::map<std::string, std::shared_ptr<const NcclModel>> nccl_models;                ///< by architecture
  auto shared = [&](const DeviceSpec& ds, auto&& make) {
    auto& slot = models[{ds.type, ds.model}];
    if (!slot) slot = std::make_shared<const Model>(make());
    return slot;
  };
  Vertex next = 0;
  for (const DeviceSpec& ds : spec.devices) {
    auto previous = by_id.find(ds.id);
    if (previous != by_id.end())
      fail(ds.where.at("id"), "duplicate device id '" + ds.id + "' (first defined at " +
                                  t.graph_[previous->second].where.pointer + ")");
    Device d;
    d.id = ds.id;
    d.type = ds.type;
    d.model_name = ds.model;
    d.cores = ds.cores;
    d.numa_node = ds.numa_node;
    d.node = ds.node;
    d.slowdown = ds.slowdown;
    d.where = ds.where;
    // The model's place, made only where a lookup or a check may fail (a million devices pass).
    auto model_at = [&ds] { return ds.where.at("model"); };
    switch (ds.type) {
      case DeviceType::gpu:
        d.model = shared(ds, [&] { return Model(catalog.gpu(ds.model, model_at())); });
        if (const NcclModel* nccl = catalog.nccl(d.gpu().architecture)) {
          auto& slot = nccl_models[d.gpu().architecture];
          if (!slot) slot = std::make_shared<const NcclModel>(*nccl);
          d.nccl = slot;
        }
        d.gpu_index = static_cast<int>(t.gpus_.size());
        break;
      case DeviceType::nvswitch:
      case DeviceType::pcie_switch:
      case DeviceType::network_switch: {
        auto& slot = models[{ds.type, ds.model}];
        const SwitchModel& sw = slot ? std::get<SwitchModel>(*slot) : catalog.switch_model(ds.model, model_at());
        SwitchKind wanted = ds.type == DeviceType::nvswitch      ? SwitchKind::nvswitch
                            : ds.type == DeviceType::pcie_switch ? SwitchKind::pcie
                                                                 : SwitchKind::network;
        if (sw.kind != wanted)
          fail(model_at(), "switch model '" + ds.model + "' is " +
                             (sw.kind == SwitchKind::nvswitch ? "an NVSwitch"
                              : sw.kind == SwitchKind::pcie   ? "a PCIe switch"
                                                              : "a network switch") +
                             ", but the device type is " + to_string(ds.type));
        d.model = shared(ds, [&] { return Model(sw); });
        break;
      }
      case DeviceType::cpu: d.model = shared(ds, [&] { return Model(catalog.cpu(ds.model, model_at())); }); break;
      case DeviceType::nic:
        d.model = shared(ds, [&] { return Model(catalog.nic(ds.model, model_at())); });
        d.nic_index = static_cast<int>(t.nics_.size());
        break;
    }
    Vertex v = next++;
    t.graph_[v] = std::move(d);
    by_id.emplace(ds.id, v);
    if (ds.type == DeviceType::gpu) t.gpus_.push_back(v);
    if (ds.type == DeviceType::nic) t.nics_.push_back(v);
  }
  if (t.gpus_.empty()) fail(SourceRef{spec.file, "/devices"}, "no GPU in this topology; add a device of type \"gpu\"");

  // `key` ("a" or "b") is made a pointer only on failure: a million links, two ends each.
  auto lookup = [&](const std::string& id, const SourceRef& link_at, const char* key) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      SourceRef where = link_at.at(key);
      std::vector<std::string> ids;
      for (const auto& entry : by_id) ids.push_back(entry.first);
      std::sort(ids.begin(), ids.end());  // closest_match breaks ties by order
      fail(where, unknown_name_message("device", id, ids));
    }
    return it->second;
  };

  std::vector<Budget> budget(boost::num_vertices(t.graph_));
  std::unordered_map<std::uint64_t, std::size_t> joined;  ///< (lower end << 32 | upper end) -> link
  std::unordered_map<std::string, const LinkModel*> link_models;  ///< by name, as looked up
  joined.reserve(spec.links.size());
  for (std::size_t i = 0; i < spec.links.size(); ++i) {
    const LinkSpec& ls = spec.links[i];
    Vertex a = lookup(ls.a, ls.where, "a");
    Vertex b = lookup(ls.b, ls.where, "b");
    if (a == b) fail(ls.where, "a link must join two different devices; both ends are '" + ls.a + "'");
    auto [low, high] = std::minmax(a, b);
    auto [twin, fresh] = joined.emplace((static_cast<std::uint64_t>(low) << 32) | high, i);
    if (!fresh)
      fail(ls.where, ls.a + " and " + ls.b + " are already linked at " + spec.links[twin->second].where.pointer +
                         "; describe parallel links with one entry and \"count\"");

    // Each model looked up once by name (the lookup's place made only then, for its error).
    const LinkModel*& known = link_models[ls.model];
    if (known == nullptr) known = &catalog.link(ls.model, ls.where.at("model"));
    const LinkModel& model = *known;
    const Device& da = t.graph_[a];
    const Device& db = t.graph_[b];
    check_link_ends(da, db, model, ls.where);
    if (model.kind == LinkKind::nvlink) {
      check_nvlink_generation(da, model, ls.where);
      check_nvlink_generation(db, model, ls.where);
    }
    if (model.kind == LinkKind::network) {
      check_port_model(da, model, ls.where);
      check_port_model(db, model, ls.where);
    }
    Link link;
    link.index = i;
    link.model_name = model.name;
    link.kind = model.kind;
    link.count = ls.count;
    link.bandwidth_Bps = ls.bandwidth_Bps.value_or(model.bandwidth_Bps) * ls.bandwidth_fraction;
    link.efficiency = ls.efficiency.value_or(model.efficiency);
    link.latency_s = ls.latency_s.value_or(model.latency_s);
    link.lanes = model.lanes;
    link.a = a;
    link.b = b;
    link.where = ls.where;
    charge(da, link, budget[a], ls.where);
    charge(db, link, budget[b], ls.where);
    for (auto [sw, cpu] : {std::make_pair(a, b), std::make_pair(b, a)}) {
      if (t.graph_[sw].type != DeviceType::pcie_switch || t.graph_[cpu].type != DeviceType::cpu) continue;
      std::string& root = budget[sw].cpu;
      if (!root.empty() && root != t.graph_[cpu].id)
        fail(ls.where, t.graph_[sw].id + " is already under " + root + "; a PCIe switch has one upstream port, to one CPU");
      root = t.graph_[cpu].id;
    }
    boost::add_edge(a, b, EdgeRef{i}, t.graph_);
    t.links_.push_back(link);
  }

  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph_))) {
    const Device& d = t.graph_[v];
    if (boost::out_degree(v, t.graph_) == 0)
      fail(d.where, d.id + " is not connected to anything; link it or remove it");
    if (is_endpoint(d.type) && budget[v].host_links == 0)
      fail(d.where, d.id + " has no PCIe link; every " + std::string(to_string(d.type)) +
                        " needs one to reach a CPU");
  }
  for (Vertex v : t.gpus_) {
    const Device& d = t.graph_[v];
    if (d.nccl && d.nccl->pcie_efficiency)
      t.lowest_nccl_pcie_ = std::min(t.lowest_nccl_pcie_.value_or(1.0), *d.nccl->pcie_efficiency);
    if (d.gpu().nvlink_count == 0) continue;
    if (d.nccl && d.nccl->nvlink_efficiency)
      t.lowest_nccl_nvlink_ = std::min(t.lowest_nccl_nvlink_.value_or(1.0), *d.nccl->nvlink_efficiency);
    else if (!t.gpu_without_nccl_nvlink_)
      t.gpu_without_nccl_nvlink_ = v;
  }
  for (const auto* group : {&t.gpus_, &t.nics_})
    for (Vertex v : *group)
      if (!t.find_local_cpu(v))
        fail(t.graph_[v].where, t.graph_[v].id + " has no PCIe path to a CPU; host memory is reached through one");

  t.find_network_tiers();
  t.server_links_.assign(static_cast<std::size_t>(std::max(t.nodes_, 1)), {});
  for (const Link& link : t.links_) {
    const int a = t.graph_[link.a].node, b = t.graph_[link.b].node;
    if (a >= 0 && a < static_cast<int>(t.server_links_.size())) t.server_links_[static_cast<std::size_t>(a)].push_back(link.index);
    if (b >= 0 && b != a && b < static_cast<int>(t.server_links_.size())) t.server_links_[static_cast<std::size_t>(b)].push_back(link.index);
  }
  t.server_nics_.assign(t.server_links_.size(), {});
  for (Vertex v : t.nics_) {
    const int node = t.graph_[v].node;
    if (node >= 0 && node < static_cast<int>(t.server_nics_.size())) t.server_nics_[static_cast<std::size_t>(node)].push_back(v);
  }
  for (const std::vector<Vertex>& nics : t.server_nics_) {
    if (nics.empty()) continue;
    std::vector<std::string> local_ids;
    for (Vertex v : nics) local_ids.emplace_back(t.nic_local_id(v));
    ++t.server_nic_ids_[local_ids];
  }
  t.find_server_images();

  // Host-staged copies between any two GPUs need a path through CPUs and socket links.
  std::vector<int> component(boost::num_vertices(t.graph_), -1);
  std::queue<Vertex> frontier;
  frontier.push(t.gpus_.front());
  component[t.gpus_.front()] = 0;
  while (!frontier.empty()) {
    Vertex v = frontier.front();
    frontier.pop();
    for (Vertex w : boost::make_iterator_range(boost::adjacent_vertices(v, t.graph_)))
      if (component[w] < 0) {
        component[w] = 0;
        frontier.push(w);
      }
  }
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph_)))
    if (component[v] < 0)
      fail(t.graph_[v].where, t.graph_[v].id + " cannot reach " + t.graph_[t.gpus_.front()].id +
                                  "; a server topology must be one connected piece (join its CPUs with a socket link)");
  return t;
}

std::string_view Topology::nic_local_id(Vertex nic) const {
  std::string_view id = graph_[nic].id;
  if (auto dot = id.find('.'); dot != std::string_view::npos) id.remove_prefix(dot + 1);
  return id;
}

void Topology::find_network_tiers() {
  auto network_edges = [&](Vertex v) {
    std::vector<Vertex> out;
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, graph_)))
      if (link(e).kind == LinkKind::network) out.push_back(other_end(e, v));
    return out;
  };
  // Breadth-first from every NIC at once: a switch's tier is its distance from the nearest NIC.
  std::queue<Vertex> frontier;
  for (Vertex nic : nics_) frontier.push(nic);
  while (!frontier.empty()) {
    Vertex v = frontier.front();
    frontier.pop();
    for (Vertex w : network_edges(v))
      if (graph_[w].type == DeviceType::network_switch && graph_[w].tier == 0) {
        graph_[w].tier = graph_[v].tier + 1;
        frontier.push(w);
      }
  }
  int islands = 0;
  for (Vertex nic : nics_) {
    if (graph_[nic].island >= 0) continue;
    graph_[nic].island = islands;
    frontier.push(nic);
    while (!frontier.empty()) {
      Vertex v = frontier.front();
      frontier.pop();
      for (Vertex w : network_edges(v))
        if (graph_[w].island < 0) {
          graph_[w].island = islands;
          frontier.push(w);
        }
    }
    ++islands;
  }
}

}  // namespace topsim
