#include "study/workspace.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "io/io.hpp"
#include "io/model_overlay.hpp"
#include "io/model_set.hpp"
#include "topology/cluster.hpp"
#include "topology/faults.hpp"
#include "topology/flat.hpp"
#include "topology/gpu_swap.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// NVLink planes as the default fabric and no NVSwitch inside: the GPUs' NVLinks lead out.
bool nvlink_leaves_server(const TopologySpec& server) {
  if (!server.scale_out || server.scale_out->kind != "nvlink" || server.scale_out->planes < 1) return false;
  return std::none_of(server.devices.begin(), server.devices.end(),
                      [](const DeviceSpec& d) { return d.type == DeviceType::nvswitch; });
}

// Names, NICs and GPU models never hold a newline, so it separates the parts unambiguously.
std::string cache_key(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model,
                      const Faults& faults) {
  std::string key = path_or_name + "\n" + std::to_string(scale.nodes) + "\n" + scale.nic + "\n" +
                    std::to_string(scale.nics_per_node) + "\n" + gpu_model;
  for (const std::string& f : faults.failed) key += "\nfail " + f;
  for (const LinkDegrade& d : faults.degraded) key += "\ndegrade " + d.link + "=" + significant_text(d.fraction, 17);
  for (const Straggler& g : faults.stragglers) key += "\nstraggler " + g.gpu + "=" + significant_text(g.factor, 17);
  return key;
}

}  // namespace

Workspace::Workspace(std::string data_dir, std::string models_dir)
    : data_dir_(std::move(data_dir)), models_dir_(std::move(models_dir)) {}

Workspace::Workspace(const DataDir& data, std::string models_dir)
    : data_dir_(data.path), models_dir_(std::move(models_dir)), not_found_(data.tried) {}

const std::string& Workspace::data_dir() const {
  if (data_dir_.empty())
    throw InputError("", "",
                     "no data folder (models/, topologies/, scenarios/) found: looked at " + not_found_ +
                         "; set TOPSIM_DATA_DIR to one, or give --models DIR and every file by path");
  return data_dir_;
}

const Catalog& Workspace::catalog() const {
  if (!catalog_) {
    ++catalog_parses_;
    if (models_are_overlay()) {
      catalog_ = model_set().catalog();
    } else {
      // A --models folder is the user's own: uncited models load, each with a note.
      catalog_ = load_catalog(models(), !models_dir_.empty());
      for (const std::string& text : catalog_->notes()) note(text);
    }
  }
  return *catalog_;
}

bool Workspace::models_are_overlay() const { return is_overlay_dir(models_dir_); }

ModelSet Workspace::model_set() const {
  if (!models_are_overlay()) return ModelSet::load(models());
  ModelSet set = ModelSet::load(data_dir() + "/models");
  apply_overlay(set, models_dir_);
  return set;
}

std::string Workspace::topology_path(const std::string& path_or_name) const {
  std::error_code ec;
  if (std::filesystem::exists(path_or_name, ec)) return path_or_name;
  bool bare_name = path_or_name.find('/') == std::string::npos && path_or_name.find('.') == std::string::npos;
  if (!bare_name) throw InputError(path_or_name, "", "no such file");
  for (const char* folder : {"/topologies/", "/topologies/clusters/"}) {
    std::string bundled = data_dir() + folder + path_or_name + ".json";
    if (std::filesystem::exists(bundled, ec)) return bundled;
  }
  std::vector<std::string> names;
  for (const char* folder : {"/topologies", "/topologies/clusters"})
    for (const auto& entry : std::filesystem::directory_iterator(data_dir() + folder, ec))
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  throw InputError(path_or_name, "", unknown_name_message("topology", path_or_name, names) + " (or give a path to a file)");
}

std::string Workspace::scenario_path(const std::string& path_or_name) const {
  std::error_code ec;
  if (std::filesystem::exists(path_or_name, ec)) return path_or_name;
  if (path_or_name.find('/') != std::string::npos) return path_or_name;
  std::string bundled = data_dir() + "/scenarios/" + path_or_name + ".json";
  if (std::filesystem::exists(bundled, ec)) return bundled;
  return path_or_name;  // reading it reports that it is missing
}

const Topology& Workspace::topology(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model,
                                   const Faults& faults) const {
  std::string key = cache_key(path_or_name, scale, gpu_model, faults);
  auto found = topologies_.find(key);
  if (found != topologies_.end()) return found->second;
  Topology built = topology(path_or_name, scale, gpu_model, catalog(), faults);
  ++topology_builds_;
  return topologies_.emplace(std::move(key), std::move(built)).first->second;
}

Topology Workspace::topology(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model,
                             const Catalog& models, const Faults& faults) const {
  // The GPU swap sees the spec as expanded (a cluster's fabric NVLinks are the board's too);
  // faults are applied after it, before validation, routing and NCCL's search.
  auto build = [&](TopologySpec spec) {
    if (!gpu_model.empty()) {
      GpuSwap swap = swap_gpu(spec, gpu_model, models);
      spec.gpu_swap = swap.text();
      for (const std::string& text : swap.notes) note(text);
    }
    apply_faults(spec, faults);
    return Topology::build(spec, models);
  };
  if (is_flat_name(path_or_name)) {
    if (scale.any()) throw UsageError("a flat topology is one switch; --nodes, --nic and --nics-per-node do not apply");
    if (!gpu_model.empty()) throw UsageError("a flat topology names its GPU model itself (flat:N:GPU)");
    return build(flat_topology(path_or_name, models));
  }
  std::string path = topology_path(path_or_name);
  if (is_cluster_file(path)) {
    ClusterSpec cluster = rescale_cluster(load_cluster_spec(path), scale);
    // The server is named relative to the cluster file, else as a bundled name or a path.
    std::filesystem::path beside = std::filesystem::path(path).parent_path() / cluster.node;
    std::error_code ec;
    std::string node = std::filesystem::is_regular_file(beside, ec) ? beside.string() : topology_path(cluster.node);
    TopologySpec server = load_topology_spec(node);
    check_nics_per_node(server, scale.nics_per_node);
    return build(expand_cluster(cluster, server, models));
  }
  TopologySpec server = load_topology_spec(path);
  if (!scale.any() && !nvlink_leaves_server(server)) return build(server);
  // A server whose GPUs' NVLinks all leave it (a GB200 tray) is one server of its NVLink domain
  // even alone: without the switch planes its GPUs would meet only through the CPUs.
  if (scale.any()) return build(replicate_server(server, scale, models));
  ScaleOut one;
  one.nodes = 1;
  TopologySpec alone = replicate_server(server, one, models);
  alone.name = server.name;  // the tray as its file describes it, with the planes it reaches
  alone.description = server.description;
  return build(alone);
}

}  // namespace topsim
