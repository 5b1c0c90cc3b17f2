#include "cli/common.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/io.hpp"
#include "topology/cluster.hpp"
#include "topology/faults.hpp"
#include "topology/flat.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

Catalog Context::catalog() const { return load_catalog(models()); }

std::string Context::topology_path(const std::string& path_or_name) const {
  std::error_code ec;
  if (std::filesystem::exists(path_or_name, ec)) return path_or_name;
  bool bare_name = path_or_name.find('/') == std::string::npos && path_or_name.find('.') == std::string::npos;
  for (const char* folder : {"/topologies/", "/topologies/clusters/"}) {
    std::string bundled = data_dir + folder + path_or_name + ".json";
    if (bare_name && std::filesystem::exists(bundled, ec)) return bundled;
  }
  std::vector<std::string> names;
  for (const char* folder : {"/topologies", "/topologies/clusters"})
    for (const auto& entry : std::filesystem::directory_iterator(data_dir + folder, ec))
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::string message = "no such file";
  if (bare_name) message = unknown_name_message("topology", path_or_name, names) + " (or give a path to a file)";
  throw InputError(path_or_name, "", message);
}

std::string Context::scenario_path(const std::string& path_or_name) const {
  std::error_code ec;
  if (std::filesystem::exists(path_or_name, ec)) return path_or_name;
  std::string bundled = data_dir + "/scenarios/" + path_or_name + ".json";
  if (path_or_name.find('/') == std::string::npos && std::filesystem::exists(bundled, ec)) return bundled;
  return path_or_name;  // reading it reports that it is missing
}

Topology Context::topology(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model) const {
  return topology(path_or_name, scale, gpu_model, catalog());
}

Topology Context::topology(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model,
                           const Catalog& models, const Faults& faults) const {
  // Faults are applied to the spec as built, before validation, routing and NCCL's search.
  auto build = [&](TopologySpec spec) {
    apply_faults(spec, faults);
    return Topology::build(spec, models);
  };
  if (is_flat_name(path_or_name)) {
    if (scale.any()) throw UsageError("a flat topology is one switch; --nodes, --nic and --nics-per-node do not apply");
    if (!gpu_model.empty()) throw UsageError("a flat topology names its GPU model itself (flat:N:GPU)");
    return build(flat_topology(path_or_name, models));
  }
  // A what-if GPU replaces every GPU's model; the topology's checks (NVLink counts) still apply.
  auto with_gpu = [&](TopologySpec spec) {
    if (gpu_model.empty()) return spec;
    models.gpu(gpu_model, SourceRef{"--gpu", ""});
    for (DeviceSpec& d : spec.devices)
      if (d.type == DeviceType::gpu) d.model = gpu_model;
    return spec;
  };
  std::string path = topology_path(path_or_name);
  if (is_cluster_file(path)) {
    ClusterSpec cluster = rescale_cluster(load_cluster_spec(path), scale);
    // The server is named relative to the cluster file, else as a bundled name or a path.
    std::filesystem::path beside = std::filesystem::path(path).parent_path() / cluster.node;
    std::error_code ec;
    std::string node = std::filesystem::is_regular_file(beside, ec) ? beside.string() : topology_path(cluster.node);
    TopologySpec server = with_gpu(load_topology_spec(node));
    check_nics_per_node(server, scale.nics_per_node);
    return build(expand_cluster(cluster, server, models));
  }
  TopologySpec server = with_gpu(load_topology_spec(path));
  if (!scale.any()) return build(server);
  return build(replicate_server(server, scale, models));
}

void add_scale_out_options(CLI::App& command, ScaleOut& scale) {
  command.add_option("--nodes", scale.nodes, "Servers: replicate the topology under its default fabric")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("--nic", scale.nic, "Replace every NIC: a NIC model or a port type (edr, hdr200, hdr100, ndr, 100gbe)");
  command.add_option("--nics-per-node", scale.nics_per_node, "Use only the first K NICs of each server")
      ->check(CLI::Range(1, 64));
}

std::vector<int> counts_option(const std::string& text, const char* option) {
  std::vector<int> counts;
  try {
    counts = parse_int_list(text);
  } catch (const ParseError& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 1) throw UsageError(std::string(option) + ": " + std::to_string(counts[i]) + " is not a count (1 or more)");
    if (i > 0 && counts[i] <= counts[i - 1])
      throw UsageError(std::string(option) + ": counts must rise (" + std::to_string(counts[i - 1]) + " then " +
                       std::to_string(counts[i]) + ")");
  }
  return counts;
}

void write_file_whole(const std::string& path, const std::string& text, const std::string& option) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw UsageError(option + " " + path + ": cannot write");
    out << text;
    if (!out.flush()) {
      out.close();
      std::remove(temporary.c_str());
      throw UsageError(option + " " + path + ": write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw UsageError(option + " " + path + ": cannot write");
  }
}

double size_option(const std::string& text, const char* option) {
  try {
    return parse_cli_size_B(text);
  } catch (const ParseError& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
}

void add_format_option(CLI::App& command, std::string& format) {
  command.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->default_val("table");
}

}  // namespace topsim
