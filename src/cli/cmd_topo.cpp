// topsim topo show: summary, nvidia-smi topo -m matrix, or Graphviz of a topology.
#include <map>
#include <sstream>

#include "cli/common.hpp"
#include "routing/route.hpp"
#include "routing/topo_matrix.hpp"
#include "topology/analysis.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

std::string count_by_model(const Topology& t, DeviceType type) {
  std::map<std::string, int> counts;
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    if (t.device(v).type == type) ++counts[t.device(v).model_name];
  if (counts.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& [model, n] : counts) parts.push_back(std::to_string(n) + " x " + model);
  return join(parts, ", ");
}

std::string socket_links(const Topology& t) {
  std::vector<std::string> parts;
  for (const Link& l : t.links()) {
    if (l.kind == LinkKind::socket || l.kind == LinkKind::numa)
      parts.push_back(t.device(l.a).id + "-" + t.device(l.b).id + " " + l.model_name + " x" + std::to_string(l.count));
  }
  return parts.empty() ? "" : ", joined by " + join(parts, "; ");
}

int nvlinks_of(const Topology& t, Vertex gpu) {
  int n = 0;
  for (Edge e : boost::make_iterator_range(boost::out_edges(gpu, t.graph())))
    if (t.link(e).kind == LinkKind::nvlink) n += t.link(e).count;
  return n;
}

// "GPU1 x1, GPU3 x2" for direct NVLinks, "15 GPUs via 6 NVSwitches" through switches.
std::string nvlink_peers(const Topology& t, int gpu) {
  std::vector<std::string> direct;
  int switched = 0;
  int planes = 0;
  for (int other = 0; other < t.gpu_count(); ++other) {
    if (other == gpu) continue;
    Route route = find_route(t, gpu, other, RouteOptions{});
    if (route.kind != RouteKind::nvlink) continue;
    if (route.path.hops.size() == 1)
      direct.push_back("GPU" + std::to_string(other) + " x" + std::to_string(route.nvlinks));
    else {
      ++switched;
      planes = std::max(planes, route.planes);
    }
  }
  if (switched > 0)
    direct.push_back(std::to_string(switched) + " GPUs via " + std::to_string(planes) + " NVSwitch" +
                     (planes == 1 ? "" : "es"));
  return direct.empty() ? "none" : join(direct, ", ");
}

std::string pcie_parent(const Topology& t, Vertex device) {
  for (Edge e : boost::make_iterator_range(boost::out_edges(device, t.graph())))
    if (t.link(e).kind == LinkKind::pcie) return t.device(t.other_end(e, device)).id;
  return "";
}

// NICs at the closest PCIe relation to the GPU: "NIC0 (PIX)".
std::string nearest_nics(const Topology& t, Vertex gpu) {
  static const std::vector<std::string> order = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  std::size_t best = order.size();
  std::vector<std::string> names;
  for (Vertex nic : t.nics()) {
    std::string rel = relation(t, gpu, nic);
    std::size_t rank = std::find(order.begin(), order.end(), rel) - order.begin();
    std::string name = "NIC" + std::to_string(t.device(nic).nic_index);
    if (rank < best) {
      best = rank;
      names = {name};
    } else if (rank == best) {
      names.push_back(name);
    }
  }
  return names.empty() ? "none" : join(names, ",") + " (" + order[best] + ")";
}

// Largest topology whose per-GPU table topo show prints. Each row routes its GPU to every other
// (the NVLink peers column), so the table costs GPUs^2 route searches over a graph that grows
// with the GPUs: 256 GPUs took 3 s, 1024 over a minute (docs/limits.md).
constexpr int kMaxGpuTableGpus = 512;

std::string gpu_table_limit_message(const Topology& t) {
  return "the per-GPU table is printed for at most " + std::to_string(kMaxGpuTableGpus) + " GPUs; " + t.name() +
         " has " + std::to_string(t.gpu_count());
}

