#include "interop/machine.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "interop/import_models.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

void import_fail(const std::string& file, const ImportRef& where, const std::string& message) {
  throw InputError(file, where.line, where.element.empty() ? message : where.element + ": " + message);
}

int package_of(const ImportedMachine& m, std::size_t socket) {
  return m.sockets[socket].package >= 0 ? m.sockets[socket].package : -1 - static_cast<int>(socket);
}

int socket_count(const ImportedMachine& m) {
  std::set<int> packages;
  for (std::size_t i = 0; i < m.sockets.size(); ++i) packages.insert(package_of(m, i));
  return static_cast<int>(packages.size());
}

std::string import_place(const ImportedMachine& m, const ImportRef& where) {
  return m.file + (where.line.empty() ? "" : ":" + where.line);
}

namespace {

std::vector<int> nvlinks_per_gpu(const ImportedMachine& m) {
  std::vector<int> per(m.gpus.size(), 0);
  for (const ImportedNvlink& l : m.nvlinks) {
    per[static_cast<std::size_t>(l.a)] += l.count;
    per[static_cast<std::size_t>(l.b)] += l.count;
  }
  return per;
}

// NVLinks into NVSwitches per GPU: what the XML states, or what the NV# cells imply when a GPU's
// add up beyond its links (every GPU reads the same NV# to every other).
std::vector<int> switched_links(const ImportedMachine& m, const GpuModel& gpu) {
  std::vector<int> switched = m.nvswitch_links;
  if (!m.nvlinks.empty() && gpu.nvlink_model.empty())
    import_fail(m.file, m.nvlinks.front().where, "NVLinks between GPUs, but GPU model " + gpu.name + " has no NVLink");
  if (!switched.empty() || m.nvlinks.empty()) return switched;
  std::vector<int> per = nvlinks_per_gpu(m);
  auto most = std::max_element(per.begin(), per.end());
  if (*most <= gpu.nvlink_count) return switched;
  auto n = uniform_all_to_all(m);
  const ImportRef& where = m.gpus[static_cast<std::size_t>(most - per.begin())].where;
  if (!n)
    import_fail(m.file, where,
                "GPU" + std::to_string(most - per.begin()) + "'s NV# add up to " + std::to_string(*most) + " but a " + gpu.name +
                    " has " + std::to_string(gpu.nvlink_count) +
                    " NVLinks, and they are not the same to every GPU as behind NVSwitches");
  if (*n > gpu.nvlink_count)
    import_fail(m.file, where,
                "NV" + std::to_string(*n) + " needs more NVLinks than a " + gpu.name + " has (" + std::to_string(gpu.nvlink_count) + ")");
  switched.assign(m.gpus.size(), *n);
  return switched;
}

// Writes the devices and links of the spec from the chosen models.
class SpecWriter {
 public:
  SpecWriter(const ImportedMachine& m, TopologySpec& spec) : m_(m), spec_(spec) {}

  static std::string gpu_id(std::size_t i) { return "gpu" + std::to_string(i); }
  static std::string switch_id(int i) { return "pcie" + std::to_string(i); }
  static std::string cpu_id(int i) { return "cpu" + std::to_string(i); }

  void device(const std::string& id, DeviceType type, const std::string& model, const std::string& cores = "",
              std::optional<int> numa = std::nullopt) {
    DeviceSpec d;
    d.id = id;
    d.type = type;
    d.model = model;
    d.cores = cores;
    d.numa_node = numa;
    spec_.devices.push_back(d);
  }

  void link(const std::string& a, const std::string& b, const std::string& model, int count) {
    spec_.links.push_back(link_spec(a, b, model, count));
  }

  std::string parent(const ImportedEndpoint& e) const { return e.pcie_switch >= 0 ? switch_id(e.pcie_switch) : cpu_id(e.socket); }

