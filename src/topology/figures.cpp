#include "topology/figures.hpp"

#include <algorithm>
#include <map>

#include "util/text.hpp"

namespace topsim {

namespace {

/// Devices of one type in server 0, by model: "a100", or "a100 x4, a800 x4" when they differ.
std::map<std::string, int> server_models(const Topology& t, DeviceType type) {
  std::map<std::string, int> counts;
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    if (t.device(v).type == type && t.device(v).node == 0) ++counts[t.device(v).model_name];
  return counts;
}

int total(const std::map<std::string, int>& counts) {
  int n = 0;
  for (const auto& entry : counts) n += entry.second;
  return n;
}

std::string names(const std::map<std::string, int>& counts) {
  if (counts.empty()) return "-";
  if (counts.size() == 1) return counts.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [model, n] : counts) parts.push_back(model + " x" + std::to_string(n));
  return join(parts, ", ");
}

class Figures {
 public:
  void number(const std::string& aspect, const std::string& label, FigureUnit unit, double value) {
    list_.push_back({aspect, label, unit, value});
  }
  void text(const std::string& aspect, const std::string& label, const std::string& value) {
    list_.push_back({aspect, label, FigureUnit::text, value});
  }
  std::vector<Figure> take() { return std::move(list_); }

 private:
  std::vector<Figure> list_;
};

void gpu_figures(const Topology& t, Figures& out) {
  const auto gpus = server_models(t, DeviceType::gpu);
  out.number("gpus_per_server", "GPUs per server", FigureUnit::count, total(gpus));
  out.text("gpu_model", "GPU model", names(gpus));
  if (t.gpu_count() == 0) return;
  const GpuModel& gpu = t.gpu_model(0);
  out.number("gpu_memory_B", "GPU memory", FigureUnit::bytes, gpu.memory_B);
  out.number("hbm_bandwidth_Bps", "GPU memory bandwidth", FigureUnit::bytes_per_s, gpu.memory_Bps);
  for (const auto& [dtype, rate] : gpu.math)
    if (rate.dense_flops_per_s > 0)
      out.number("dense_" + dtype + "_flops_per_s", "dense " + dtype + " peak", FigureUnit::flops_per_s,
                 rate.dense_flops_per_s);
}

void nvlink_figures(const Topology& t, Figures& out) {
  if (t.gpu_count() == 0) return;
  const GpuNvlinks n = gpu_nvlinks(t, 0);
  out.number("nvlinks_per_gpu", "NVLinks per GPU", FigureUnit::count, n.links);
  if (!n.first) return;
  out.text("nvlink_model", "NVLink generation", n.first->model_name);
  out.number("nvlink_link_bandwidth_Bps", "NVLink, one link, one direction", FigureUnit::bytes_per_s,
             n.first->bandwidth_Bps);
  out.number("nvlink_gpu_bandwidth_Bps", "NVLink per GPU, one direction", FigureUnit::bytes_per_s, n.line_rate_Bps);
}

/// "nvswitches_per_server" ("NVSwitches per server") and "nvswitch_model" for key "nvswitch".
void switch_figures(const Topology& t, DeviceType type, const std::string& key, const std::string& label,
                    Figures& out) {
  const auto models = server_models(t, type);
  out.number(key + "es_per_server", label + "es per server", FigureUnit::count, total(models));
  if (!models.empty()) out.text(key + "_model", label + " model", names(models));
}

void nic_figures(const Topology& t, const Catalog& catalog, Figures& out) {
  const auto models = server_models(t, DeviceType::nic);
  out.number("nics_per_server", "NICs per server", FigureUnit::count, total(models));
  if (models.empty()) return;
  out.text("nic_model", "NIC model", names(models));
  const NicModel& nic = t.device(t.server_nics(0).front()).nic();
  const LinkModel& port = catalog.link(nic.port_model, nic.where);
  out.text("nic_port_model", "NIC port", nic.port_model);
  out.number("nic_bandwidth_Bps", "NIC, one direction", FigureUnit::bytes_per_s, nic.ports * port.bandwidth_Bps);
  out.text("nic_link_layer", "NIC link layer", port.link_layer.empty() ? "-" : port.link_layer);
}

void host_figures(const Topology& t, Figures& out) {
  if (t.gpu_count() > 0) {
    Vertex gpu = t.gpu(0);
    for (Edge e : boost::make_iterator_range(boost::out_edges(gpu, t.graph()))) {
      const Link& l = t.link(e);
      if (l.kind != LinkKind::pcie) continue;
      out.text("gpu_pcie_link", "GPU PCIe link", l.model_name);
      out.number("gpu_pcie_bandwidth_Bps", "GPU PCIe, one direction", FigureUnit::bytes_per_s, l.line_rate_Bps());
      break;
    }
  }
  switch_figures(t, DeviceType::pcie_switch, "pcie_switch", "PCIe switch", out);
  const auto cpus = server_models(t, DeviceType::cpu);
  out.number("cpus_per_server", "CPUs per server", FigureUnit::count, total(cpus));
  if (!cpus.empty()) out.text("cpu_model", "CPU model", names(cpus));
  std::map<std::string, int> sockets;
  for (const Link& l : t.links())
    if ((l.kind == LinkKind::socket || l.kind == LinkKind::numa) && t.device(l.a).node == 0)
      sockets[l.model_name] += l.count;
  if (!sockets.empty()) out.text("socket_link", "CPU socket links", names(sockets));
}

void fabric_figures(const Topology& t, const FabricSpec& fabric, Figures& out) {
  out.text("fabric_kind", "fabric", fabric.kind);
  std::map<std::string, int> switches;  // the fabric's own switches: node -1
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    if (t.device(v).node < 0) ++switches[t.device(v).model_name];
  std::vector<std::string> models;
  for (const auto& entry : switches) models.push_back(entry.first);
  out.text("fabric_switch_model", "fabric switch model",
           !models.empty() ? join(models, ", ") : fabric.switch_model.empty() ? "-" : fabric.switch_model);
  const int planes = std::max(1, fabric.planes);
  if (fabric.kind == "nvlink") {
    if (total(server_models(t, DeviceType::nvswitch)) > 0)
      out.number("fabric_external_ratio", "fabric external NVLinks per GPU-facing link", FigureUnit::ratio,
                 fabric.external_ratio);
    else
      out.number("fabric_planes", "fabric planes", FigureUnit::count, planes);
    return;
  }
  out.number("fabric_tiers", "fabric tiers", FigureUnit::count, fabric.tiers);
  out.number("fabric_planes", "fabric planes", FigureUnit::count, planes);
  if (fabric.kind != "rail-only")
    out.number("fabric_oversubscription", "leaf oversubscription", FigureUnit::ratio, fabric.oversubscription);
  if (fabric.tiers == 3) {
    out.number("fabric_spine_oversubscription", "spine oversubscription", FigureUnit::ratio,
               fabric.spine_oversubscription);
    // 0 means "as the switches' ports allow" (model/topology_spec.hpp): said in words.
    auto or_auto = [&](const std::string& key, const std::string& label, int n) {
      if (n > 0) out.number(key, label, FigureUnit::count, n);
      else out.text(key, label, "auto");
    };
    or_auto("fabric_spines_per_pod", "spines per pod", fabric.spines_per_pod);
    or_auto("fabric_leaves_per_pod", "leaves per pod", fabric.leaves_per_pod);
  }
}

}  // namespace

