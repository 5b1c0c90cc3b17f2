#include "interop/import_models.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Name prefixes of the bundled cloud instances (tools/gen_cloud_topologies.py). Their PCIe trees
// and CPUs are mostly assumptions copied from the vendors' reference servers, so the vendor
// server (dgx-h100, hgx-b300, ...) is the better reference for an imported machine: it is
// preferred to a cloud instance of the same GPU generation, and its NVLinks name the GPUs first.
bool is_cloud_instance(const std::string& name) {
  static const char* const prefixes[] = {"aws-", "azure-", "gcp-", "oci-"};
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

const DeviceSpec* find_device(const TopologySpec& s, const std::string& id) {
  for (const DeviceSpec& d : s.devices)
    if (d.id == id) return &d;
  return nullptr;
}

DeviceType type_of(const TopologySpec& s, const std::string& id) {
  const DeviceSpec* d = find_device(s, id);
  return d ? d->type : DeviceType::network_switch;
}

int count_of(const TopologySpec& s, DeviceType type) {
  return static_cast<int>(std::count_if(s.devices.begin(), s.devices.end(), [&](const DeviceSpec& d) { return d.type == type; }));
}

std::string first_gpu_model(const TopologySpec& s) {
  for (const DeviceSpec& d : s.devices)
    if (d.type == DeviceType::gpu) return d.model;
  return "";
}

bool all_gpus_are(const TopologySpec& s, const std::string& model) {
  bool any = false;
  for (const DeviceSpec& d : s.devices)
    if (d.type == DeviceType::gpu) {
      if (d.model != model) return false;
      any = true;
    }
  return any;
}

// NVLinks between GPU pairs (a < b by GPU ordinal) and per-GPU NVLinks into switches.
struct NvlinkShape {
  std::map<std::pair<int, int>, int> direct;
  std::vector<int> switched;
  bool operator==(const NvlinkShape& o) const { return direct == o.direct && switched == o.switched; }
};

NvlinkShape shape_of(const TopologySpec& s) {
  std::map<std::string, int> ordinal;
  for (const DeviceSpec& d : s.devices)
    if (d.type == DeviceType::gpu) ordinal.emplace(d.id, static_cast<int>(ordinal.size()));
  NvlinkShape shape;
  shape.switched.assign(ordinal.size(), 0);
  bool any_switch = false;
  for (const LinkSpec& l : s.links) {
    auto a = ordinal.find(l.a), b = ordinal.find(l.b);
    if (a != ordinal.end() && b != ordinal.end()) {
      shape.direct[{std::min(a->second, b->second), std::max(a->second, b->second)}] += l.count;
    } else if (a != ordinal.end() && type_of(s, l.b) == DeviceType::nvswitch) {
      shape.switched[static_cast<std::size_t>(a->second)] += l.count;
      any_switch = true;
    } else if (b != ordinal.end() && type_of(s, l.a) == DeviceType::nvswitch) {
      shape.switched[static_cast<std::size_t>(b->second)] += l.count;
      any_switch = true;
    }
  }
  if (!any_switch) shape.switched.clear();
  return shape;
}

NvlinkShape shape_of(const ImportedMachine& m, bool switched) {
  NvlinkShape shape;
  if (!m.nvswitch_links.empty()) {
    shape.switched = m.nvswitch_links;
  } else if (switched) {
    shape.switched.assign(m.gpus.size(), *uniform_all_to_all(m));
  } else {
    for (const ImportedNvlink& l : m.nvlinks) shape.direct[{l.a, l.b}] += l.count;
  }
  return shape;
}

double port_rate_bps(const NicModel& n, const Catalog& catalog) {
  auto link = catalog.links().find(n.port_model);
  return link == catalog.links().end() ? 0 : link->second.bandwidth_Bps * 8;
}

std::string link_layer_of(const NicModel& n, const Catalog& catalog) {
  auto link = catalog.links().find(n.port_model);
  return link == catalog.links().end() ? "" : link->second.link_layer;
}

template <typename Map>
std::vector<std::string> names_of(const Map& models) {
  std::vector<std::string> out;
  for (const auto& entry : models) out.push_back(entry.first);
  return out;
}

std::string layer_name(const std::string& layer) {
  return layer == "ethernet" ? "Ethernet (RoCE)" : layer == "infiniband" ? "InfiniBand" : "of an unstated link layer";
}

// "400 Gb/s", "12.5 Gb/s".
std::string gbps(double bps) {
  double g = bps / 1e9;
  return fixed(g, std::abs(g - std::round(g)) < 1e-9 ? 0 : 3) + " Gb/s";
}

// The GPU model of an XML GPU: its PCI device id, else the sm's usual data-centre part.
std::string gpu_from_input(const ImportedEndpoint& g, const Catalog& catalog, std::vector<std::string>& notes) {
  if (!g.model.empty() || (g.sm.empty() && g.pci_device.empty())) return g.model;
  for (const auto& [name, model] : catalog.gpus())
    if (std::count(model.pci_device_ids.begin(), model.pci_device_ids.end(), g.pci_device)) return name;
  // NCCL's sm, for dumps whose PCI device id the catalogue does not list (docs/import.md).
  static const std::map<std::string, std::string> by_sm = {{"60", "p100"}, {"70", "v100"}, {"80", "a100"}, {"90", "h100"}};
  auto known = by_sm.find(g.sm);
  if (known == by_sm.end()) return "";
  notes.push_back("GPUs: " + known->second + " from sm " + g.sm +
                  (g.pci_device.empty() ? "" : " (PCI device " + g.pci_device + " is not in the catalogue)") +
                  "; give --gpu for another board of that generation");
  return known->second;
}

}  // namespace

