#include "interop/machine.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

void import_fail(const std::string& file, const ImportRef& where, const std::string& message) {
  throw InputError(file, where.line, where.element.empty() ? message : where.element + ": " + message);
}

namespace {

// The host-side models of a reference server: what the input formats never say.
struct HostModels {
  std::string server;        ///< the reference's name
  std::string cpu;
  std::string socket_link;
  int socket_links = 1;
  std::string pcie_switch;
  std::string gpu_pcie;      ///< GPU to its parent
  std::string nic_pcie;      ///< NIC to its parent
  std::string uplink_pcie;   ///< switch to switch or CPU
  std::string nic;
  std::string nvswitch;
  std::vector<int> plane_links;  ///< NVLinks from one GPU to each NVSwitch of the reference
  std::optional<FabricSpec> scale_out;
};

const DeviceSpec* find_device(const TopologySpec& s, const std::string& id) {
  for (const DeviceSpec& d : s.devices)
    if (d.id == id) return &d;
  return nullptr;
}

DeviceType type_of(const TopologySpec& s, const std::string& id) {
  const DeviceSpec* d = find_device(s, id);
  return d ? d->type : DeviceType::network_switch;
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

bool all_gpus_are(const TopologySpec& s, const std::string& model) {
  bool any = false;
  for (const DeviceSpec& d : s.devices)
    if (d.type == DeviceType::gpu) {
      if (d.model != model) return false;
      any = true;
    }
  return any;
}

int gpu_count(const TopologySpec& s) {
  return static_cast<int>(std::count_if(s.devices.begin(), s.devices.end(),
                                        [](const DeviceSpec& d) { return d.type == DeviceType::gpu; }));
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
      shape.switched[a->second] += l.count;
      any_switch = true;
    } else if (b != ordinal.end() && type_of(s, l.a) == DeviceType::nvswitch) {
      shape.switched[b->second] += l.count;
      any_switch = true;
    }
  }
  if (!any_switch) shape.switched.clear();
  return shape;
}

// Every GPU reads the same NV# towards every other: what NVSwitch systems print.
std::optional<int> uniform_all_to_all(const ImportedMachine& m) {
  int n = static_cast<int>(m.gpus.size());
  if (n < 2 || static_cast<int>(m.nvlinks.size()) != n * (n - 1) / 2) return std::nullopt;
  for (const ImportedNvlink& l : m.nvlinks)
    if (l.count != m.nvlinks.front().count) return std::nullopt;
  return m.nvlinks.front().count;
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

std::vector<int> nvlinks_per_gpu(const ImportedMachine& m) {
  std::vector<int> per(m.gpus.size(), 0);
  for (const ImportedNvlink& l : m.nvlinks) {
    per[static_cast<std::size_t>(l.a)] += l.count;
    per[static_cast<std::size_t>(l.b)] += l.count;
  }
  return per;
}

std::string ref_text(const ImportedMachine& m, const ImportRef& where) {
  return m.file + (where.line.empty() ? "" : ":" + where.line);
}

// NIC model for a port speed: the reference's if it matches, else the first catalog model whose
// port rate equals the speed.
std::string nic_for_speed(double speed_bps, const std::string& preferred, const Catalog& catalog) {
  auto rate_bps = [&](const NicModel& n) { return catalog.links().at(n.port_model).bandwidth_Bps * 8; };
  // Rates compare within a part per million: Mb/s figures and Gbps models are both exact decimals.
  auto matches = [&](const NicModel& n) {
    return catalog.links().count(n.port_model) && std::abs(rate_bps(n) - speed_bps) <= speed_bps * 1e-6;
  };
  auto p = catalog.nics().find(preferred);
  if (p != catalog.nics().end() && matches(p->second)) return preferred;
  for (const auto& [name, nic] : catalog.nics())
    if (matches(nic)) return name;
  return "";
}

}  // namespace