GpuNvlinks gpu_nvlinks(const Topology& t, int gpu) {
  GpuNvlinks n;
  for (Edge e : boost::make_iterator_range(boost::out_edges(t.gpu(gpu), t.graph()))) {
    const Link& l = t.link(e);
    if (l.kind != LinkKind::nvlink) continue;
    if (!n.first) n.first = &l;
    n.links += l.count;
    n.line_rate_Bps += l.line_rate_Bps();
  }
  return n;
}

std::vector<Figure> topology_figures(const Topology& t, const Catalog& catalog, int nodes, const FabricSpec* fabric) {
  Figures out;
  out.number("servers", "servers", FigureUnit::count, nodes);
  gpu_figures(t, out);
  nvlink_figures(t, out);
  switch_figures(t, DeviceType::nvswitch, "nvswitch", "NVSwitch", out);
  nic_figures(t, catalog, out);
  host_figures(t, out);
  if (fabric) fabric_figures(t, *fabric, out);
  return out.take();
}

std::vector<FigureDiff> diff_figures(const std::vector<Figure>& a, const std::vector<Figure>& b) {
  // Merged order: a's aspects, each b-only aspect right after the aspect b lists before it.
  std::vector<std::string> order;
  for (const Figure& f : a) order.push_back(f.aspect);
  auto position = order.begin();
  for (const Figure& f : b) {
    auto found = std::find(order.begin(), order.end(), f.aspect);
    if (found == order.end()) found = order.insert(position, f.aspect);
    position = found + 1;
  }
  auto find = [](const std::vector<Figure>& list, const std::string& aspect) -> const Figure* {
    for (const Figure& f : list)
      if (f.aspect == aspect) return &f;
    return nullptr;
  };
  std::vector<FigureDiff> rows;
  for (const std::string& aspect : order) {
    const Figure* x = find(a, aspect);
    const Figure* y = find(b, aspect);
    if (x && y && x->value == y->value) continue;
    const Figure& some = x ? *x : *y;
    FigureDiff row{aspect, some.label, some.unit, std::nullopt, std::nullopt};
    if (x) row.a = x->value;
    if (y) row.b = y->value;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace topsim