std::optional<int> uniform_all_to_all(const ImportedMachine& m) {
  int n = static_cast<int>(m.gpus.size());
  if (n < 2 || static_cast<int>(m.nvlinks.size()) != n * (n - 1) / 2) return std::nullopt;
  for (const ImportedNvlink& l : m.nvlinks)
    if (l.count != m.nvlinks.front().count) return std::nullopt;
  return m.nvlinks.front().count;
}

HostModels host_models(const TopologySpec& ref) {
  HostModels h;
  h.server = ref.name;
  h.scale_out = ref.scale_out;
  for (const DeviceSpec& d : ref.devices) {
    if (d.type == DeviceType::cpu && h.cpu.empty()) h.cpu = d.model;
    if (d.type == DeviceType::pcie_switch && h.pcie_switch.empty()) h.pcie_switch = d.model;
    if (d.type == DeviceType::nic && h.nic.empty()) h.nic = d.model;
    if (d.type == DeviceType::nvswitch && h.nvswitch.empty()) h.nvswitch = d.model;
  }
  const std::string first_gpu = [&] {
    for (const DeviceSpec& d : ref.devices)
      if (d.type == DeviceType::gpu) return d.id;
    return std::string();
  }();
  for (const LinkSpec& l : ref.links) {
    DeviceType a = type_of(ref, l.a), b = type_of(ref, l.b);
    auto either = [&](DeviceType t) { return a == t || b == t; };
    auto host = [](DeviceType t) { return t == DeviceType::pcie_switch || t == DeviceType::cpu; };
    if (a == DeviceType::cpu && b == DeviceType::cpu && h.socket_link.empty()) {
      h.socket_link = l.model;
      h.socket_links = l.count;
    } else if (either(DeviceType::gpu) && either(DeviceType::nvswitch)) {
      if (l.a == first_gpu || l.b == first_gpu) h.plane_links.push_back(l.count);
    } else if (either(DeviceType::gpu) && (host(a) || host(b))) {
      if (h.gpu_pcie.empty()) h.gpu_pcie = l.model;
    } else if (either(DeviceType::nic) && (host(a) || host(b))) {
      if (h.nic_pcie.empty()) h.nic_pcie = l.model;
    } else if (host(a) && host(b) && h.uplink_pcie.empty()) {
      h.uplink_pcie = l.model;
    }
  }
  return h;
}

