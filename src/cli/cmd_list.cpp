// topsim topo list and topsim models list: what is bundled, one line each, so that a new user
// does not have to provoke an "unknown topology" message to see the names.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "cli/common.hpp"
#include "io/io.hpp"
#include "topology/figures.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

/// The *.json of a data folder's subfolder, by name.
std::vector<std::string> json_files(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

/// What one server holds per GPU and per server: GPU 0's NVLinks (lanes, and their line rate in
/// one direction), and the server's NICs by model.
struct ServerFigures {
  int gpus = 0;
  std::string gpu_model;
  int nvlinks_per_gpu = 0;
  double nvlink_Bps = 0;
  int nics = 0;
  std::string nic_model;
};

ServerFigures server_figures(const Topology& t) {
  ServerFigures f;
  f.gpus = t.gpu_count();
  if (f.gpus == 0) return f;
  f.gpu_model = t.device(t.gpu(0)).model_name;
  const GpuNvlinks nvlinks = gpu_nvlinks(t, 0);
  f.nvlinks_per_gpu = nvlinks.links;
  f.nvlink_Bps = nvlinks.line_rate_Bps;
  std::map<std::string, int> models;
  for (Vertex nic : t.nics()) ++models[t.device(nic).model_name];
  f.nics = static_cast<int>(t.nics().size());
  std::vector<std::string> names;
  for (const auto& [model, n] : models) names.push_back(model);
  f.nic_model = names.empty() ? "-" : join(names, " + ");
  return f;
}

Table topologies_table(Context& context, const std::string& kind, bool first_sentence) {
  // The table keeps a line readable: the description's first sentence; CSV and JSON keep it all.
  auto described = [&](const std::string& text) {
    std::size_t end = text.find(". ");
    return first_sentence && end != std::string::npos ? text.substr(0, end + 1) : text;
  };
  Table table({{"name"}, {"kind"}, {"servers"}, {"gpus"}, {"gpu"}, {"nvlinks_per_gpu"}, {"nvlink_GBps", 1},
               {"nics_per_server"}, {"nic"}, {"description"}});
  const std::string& data = context.workspace().data_dir();
  if (kind != "clusters")
    for (const std::string& path : json_files(data + "/topologies")) {
      const Topology& t = context.workspace().topology(path, ScaleOut{}, "");
      ServerFigures f = server_figures(t);
      table.add_row({stem(path), std::string("server"), static_cast<long long>(t.node_count()),
                     static_cast<long long>(f.gpus), f.gpu_model, static_cast<long long>(f.nvlinks_per_gpu),
                     f.nvlink_Bps / kGB, static_cast<long long>(f.nics), f.nic_model, described(t.description())});
    }
  if (kind != "servers")
    for (const std::string& path : json_files(data + "/topologies/clusters")) {
      // Two servers of the cluster are built (it may hold 131,072 GPUs): enough for its fabric
      // to wire one GPU's NVLinks (an NVLink domain's leave the server) and one server's NICs.
      ClusterSpec cluster = load_cluster_spec(path);
      const Topology& two = context.workspace().topology(path, ScaleOut{2, "", 0}, "");
      ServerFigures f = server_figures(two);
      f.nics /= two.node_count();
      table.add_row({stem(path), std::string("cluster"), static_cast<long long>(cluster.nodes),
                     static_cast<long long>(cluster.nodes) * (f.gpus / two.node_count()), f.gpu_model,
                     static_cast<long long>(f.nvlinks_per_gpu), f.nvlink_Bps / kGB, static_cast<long long>(f.nics),
                     f.nic_model, described(cluster.description)});
    }
  return table;
}

/// A datasheet figure that may be absent: "-" when zero.
Cell figure(double value) { return value > 0 ? Cell(value) : Cell(std::string("-")); }

double dense_tflops(const GpuModel& m, const std::string& key) {
  auto it = m.math.find(key);
  return it == m.math.end() ? 0 : it->second.dense_flops_per_s / 1e12;
}

Table gpus_table(const Catalog& catalog) {
  Table table({{"name"}, {"architecture"}, {"sms"}, {"memory_GiB", 0}, {"memory_GBps", 0}, {"fp16_tensor_tflops", 1},
               {"fp32_tflops", 1}, {"nvlinks"}, {"nvlink"}, {"pcie"}, {"tdp_W", 0}, {"description"}});
  for (const auto& [name, m] : catalog.gpus())
    table.add_row({name, m.architecture, static_cast<long long>(m.sms), m.memory_B / kGiB, m.memory_Bps / kGB,
                   figure(dense_tflops(m, "fp16_tensor")), figure(dense_tflops(m, "fp32")),
                   static_cast<long long>(m.nvlink_count), m.nvlink_model.empty() ? std::string("-") : m.nvlink_model,
                   m.pcie_model, figure(m.tdp_W), m.description});
  return table;
}

Table nics_table(const Catalog& catalog) {
  Table table({{"name"}, {"ports"}, {"port"}, {"port_Gbps", 0}, {"link_layer"}, {"pcie"}, {"description"}});
  for (const auto& [name, m] : catalog.nics()) {
    const LinkModel& port = catalog.link(m.port_model, m.where);
    table.add_row({name, static_cast<long long>(m.ports), m.port_model, port.bandwidth_Bps * 8 / 1e9,
                   port.link_layer.empty() ? std::string("-") : port.link_layer, m.pcie_model, m.description});
  }
  return table;
}

Table links_table(const Catalog& catalog) {
  Table table({{"name"}, {"kind"}, {"bandwidth_GBps", 2}, {"efficiency", 3}, {"latency_us", 3}, {"lanes"},
               {"description"}});
  for (const auto& [name, m] : catalog.links())
    table.add_row({name, std::string(to_string(m.kind)), m.bandwidth_Bps / kGB, m.efficiency, m.latency_s / kUs,
                   static_cast<long long>(m.lanes), m.description});
  return table;
}

Table cpus_table(const Catalog& catalog) {
  Table table({{"name"}, {"cores"}, {"pcie_lanes"}, {"memory_GBps", 1}, {"socket_link"}, {"socket_links"},
               {"vendor"}, {"description"}});
  for (const auto& [name, m] : catalog.cpus())
    table.add_row({name, m.cores > 0 ? Cell(static_cast<long long>(m.cores)) : Cell(std::string("-")),
                   static_cast<long long>(m.pcie_lanes), m.memory_Bps / kGB,
                   m.socket_link.empty() ? std::string("-") : m.socket_link, static_cast<long long>(m.socket_links),
                   m.cpuid_vendor.empty() ? std::string("-") : m.cpuid_vendor, m.description});
  return table;
}

}  // namespace