ImportResult build_topology_spec(const ImportedMachine& m, const Catalog& catalog,
                                 const std::vector<TopologySpec>& servers, const ImportOptions& options) {
  ImportResult result;
  std::vector<std::string> server_names;
  for (const TopologySpec& s : servers) server_names.push_back(s.name);

  // 1. GPU model: --gpu, else what the input says, else the bundled server with this NVLink shape.
  std::string gpu_model = options.gpu;
  if (gpu_model.empty()) {
    std::set<std::string> said;
    for (const ImportedEndpoint& g : m.gpus) said.insert(g.model);
    if (said.size() > 1)
      import_fail(m.file, m.gpus.front().where,
                  "GPUs of several generations (" + join({said.begin(), said.end()}, ", ") +
                      "); topsim imports one GPU model, give it with --gpu");
    if (!said.empty() && !said.begin()->empty()) gpu_model = *said.begin();
  }
  if (gpu_model.empty()) {
    for (const TopologySpec& s : servers) {
      if (gpu_count(s) != static_cast<int>(m.gpus.size()) || m.nvlinks.empty() || s.devices.empty()) continue;
      const DeviceSpec& first = *std::find_if(s.devices.begin(), s.devices.end(),
                                              [](const DeviceSpec& d) { return d.type == DeviceType::gpu; });
      if (!all_gpus_are(s, first.model)) continue;
      NvlinkShape theirs = shape_of(s);
      bool switched = !theirs.switched.empty() && uniform_all_to_all(m).has_value();
      if (theirs == shape_of(m, switched)) {
        gpu_model = first.model;
        result.notes.push_back("no --gpu: the NVLinks match bundled " + s.name + ", so the GPUs are taken as " +
                               gpu_model + " (give --gpu to choose another)");
        break;
      }
    }
  }
  if (gpu_model.empty()) {
    std::vector<std::string> known;
    for (const auto& [name, model] : catalog.gpus()) known.push_back(name);
    bool nvlinks = !m.nvlinks.empty() || !m.nvswitch_links.empty();
    throw UsageError("--gpu is required: " + m.file + " does not name its GPUs and " +
                     (nvlinks ? "its NVLinks match no bundled server" : "has no NVLinks to infer them from") +
                     "; GPU models: " + join(known, ", "));
  }
  const GpuModel& gpu = catalog.gpu(gpu_model, SourceRef{options.gpu.empty() ? m.file : "--gpu", ""});

  // 2. NVLinks: direct, or NVSwitch planes when a GPU's NV# add up beyond its links.
  std::vector<int> switched = m.nvswitch_links;
  if (!m.nvlinks.empty() && gpu.nvlink_model.empty())
    import_fail(m.file, m.nvlinks.front().where, "NVLinks between GPUs, but GPU model " + gpu_model + " has no NVLink");
  if (switched.empty() && !m.nvlinks.empty()) {
    std::vector<int> per = nvlinks_per_gpu(m);
    auto most = std::max_element(per.begin(), per.end());
    if (*most > gpu.nvlink_count) {
      auto n = uniform_all_to_all(m);
      const ImportRef& where = m.gpus[static_cast<std::size_t>(most - per.begin())].where;
      if (!n)
        import_fail(m.file, where,
                    "GPU" + std::to_string(most - per.begin()) + "'s NV# add up to " + std::to_string(*most) + " but a " +
                        gpu_model + " has " + std::to_string(gpu.nvlink_count) +
                        " NVLinks, and they are not the same to every GPU as behind NVSwitches");
      if (*n > gpu.nvlink_count)
        import_fail(m.file, where,
                    "NV" + std::to_string(*n) + " needs more NVLinks than a " + gpu_model + " has (" +
                        std::to_string(gpu.nvlink_count) + ")");
      switched.assign(m.gpus.size(), *n);
    }
  }

  // 3. The reference server: --like, else one with the same GPUs (same count first).
  const TopologySpec* ref = nullptr;
  if (!options.like.empty()) {
    for (const TopologySpec& s : servers)
      if (s.name == options.like) ref = &s;
    if (ref == nullptr) throw UsageError("--like: " + unknown_name_message("bundled server", options.like, server_names));
  } else {
    for (int pass = 0; pass < 2 && ref == nullptr; ++pass)
      for (const TopologySpec& s : servers)
        if (ref == nullptr && all_gpus_are(s, gpu_model) &&
            (pass == 1 || gpu_count(s) == static_cast<int>(m.gpus.size())))
          ref = &s;
    if (ref == nullptr)
      throw UsageError("no bundled server has " + gpu_model +
                       " GPUs to take the CPU, socket link and PCIe models from; name one with --like (" +
                       join(server_names, ", ") + ")");
  }
  HostModels host = host_models(*ref);
  if (host.gpu_pcie.empty()) host.gpu_pcie = gpu.pcie_model;
  if (host.uplink_pcie.empty()) host.uplink_pcie = host.gpu_pcie;
  result.notes.push_back("CPU " + host.cpu + (host.socket_link.empty() ? "" : ", socket link " + host.socket_link) +
                         (host.pcie_switch.empty() ? "" : ", PCIe switch " + host.pcie_switch) + " and PCIe links " +
                         host.gpu_pcie + " as in bundled " + host.server +
                         (options.like.empty() ? " (give --like SERVER to take another's)" : ""));
  if (m.shared_host_bridge && catalog.cpus().count(host.cpu) &&
      catalog.cpus().at(host.cpu).shared_host_bridge != *m.shared_host_bridge) {
    std::string wanted = *m.shared_host_bridge ? "PHB" : "NODE";
    std::string other;
    for (const auto& [name, cpu] : catalog.cpus())
      if (other.empty() && cpu.shared_host_bridge == *m.shared_host_bridge) other = name;
    if (other.empty()) throw UsageError("the file reads " + wanted + " between root ports, which no CPU model gives");
    result.notes.push_back("the file reads " + wanted + " between root ports, which " + host.cpu +
                           " does not give; CPU " + other + " instead");
    host.cpu = other;
  }
  if (!m.switches.empty() && host.pcie_switch.empty())
    throw UsageError("bundled " + host.server + " has no PCIe switch model to copy; name a server that has one with --like");
  if (m.sockets.size() > 1 && host.socket_link.empty())
    throw UsageError("bundled " + host.server + " has one socket and no socket link to copy; name a two-socket server with --like");

  // 4. Devices, in the bundled files' order: GPUs, NVSwitches, PCIe switches, CPUs, NICs.
  TopologySpec& spec = result.spec;
  spec.name = options.name;
  spec.description = "Imported by topsim import from " + m.format + " (" + m.file + "): " +
                     std::to_string(m.gpus.size()) + " x " + gpu_model + "; CPU, socket link and PCIe models as in bundled " +
                     host.server + ".";
  spec.sources = {m.file + " (" + m.format + ")"};
  spec.scale_out = host.scale_out;
  auto gpu_id = [](std::size_t i) { return "gpu" + std::to_string(i); };
  auto switch_id = [](int i) { return "pcie" + std::to_string(i); };
  auto cpu_id = [](int i) { return "cpu" + std::to_string(i); };
  for (std::size_t i = 0; i < m.gpus.size(); ++i) spec.devices.push_back({gpu_id(i), DeviceType::gpu, gpu_model, "", {}, 0, {}});

  std::vector<std::string> nvswitch_ids;
  std::vector<int> planes;  // NVLinks from each GPU to each switch
  if (!switched.empty()) {
    int total = switched.front();
    if (std::any_of(switched.begin(), switched.end(), [&](int n) { return n != total; }))
      import_fail(m.file, m.gpus.front().where, "GPUs have different numbers of NVLinks into the NVSwitches");
    int ref_total = 0;
    for (int n : host.plane_links) ref_total += n;
    std::string model = host.nvswitch;
    if (ref_total == total && !model.empty()) {
      planes = host.plane_links;
    } else {
      // No reference pattern for this many links: one plane per link, the smallest switch that fits.
      for (const auto& [name, sw] : catalog.switches())
        if (sw.kind == SwitchKind::nvswitch && sw.nvlink_model == gpu.nvlink_model &&
            sw.ports >= static_cast<int>(m.gpus.size()) &&
            (model.empty() || catalog.switches().at(model).nvlink_model != gpu.nvlink_model ||
             sw.ports < catalog.switches().at(model).ports))
          model = name;
      if (model.empty()) throw UsageError("no NVSwitch model speaks " + gpu.nvlink_model);
      planes.assign(static_cast<std::size_t>(total), 1);
      result.notes.push_back("NVSwitch planes: " + std::to_string(total) + " x " + model +
                             ", one NVLink from each GPU to each (bundled " + host.server + " has no pattern for NV" +
                             std::to_string(total) + ")");
    }
    for (std::size_t s = 0; s < planes.size(); ++s) {
      nvswitch_ids.push_back("nvswitch" + std::to_string(s));
      spec.devices.push_back({nvswitch_ids.back(), DeviceType::nvswitch, model, "", {}, 0, {}});
    }
  }
  for (std::size_t i = 0; i < m.switches.size(); ++i)
    spec.devices.push_back({switch_id(static_cast<int>(i)), DeviceType::pcie_switch, host.pcie_switch, "", {}, 0, {}});
  for (std::size_t i = 0; i < m.sockets.size(); ++i)
    spec.devices.push_back({cpu_id(static_cast<int>(i)), DeviceType::cpu, host.cpu, m.sockets[i].cores,
                            m.sockets[i].numa_node, 0, {}});

  std::vector<std::string> nic_ids;
  std::string nic_default = options.nic;
  if (!m.nics.empty() && nic_default.empty() && host.nic.empty() &&
      std::any_of(m.nics.begin(), m.nics.end(), [](const ImportedEndpoint& n) { return !n.speed_bps && n.model.empty(); }))
    throw UsageError("the file has NICs but does not say their model, and bundled " + host.server +
                     " has none to copy; give --nic MODEL");
  std::set<std::string> nic_notes;
  for (std::size_t i = 0; i < m.nics.size(); ++i) {
    const ImportedEndpoint& n = m.nics[i];
    std::string model = nic_default.empty() ? n.model : nic_default;
    if (model.empty() && n.speed_bps) {
      model = nic_for_speed(*n.speed_bps, host.nic, catalog);
      if (model.empty())
        import_fail(m.file, n.where,
                    "no NIC model has " + shortest(*n.speed_bps / 1e9) + " Gb/s ports; give --nic MODEL");
    }
    if (model.empty()) {
      model = host.nic;
      nic_notes.insert("NICs: " + model + " as in bundled " + host.server + " (the file does not say; give --nic)");
    }
    catalog.nic(model, SourceRef{nic_default.empty() ? ref_text(m, n.where) : "--nic", ""});
    // The name becomes a device id, so it must be one (the loader's rule), and valid UTF-8 for JSON.
    bool id_ok = std::all_of(n.name.begin(), n.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
    if (!id_ok) {
      std::string shown;
      for (char c : n.name) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
      import_fail(m.file, n.where, "NIC name '" + shown + "' cannot be a device id: use only letters, digits, '_', '-' and '.'");
    }
    nic_ids.push_back(n.name.empty() ? "nic" + std::to_string(i) : n.name);
    spec.devices.push_back({nic_ids.back(), DeviceType::nic, model, "", {}, 0, {}});
  }
  result.notes.insert(result.notes.end(), nic_notes.begin(), nic_notes.end());

  // 5. Links, in the bundled files' order: NVLinks, GPU and NIC slots, uplinks, sockets.
  auto link = [&](const std::string& a, const std::string& b, const std::string& model, int count) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.model = model;
    l.count = count;
    spec.links.push_back(l);
  };
  if (switched.empty()) {
    for (const ImportedNvlink& l : m.nvlinks)
      link(gpu_id(static_cast<std::size_t>(l.a)), gpu_id(static_cast<std::size_t>(l.b)), gpu.nvlink_model, l.count);
  } else {
    for (std::size_t g = 0; g < m.gpus.size(); ++g)
      for (std::size_t s = 0; s < planes.size(); ++s) link(gpu_id(g), nvswitch_ids[s], gpu.nvlink_model, planes[s]);
  }
  auto parent = [&](const ImportedEndpoint& e) {
    return e.pcie_switch >= 0 ? switch_id(e.pcie_switch) : cpu_id(e.socket);
  };
  for (std::size_t g = 0; g < m.gpus.size(); ++g) link(gpu_id(g), parent(m.gpus[g]), host.gpu_pcie, 1);
  for (std::size_t i = 0; i < m.nics.size(); ++i) {
    const std::string& model = spec.devices[spec.devices.size() - m.nics.size() + i].model;
    std::string slot = host.nic_pcie.empty() ? catalog.nics().at(model).pcie_model : host.nic_pcie;
    link(nic_ids[i], parent(m.nics[i]), slot, 1);
  }
  for (std::size_t s = 0; s < m.switches.size(); ++s) {
    const ImportedSwitch& sw = m.switches[s];
    link(switch_id(static_cast<int>(s)), sw.parent >= 0 ? switch_id(sw.parent) : cpu_id(sw.socket), host.uplink_pcie, 1);
  }
  // Sockets joined pairwise, as every bundled multi-socket server is.
  for (std::size_t a = 0; a < m.sockets.size(); ++a)
    for (std::size_t b = a + 1; b < m.sockets.size(); ++b)
      link(cpu_id(static_cast<int>(a)), cpu_id(static_cast<int>(b)), host.socket_link, host.socket_links);
  return result;
}

}  // namespace topsim
