#include "cli/measured_checks.hpp"

#include <algorithm>
#include <filesystem>

#include "interop/gpu_names.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

std::vector<std::string> bundled_servers_with(const Workspace& workspace, const std::vector<std::string>& models) {
  std::vector<std::string> files, out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(workspace.data_dir() + "/topologies", ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    TopologySpec spec = load_topology_spec(file);
    bool holds = std::any_of(spec.devices.begin(), spec.devices.end(), [&](const DeviceSpec& d) {
      return d.type == DeviceType::gpu && std::find(models.begin(), models.end(), d.model) != models.end();
    });
    if (holds) out.push_back(std::filesystem::path(file).stem().string());
  }
  return out;
}

namespace {

std::string printed_names(const GpuModel& model) {
  std::vector<std::string> quoted;
  for (const std::string& name : model.device_names) quoted.push_back("'" + name + "'");
  return join(quoted, " or ");
}

// What to do instead: the models that print the log's name and the servers that hold them.
std::string suggestion(const Workspace& workspace, const std::string& printed, const std::string& topology) {
  const Catalog& catalog = workspace.catalog();
  std::vector<std::string> models = gpu_models_printing(catalog, printed);
  if (models.empty())
    return "no model of models/gpus.json prints that name (topsim models list gpus); give --gpu with the nearest "
           "one to run " + topology + "'s board with it as a what-if";
  bool exact = gpu_prints_as(catalog.gpus().at(models.front()), printed);
  std::vector<std::string> servers = bundled_servers_with(workspace, models);
  std::string text = (exact ? "that name is " : "no model prints that name; the closest of models/gpus.json: ") +
                     join(models, ", ") + (exact ? " in models/gpus.json" : "");
  const std::string them = models.size() == 1 ? "it" : "them";
  text += servers.empty() ? "; no bundled server holds " + them : "; bundled servers with " + them + ": " + join(servers, ", ");
  // --gpu is offered only where that GPU fits the board (its NVLink generation, its ports).
  try {
    workspace.topology(topology, ScaleOut{}, models.front());
  } catch (const UsageError&) {
    return text + ". Give --topology the server the log ran on (" + models.front() + " does not fit " + topology +
           "'s board, so --gpu cannot stand in for it)";
  }
  return text + ". Give --topology the server the log ran on, or --gpu " + models.front() + " to run " + topology +
         "'s board with that GPU as a what-if";
}

}  // namespace

void check_run_gpus(const Workspace& workspace, const NcclTestsRun& run, const std::string& file, const Topology& t,
                    const std::vector<int>& gpus, const std::string& topology, const std::string& gpu_option) {
  const std::string model_of = gpu_option.empty() ? topology + "'s GPU" : "--gpu";
  bool named = false;
  for (std::size_t i = 0; i < run.ranks.size() && i < gpus.size(); ++i) {
    const NcclTestsRank& r = run.ranks[i];
    if (r.gpu_name.empty()) continue;
    named = true;
    const GpuModel& model = t.gpu_model(gpus[i]);
    if (model.device_names.empty()) {
      workspace.note("models/gpus.json gives " + model.name + " no device_names: the GPU names of " + file +
                     " were not checked against it");
      return;
    }
    if (gpu_prints_as(model, r.gpu_name)) continue;
    std::string at = r.line > 0 ? std::to_string(r.line) : "/config/devices/" + std::to_string(r.rank);
    throw InputError(file, at,
                     "rank " + std::to_string(r.rank) + " ran on '" + r.gpu_name + "' but " + model_of + " " + model.name +
                         " prints " + printed_names(model) + "; " + suggestion(workspace, r.gpu_name, topology));
  }
  if (!named)
    workspace.note(file + " names no GPU (no '# Rank' lines with a device name, util.cu:687): its GPU could not be checked "
                   "against " + t.gpu_model(gpus.empty() ? 0 : gpus.front()).name);
}

std::vector<OverCeiling> over_ceiling(const NcclTestsRun& run, const Communicator::BusbwCeiling& ceiling) {
  std::vector<OverCeiling> out;
  const double ceiling_GBps = ceiling.Bps / kGB;
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const NcclTestsPoint& p = run.points[i];
    if (p.out_of_place.busbw_GBps > ceiling_GBps) out.push_back({i, "out-of-place", p.out_of_place.busbw_GBps});
    else if (p.in_place.busbw_GBps > ceiling_GBps) out.push_back({i, "in-place", p.in_place.busbw_GBps});
  }
  return out;
}

std::string ceiling_text(const Communicator::BusbwCeiling& ceiling, const Topology& t) {
  std::string text = fixed(ceiling.Bps / kGB, 2) + " GB/s: " + t.device(t.gpu(ceiling.gpu)).id + "'s " + ceiling.links +
                     ", one direction at line rate";
  if (!ceiling.doubled_by.empty()) text += ", twice that as " + ceiling.doubled_by + " reduces in the switches";
  return text;
}

}  // namespace topsim