std::string choose_gpu_model(const ImportedMachine& m, const Catalog& catalog, const std::vector<TopologySpec>& servers,
                             const ImportOptions& options, std::vector<std::string>& notes) {
  if (!options.gpu.empty()) return options.gpu;
  std::set<std::string> said;
  std::vector<std::string> said_notes;
  for (const ImportedEndpoint& g : m.gpus) {
    std::string model = gpu_from_input(g, catalog, said_notes);
    if (model.empty() && !g.sm.empty())
      import_fail(m.file, g.where,
                  "sm " + g.sm + (g.pci_device.empty() ? "" : " (PCI device " + g.pci_device + ")") +
                      " is no GPU model topsim has; give --gpu MODEL (the catalogue's: " + join(names_of(catalog.gpus()), ", ") + ")");
    said.insert(model);
  }
  if (said.size() > 1)
    import_fail(m.file, m.gpus.front().where,
                "GPUs of several models (" + join({said.begin(), said.end()}, ", ") + "); topsim imports one GPU model, give it with --gpu");
  if (!said.empty() && !said.begin()->empty()) {
    if (!said_notes.empty()) notes.push_back(said_notes.front());
    return *said.begin();
  }
  // topo -m never names the GPU: the bundled servers whose NVLinks are these.
  std::vector<std::pair<std::string, std::string>> matches;  // server, model
  std::vector<const TopologySpec*> vendor_first;
  for (const TopologySpec& s : servers) vendor_first.push_back(&s);
  std::stable_partition(vendor_first.begin(), vendor_first.end(),
                        [](const TopologySpec* s) { return !is_cloud_instance(s->name); });
  for (const TopologySpec* server : vendor_first) {
    const TopologySpec& s = *server;
    std::string model = first_gpu_model(s);
    if (count_of(s, DeviceType::gpu) != static_cast<int>(m.gpus.size()) || m.nvlinks.empty() || !all_gpus_are(s, model)) continue;
    NvlinkShape theirs = shape_of(s);
    bool switched = !theirs.switched.empty() && uniform_all_to_all(m).has_value();
    bool known = std::any_of(matches.begin(), matches.end(), [&](const auto& x) { return x.second == model; });
    if (theirs == shape_of(m, switched) && !known) matches.emplace_back(s.name, model);
  }
  if (matches.empty()) {
    bool nvlinks = !m.nvlinks.empty() || !m.nvswitch_links.empty();
    throw UsageError("--gpu is required: " + m.file + " does not name its GPUs and " +
                     (nvlinks ? "its NVLinks match no bundled server" : "has no NVLinks to infer them from") +
                     "; GPU models: " + join(names_of(catalog.gpus()), ", "));
  }
  std::vector<std::string> others;
  for (std::size_t i = 1; i < matches.size(); ++i) others.push_back(matches[i].second + " (" + matches[i].first + ")");
  notes.push_back("no --gpu: the NVLinks match bundled " + matches.front().first + ", so the GPUs are taken as " +
                  matches.front().second + (others.empty() ? "" : "; they match " + join(others, ", ") + " too") +
                  " (give --gpu to choose another)");
  return matches.front().second;
}

const TopologySpec& choose_reference(const ImportedMachine& m, const GpuModel& gpu, const Catalog& catalog,
                                     const std::vector<TopologySpec>& servers, const ImportOptions& options,
                                     std::vector<std::string>& notes) {
  std::vector<std::string> names;
  for (const TopologySpec& s : servers) names.push_back(s.name);
  if (!options.like.empty()) {
    for (const TopologySpec& s : servers)
      if (s.name == options.like) return s;
    throw UsageError("--like: " + unknown_name_message("bundled server", options.like, names));
  }
  // Lexicographic: has the models the machine needs (a PCIe switch, a socket link), GPU
  // generation, socket count, a vendor server before a cloud instance, GPU model, GPU count.
  auto score = [&](const TopologySpec& s) {
    std::string model = first_gpu_model(s);
    auto it = catalog.gpus().find(model);
    bool generation = it != catalog.gpus().end() && it->second.architecture == gpu.architecture;
    bool capable = (m.switches.empty() || count_of(s, DeviceType::pcie_switch) > 0) &&
                   (socket_count(m) < 2 || count_of(s, DeviceType::cpu) > 1);
    return std::make_tuple(capable, generation, count_of(s, DeviceType::cpu) == socket_count(m), !is_cloud_instance(s.name),
                           model == gpu.name, count_of(s, DeviceType::gpu) == static_cast<int>(m.gpus.size()));
  };
  const TopologySpec* best = nullptr;
  for (const TopologySpec& s : servers)
    if (count_of(s, DeviceType::gpu) > 0 && (best == nullptr || score(s) > score(*best))) best = &s;
  if (best == nullptr) throw UsageError("no bundled server to take the CPU, socket link and PCIe models from");
  auto [capable, generation, sockets, vendor, model, count] = score(*best);
  std::string why = std::string(generation ? "same GPU generation (" + gpu.architecture + ")" : "no bundled server has " + gpu.architecture + " GPUs") +
                    (sockets ? ", same socket count" : ", another socket count") + (model ? ", same GPU model" : "") +
                    (capable ? "" : "; it lacks a PCIe switch or socket link the file needs");
  notes.push_back("reference server: bundled " + best->name + " (" + why + "; give --like SERVER to take another's)");
  return *best;
}