Table gpu_table(const Topology& t) {
  Table table({{"gpu"}, {"id"}, {"model"}, {"nvlinks"}, {"nvlink_peers"}, {"pcie_parent"}, {"cpu"}, {"nearest_nic"}});
  for (int g = 0; g < t.gpu_count(); ++g) {
    Vertex v = t.gpu(g);
    table.add_row({"GPU" + std::to_string(g), t.device(v).id, t.device(v).model_name,
                   static_cast<long long>(nvlinks_of(t, v)), nvlink_peers(t, g), pcie_parent(t, v),
                   t.device(t.local_cpu(v)).id, nearest_nics(t, v)});
  }
  return table;
}

std::string nvlink_line(const Topology& t) {
  std::map<int, int> per_gpu;
  std::map<std::string, double> rates;
  for (Vertex v : t.gpus()) ++per_gpu[nvlinks_of(t, v)];
  for (const Link& l : t.links())
    if (l.kind == LinkKind::nvlink) rates[l.model_name] = l.bandwidth_Bps;
  if (rates.empty()) return "none";
  std::vector<std::string> counts, models;
  for (const auto& [n, gpus] : per_gpu) counts.push_back(std::to_string(n));
  for (const auto& [model, rate] : rates) models.push_back(model + " at " + fixed(rate / kGB, 2) + " GB/s");
  return join(counts, "/") + " per GPU, " + join(models, ", ") + " per link per direction";
}

std::string summary_text(const Topology& t, std::optional<double> nv_bisection, std::optional<double> all_bisection) {
  auto gb = [](std::optional<double> v) { return v ? fixed(*v / kGB, 2) + " GB/s" : std::string("n/a"); };
  Table head({{"key"}, {"value"}});
  const GpuModel& gpu0 = t.gpu_model(0);
  std::string gpus = count_by_model(t, DeviceType::gpu);
  if (gpus.find(',') == std::string::npos) gpus += " (" + gpu0.description + ")";
  std::string nics = count_by_model(t, DeviceType::nic);
  if (!t.nics().empty()) {
    const NicModel& nic = t.device(t.nics().front()).nic();
    nics += " (" + nic.port_model + " ports)";
  }
  std::string out = t.name() + ": " + t.description() + "\n\n";
  std::vector<std::pair<std::string, std::string>> rows = {
      {"file", t.file()},
      {"GPUs", gpus},
      {"NVLink", nvlink_line(t)},
      {"NVSwitches", count_by_model(t, DeviceType::nvswitch)},
      {"PCIe switches", count_by_model(t, DeviceType::pcie_switch)},
      {"CPUs", count_by_model(t, DeviceType::cpu) + socket_links(t)},
      {"NICs", nics},
      {"servers", std::to_string(t.node_count())},
      {"network", count_by_model(t, DeviceType::network_switch)},
      {"bisection", gb(nv_bisection) + " over NVLink, " + gb(all_bisection) +
                        " over all links (one direction, line rate, worst balanced split of the GPUs)"}};
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  for (const auto& [key, value] : rows) out += key + std::string(width + 2 - key.size(), ' ') + value + "\n";
  if (t.gpu_count() > kMaxGpuTableGpus) return out + "\n(" + gpu_table_limit_message(t) + ")\n";
  return out + "\n" + gpu_table(t).to_text();
}

std::string summary_json(const Topology& t, std::optional<double> nv_bisection, std::optional<double> all_bisection) {
  Table table({{"name"}, {"description"}, {"file"}, {"gpus"}, {"nvswitches"}, {"pcie_switches"}, {"cpus"}, {"nics"},
               {"bisection_nvlink_GBps", 2}, {"bisection_GBps", 2}});
  auto count = [&](DeviceType type) {
    long long n = 0;
    for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph()))) n += t.device(v).type == type;
    return n;
  };
  auto value = [](std::optional<double> v) { return Cell(v ? *v / kGB : std::numeric_limits<double>::quiet_NaN()); };
  table.add_row({t.name(), t.description(), t.file(), static_cast<long long>(t.gpu_count()), count(DeviceType::nvswitch),
                 count(DeviceType::pcie_switch), count(DeviceType::cpu), count(DeviceType::nic), value(nv_bisection),
                 value(all_bisection)});
  Table gpus = gpu_table(t);
  return table.to_json_object(0, {{"gpu_table", &gpus}});
}