  // The name becomes a device id, so it must be one (the loader's rule), and valid UTF-8 for JSON.
  std::string nic_id(const ImportedEndpoint& n, std::size_t i) const {
    bool id_ok = std::all_of(n.name.begin(), n.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
    if (!id_ok) {
      std::string shown;
      for (char c : n.name) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
      import_fail(m_.file, n.where, "NIC name '" + shown + "' cannot be a device id: use only letters, digits, '_', '-' and '.'");
    }
    return n.name.empty() ? "nic" + std::to_string(i) : n.name;
  }

  // NUMA nodes of one socket joined by the numa link; sockets pairwise by the socket link, between
  // the first NUMA node of each, as every bundled multi-socket server is.
  void host_links(const std::string& socket_link, int socket_links, const std::string& numa_link) {
    std::vector<std::size_t> heads;
    for (std::size_t a = 0; a < m_.sockets.size(); ++a) {
      bool head = true;
      for (std::size_t b = 0; b < a; ++b)
        if (package_of(m_, a) == package_of(m_, b)) {
          if (head) link(cpu_id(static_cast<int>(b)), cpu_id(static_cast<int>(a)), numa_link, 1);
          head = false;
        }
      if (head) heads.push_back(a);
    }
    for (std::size_t a = 0; a < heads.size(); ++a)
      for (std::size_t b = a + 1; b < heads.size(); ++b)
        link(cpu_id(static_cast<int>(heads[a])), cpu_id(static_cast<int>(heads[b])), socket_link, socket_links);
  }

 private:
  const ImportedMachine& m_;
  TopologySpec& spec_;
};

// More NUMA nodes than sockets: some socket is split (sub-NUMA clustering).
bool has_numa_nodes(const ImportedMachine& m) { return socket_count(m) < static_cast<int>(m.sockets.size()); }

}  // namespace

ImportResult build_topology_spec(const ImportedMachine& m, const Catalog& catalog,
                                 const std::vector<TopologySpec>& servers, const ImportOptions& options) {
  ImportResult result;
  std::vector<std::string>& notes = result.notes;
  notes = m.notes;
  const std::string gpu_model = choose_gpu_model(m, catalog, servers, options, notes);
  const GpuModel& gpu = catalog.gpu(gpu_model, SourceRef{options.gpu.empty() ? m.file : "--gpu", ""});
  const std::vector<int> switched = switched_links(m, gpu);
  const TopologySpec& ref = choose_reference(m, gpu, catalog, servers, options, notes);
  HostModels host = host_models(ref);
  if (host.gpu_pcie.empty()) host.gpu_pcie = gpu.pcie_model;
  if (host.uplink_pcie.empty()) host.uplink_pcie = host.gpu_pcie;
  const std::string cpu = choose_cpu_model(m, catalog, host, notes);
  const auto [socket_link, socket_links] = choose_socket_link(cpu, catalog, host);
  if (socket_count(m) > 1 && !socket_link.empty())
    notes.push_back("socket link " + std::to_string(socket_links) + " x " + socket_link +
                    (socket_link == host.socket_link && socket_links == host.socket_links ? " as in bundled " + host.server : " of " + cpu));
  notes.push_back((host.pcie_switch.empty() ? "" : "PCIe switch " + host.pcie_switch + ", ") + "PCIe links " + host.gpu_pcie +
                  " as in bundled " + host.server);
  if (!m.switches.empty() && host.pcie_switch.empty())
    throw UsageError("bundled " + host.server + " has no PCIe switch model to copy; name a server that has one with --like");
  if (socket_count(m) > 1 && socket_link.empty())
    throw UsageError("bundled " + host.server + " has one socket and no socket link to copy; name a two-socket server with --like");
  const std::string numa_link = has_numa_nodes(m) ? numa_link_model(catalog) : "";

  // Devices, in the bundled files' order: GPUs, NVSwitches, PCIe switches, CPUs, NICs.
  TopologySpec& spec = result.spec;
  SpecWriter w(m, spec);
  spec.name = options.name;
  spec.description = "Imported by topsim import from " + m.format + " (" + m.file + "): " + std::to_string(m.gpus.size()) +
                     " x " + gpu_model + "; CPU " + cpu + "; PCIe models as in bundled " + host.server + ".";
  spec.sources = {m.file + " (" + m.format + ")"};
  spec.scale_out = host.scale_out;
  for (std::size_t i = 0; i < m.gpus.size(); ++i) w.device(SpecWriter::gpu_id(i), DeviceType::gpu, gpu_model);
  NvswitchPlanes planes;
  if (!switched.empty()) {
    if (std::any_of(switched.begin(), switched.end(), [&](int n) { return n != switched.front(); }))
      import_fail(m.file, m.gpus.front().where, "GPUs have different numbers of NVLinks into the NVSwitches");
    planes = choose_nvswitch_planes(switched.front(), static_cast<int>(m.gpus.size()), gpu, catalog, host, notes);
    for (std::size_t s = 0; s < planes.links.size(); ++s) w.device("nvswitch" + std::to_string(s), DeviceType::nvswitch, planes.model);
  }
  for (std::size_t i = 0; i < m.switches.size(); ++i) w.device(SpecWriter::switch_id(static_cast<int>(i)), DeviceType::pcie_switch, host.pcie_switch);
  for (std::size_t i = 0; i < m.sockets.size(); ++i)
    w.device(SpecWriter::cpu_id(static_cast<int>(i)), DeviceType::cpu, cpu, m.sockets[i].cores, m.sockets[i].numa_node);
  std::vector<std::string> nic_ids, nic_models;
  std::map<std::string, std::vector<std::string>> nic_notes;  // note -> NICs it is about
  for (std::size_t i = 0; i < m.nics.size(); ++i) {
    const ImportedEndpoint& n = m.nics[i];
    NicChoice choice = choose_nic_model(m, n, catalog, host, options);
    catalog.nic(choice.model, SourceRef{options.nic.empty() ? import_place(m, n.where) : "--nic", ""});
    nic_ids.push_back(w.nic_id(n, i));
    nic_models.push_back(choice.model);
    if (!choice.note.empty()) nic_notes[choice.note].push_back(nic_ids.back());
    w.device(nic_ids.back(), DeviceType::nic, choice.model);
  }
  for (const auto& [note, nics] : nic_notes)
    notes.push_back((nics.size() == m.nics.size() ? std::string("NICs") : "NIC" + std::string(nics.size() > 1 ? "s " : " ") + join(nics, ", ")) +
                    ": " + note);

  // Links, in the bundled files' order: NVLinks, GPU and NIC slots, uplinks, sockets.
  if (switched.empty()) {
    for (const ImportedNvlink& l : m.nvlinks)
      w.link(SpecWriter::gpu_id(static_cast<std::size_t>(l.a)), SpecWriter::gpu_id(static_cast<std::size_t>(l.b)), gpu.nvlink_model, l.count);
  } else {
    for (std::size_t g = 0; g < m.gpus.size(); ++g)
      for (std::size_t s = 0; s < planes.links.size(); ++s)
        w.link(SpecWriter::gpu_id(g), "nvswitch" + std::to_string(s), gpu.nvlink_model, planes.links[s]);
  }
  for (std::size_t g = 0; g < m.gpus.size(); ++g) w.link(SpecWriter::gpu_id(g), w.parent(m.gpus[g]), host.gpu_pcie, 1);
  for (std::size_t i = 0; i < m.nics.size(); ++i)
    w.link(nic_ids[i], w.parent(m.nics[i]), host.nic_pcie.empty() ? catalog.nics().at(nic_models[i]).pcie_model : host.nic_pcie, 1);
  for (std::size_t s = 0; s < m.switches.size(); ++s) {
    const ImportedSwitch& sw = m.switches[s];
    w.link(SpecWriter::switch_id(static_cast<int>(s)), sw.parent >= 0 ? SpecWriter::switch_id(sw.parent) : SpecWriter::cpu_id(sw.socket),
           host.uplink_pcie, 1);
  }
  w.host_links(socket_link, socket_links, numa_link);
  return result;
}

}  // namespace topsim