std::string choose_cpu_model(const ImportedMachine& m, const Catalog& catalog, const HostModels& host,
                             std::vector<std::string>& notes) {
  std::string cpu = host.cpu;
  std::string how = "as in bundled " + host.server;
  const ImportedSocket* said = m.sockets.empty() ? nullptr : &m.sockets.front();
  if (said != nullptr && !said->cpu_vendor.empty() && said->cpu_family >= 0) {
    std::string cpuid = said->cpu_vendor + " family " + std::to_string(said->cpu_family) + " model " + std::to_string(said->cpu_model);
    int threads = said->cores.empty() ? 0 : static_cast<int>(parse_int_list(said->cores).size());
    std::vector<std::string> same;
    for (const auto& [name, model] : catalog.cpus())
      if (model.cpuid_vendor == said->cpu_vendor && model.cpuid_family == said->cpu_family &&
          std::count(model.cpuid_models.begin(), model.cpuid_models.end(), said->cpu_model))
        same.push_back(name);
    auto cores_fit = [&](const std::string& name) {
      int cores = catalog.cpus().at(name).cores;
      return cores > 0 && (threads == cores || threads == 2 * cores);
    };
    auto fit = std::find_if(same.begin(), same.end(), cores_fit);
    if (fit != same.end()) {
      cpu = *fit;
      how = "from CPUID " + cpuid + " and " + std::to_string(threads) + " CPUs in the affinity";
    } else if (!same.empty()) {
      cpu = std::count(same.begin(), same.end(), host.cpu) ? host.cpu : same.front();
      how = "from CPUID " + cpuid + " (" + join(same, ", ") + " share it; " + std::to_string(threads) +
            " CPUs in the affinity fit none of their core counts)";
    } else {
      how = "as in bundled " + host.server + " (CPUID " + cpuid + " is no CPU model in the catalogue)";
    }
  }
  if (m.shared_host_bridge && catalog.cpus().count(cpu) && catalog.cpus().at(cpu).shared_host_bridge != *m.shared_host_bridge) {
    std::string wanted = *m.shared_host_bridge ? "PHB" : "NODE";
    std::string other;
    for (const auto& [name, model] : catalog.cpus())
      if (other.empty() && model.shared_host_bridge == *m.shared_host_bridge) other = name;
    if (other.empty()) throw UsageError("the file reads " + wanted + " between root ports, which no CPU model gives");
    how += "; the file reads " + wanted + " between root ports, which " + cpu + " does not give, so " + other + " instead";
    cpu = other;
  }
  notes.push_back("CPU " + cpu + " " + how);
  return cpu;
}

std::pair<std::string, int> choose_socket_link(const std::string& cpu, const Catalog& catalog, const HostModels& host) {
  auto it = catalog.cpus().find(cpu);
  if (it != catalog.cpus().end() && !it->second.socket_link.empty()) return {it->second.socket_link, it->second.socket_links};
  return {host.socket_link, host.socket_links};
}

NvswitchPlanes choose_nvswitch_planes(int links, int gpus, const GpuModel& gpu, const Catalog& catalog,
                                      const HostModels& host, std::vector<std::string>& notes) {
  int ref_total = 0;
  for (int n : host.plane_links) ref_total += n;
  auto ref_switch = catalog.switches().find(host.nvswitch);
  bool same_generation = ref_switch != catalog.switches().end() && ref_switch->second.nvlink_model == gpu.nvlink_model;
  if (same_generation && ref_total == links) {
    notes.push_back("NVSwitch planes: " + std::to_string(host.plane_links.size()) + " x " + host.nvswitch + " as in bundled " +
                    host.server + " (" + gpu.nvlink_model + ")");
    return {host.nvswitch, host.plane_links};
  }
  // The fewest planes of equal links whose switches have a port for every link: a real baseboard's
  // switch count is not in the matrix.
  for (int planes = 1; planes <= links; ++planes) {
    if (links % planes != 0) continue;
    int ports = gpus * (links / planes);
    std::string model;
    for (const auto& [name, sw] : catalog.switches())
      if (sw.kind == SwitchKind::nvswitch && sw.nvlink_model == gpu.nvlink_model && sw.ports >= ports &&
          (model.empty() || sw.ports < catalog.switches().at(model).ports))
        model = name;
    if (model.empty()) continue;
    std::string why = ref_switch == catalog.switches().end() ? "bundled " + host.server + " has no NVSwitch"
                      : !same_generation ? "bundled " + host.server + "'s " + host.nvswitch + " speaks " + ref_switch->second.nvlink_model + ", not " + gpu.nvlink_model
                                         : "bundled " + host.server + " has no pattern for NV" + std::to_string(links);
    notes.push_back("NVSwitch planes: " + std::to_string(planes) + " x " + model + " (" + gpu.nvlink_model + "), " +
                    std::to_string(links / planes) + " NVLinks from each GPU to each: the fewest switches with the ports (" +
                    why + ")");
    return {model, std::vector<int>(static_cast<std::size_t>(planes), links / planes)};
  }
  throw UsageError("no NVSwitch model speaks " + gpu.nvlink_model + " with ports for " + std::to_string(gpus) + " GPUs");
}