std::string matrix_text(const TopoMatrix& m) {
  // nvidia-smi's layout: tab-separated, " X " on the diagonal, affinity columns for GPUs.
  std::string out = "\t";
  for (const auto& label : m.labels) out += label + "\t";
  out += "CPU Affinity\tNUMA Affinity\n";
  for (std::size_t r = 0; r < m.labels.size(); ++r) {
    out += m.labels[r];
    for (const auto& cell : m.cells[r]) out += "\t" + (cell == "X" ? std::string(" X ") : cell);
    out += "\t" + m.cpu_affinity[r] + "\t" + m.numa_affinity[r] + "\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (!m.nic_names.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t i = 0; i < m.nic_names.size(); ++i) out += "  NIC" + std::to_string(i) + ": " + m.nic_names[i] + "\n";
  }
  return out;
}

Table matrix_table(const TopoMatrix& m) {
  std::vector<Column> columns = {{"device"}};
  for (const auto& label : m.labels) columns.push_back({label});
  columns.push_back({"cpu_affinity"});
  columns.push_back({"numa_affinity"});
  columns.push_back({"name"});
  Table table(columns);
  std::size_t gpus = m.labels.size() - m.nic_names.size();
  for (std::size_t r = 0; r < m.labels.size(); ++r) {
    std::vector<Cell> row = {m.labels[r]};
    for (const auto& cell : m.cells[r]) row.push_back(cell);
    row.push_back(m.cpu_affinity[r]);
    row.push_back(m.numa_affinity[r]);
    row.push_back(r >= gpus ? m.nic_names[r - gpus] : std::string());
    table.add_row(row);
  }
  return table;
}

}  // namespace

void add_topo_command(CLI::App& app, Context& context) {
  CLI::App* topo = app.add_subcommand("topo", "Inspect a topology");
  topo->require_subcommand(1);
  CLI::App* show = topo->add_subcommand("show", "Summary, nvidia-smi topo -m matrix, or Graphviz of a topology");
  struct Options {
    std::string topology;
    std::string format;
    bool matrix = false;
    bool dot = false;
    ScaleOut scale;
  };
  auto options = std::make_shared<Options>();
  show->add_option("topology", options->topology, "Topology file, or the name of a bundled one (dgx-a100)")->required();
  add_format_option(*show, options->format);
  auto* matrix = show->add_flag("--matrix", options->matrix, "Print the matrix nvidia-smi topo -m prints");
  show->add_flag("--dot", options->dot, "Print Graphviz (dot) text")->excludes(matrix);
  add_scale_out_options(*show, options->scale);
  show->callback([options, &context]() {
    Topology t = context.workspace().topology(options->topology, options->scale);
    Format format = parse_format(options->format);
    if (options->dot) {
      if (format != Format::table) throw UsageError("--dot prints Graphviz; it cannot be combined with --format");
      std::ostringstream out;
      write_dot(out, t);
      context.out = out.str();
      return;
    }
    if (options->matrix) {
      TopoMatrix m = topo_matrix(t);
      context.out = format == Format::table ? matrix_text(m) : matrix_table(m).render(format);
      return;
    }
    auto nv = bisection_Bps(t, true);
    auto all = bisection_Bps(t, false);
    if (format != Format::table && t.gpu_count() > kMaxGpuTableGpus)
      throw UsageError(gpu_table_limit_message(t) + " (--format " + options->format +
                       " includes it): use --format table for the summary alone");
    if (format == Format::table) context.out = summary_text(t, nv, all);
    else if (format == Format::csv) context.out = gpu_table(t).to_csv();
    else context.out = summary_json(t, nv, all);
  });
  add_topo_export_command(*topo, context);
  add_topo_list_command(*topo, context);
  add_topo_diff_command(*topo, context);
}

}  // namespace topsim