void add_topo_list_command(CLI::App& topo, Context& context) {
  auto* list = topo.add_subcommand("list", "The bundled servers and clusters, one line each");
  struct Options {
    std::string kind = "all";
    std::string format;
  };
  auto options = std::make_shared<Options>();
  list->add_option("kind", options->kind, "servers, clusters or all (default)");
  add_format_option(*list, options->format);
  list->callback([options, &context]() {
    Format format = parse_format(options->format);
    static const std::vector<std::string> kinds = {"servers", "clusters", "all"};
    if (std::find(kinds.begin(), kinds.end(), options->kind) == kinds.end())
      throw UsageError("topo list " + options->kind + ": " + unknown_name_message("list kind", options->kind, kinds));
    context.out = topologies_table(context, options->kind, format == Format::table).render(format);
  });
}

void add_models_command(CLI::App& app, Context& context) {
  auto* models = app.add_subcommand("models", "The hardware models of models/ (or --models DIR)");
  models->require_subcommand(1);
  auto* list = models->add_subcommand("list", "One line per GPU, NIC, link or CPU model, with its key figures");
  struct Options {
    std::string kind;
    std::string format;
  };
  auto options = std::make_shared<Options>();
  list->add_option("kind", options->kind, "gpus, nics, links or cpus");
  add_format_option(*list, options->format);
  list->callback([options, &context]() {
    Format format = parse_format(options->format);
    static const std::vector<std::string> kinds = {"gpus", "nics", "links", "cpus"};
    if (options->kind.empty()) throw UsageError("models list: name the models to list: " + join(kinds, ", "));
    if (std::find(kinds.begin(), kinds.end(), options->kind) == kinds.end())
      throw UsageError("models list " + options->kind + ": " + unknown_name_message("list kind", options->kind, kinds));
    const Catalog& catalog = context.workspace().catalog();
    Table table = options->kind == "gpus"    ? gpus_table(catalog)
                  : options->kind == "nics"  ? nics_table(catalog)
                  : options->kind == "links" ? links_table(catalog)
                                             : cpus_table(catalog);
    context.out = table.render(format);
  });
}

}  // namespace topsim