NicChoice choose_nic_model(const ImportedMachine& m, const ImportedEndpoint& n, const Catalog& catalog,
                           const HostModels& host, const ImportOptions& options) {
  if (!options.nic.empty()) return {options.nic, ""};
  if (!n.model.empty()) return {n.model, ""};
  if (!n.speed_bps) {
    if (host.nic.empty())
      throw UsageError("the file has NICs but does not say their model, and bundled " + host.server + " has none to copy; give --nic MODEL");
    const NicModel& nic = catalog.nic(host.nic, SourceRef{import_place(m, n.where), ""});
    return {host.nic, host.nic + " (" + gbps(port_rate_bps(nic, catalog)) + " " +
                          layer_name(link_layer_of(nic, catalog)) + ") as in bundled " + host.server +
                          " (the file does not say; give --nic)"};
  }
  // Link layer: the port's name ("roce0"; "mlx5_bond_0" is a link aggregation, which only Ethernet
  // does); else the card's PCI device id when the card runs one layer only (not a VPI card);
  // else InfiniBand, with the note saying it is assumed.
  std::set<std::string> id_layers;
  bool id_known = false, stated = true;
  for (const auto& [name, model] : catalog.nics())
    if (!n.pci_device.empty() && std::count(model.pci_device_ids.begin(), model.pci_device_ids.end(), n.pci_device)) {
      id_known = true;
      stated &= !model.card_link_layers.empty();
      id_layers.insert(model.card_link_layers.begin(), model.card_link_layers.end());
    }
  std::string layer = "infiniband",
              why = std::string("assumed: neither the port name nor the PCI device id says") +
                    (id_known && stated && id_layers.size() > 1 ? " (" + n.pci_device + " is a VPI card, InfiniBand or Ethernet)" : "");
  bool by_name = n.name.find("roce") != std::string::npos || n.name.find("bond") != std::string::npos;
  if (!by_name && id_known && stated && id_layers.size() == 1) {
    layer = *id_layers.begin();
    why = "its PCI device " + n.pci_device + " is a card that speaks " + layer_name(layer) + " only";
  } else if (by_name) {
    layer = "ethernet";
    why = n.name.find("bond") != std::string::npos ? "the port is a bond (link aggregation), which only Ethernet has" : "the port name says RoCE";
  }
  auto fits = [&](const NicModel& x) {
    double rate = port_rate_bps(x, catalog);
    return rate > 0 && std::abs(rate - *n.speed_bps) <= *n.speed_bps * 1e-6 && link_layer_of(x, catalog) == layer;
  };
  // Among those that fit: the card's device id, its port count, the reference's model, name order.
  std::string best;
  auto rank = [&](const std::string& name) {
    const NicModel& x = catalog.nics().at(name);
    return std::make_tuple(std::count(x.pci_device_ids.begin(), x.pci_device_ids.end(), n.pci_device) > 0, x.ports == n.ports,
                           name == host.nic);
  };
  for (const auto& [name, model] : catalog.nics())
    if (fits(model) && (best.empty() || rank(name) > rank(best))) best = name;
  std::string speed = gbps(*n.speed_bps) + " " + layer_name(layer);
  if (best.empty())
    import_fail(m.file, n.where, "no NIC model has " + speed + " ports; give --nic MODEL");
  return {best, best + " (" + std::to_string(n.ports) + " x " + speed + " port" + (n.ports > 1 ? "s" : "") + "; link layer " + why + ")"};
}

std::string numa_link_model(const Catalog& catalog) {
  for (const auto& [name, link] : catalog.links())
    if (link.kind == LinkKind::numa) return name;
  throw UsageError("the file shows a socket split into NUMA nodes, and no link model of kind numa joins them; add one to models/links.json");
}

}  // namespace topsim
