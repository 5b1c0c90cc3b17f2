#include "topology/flat.hpp"

#include <charconv>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {
// GPUs per CPU: four x16 host links fit the lane budget of every bundled CPU model.
constexpr int kGpusPerCpu = 4;
}  // namespace

bool is_flat_name(const std::string& name) { return name.rfind("flat:", 0) == 0; }

TopologySpec flat_topology(const std::string& name, const Catalog& catalog) {
  std::size_t colon = name.find(':', 5);
  std::string count_text = name.substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
  std::string gpu = colon == std::string::npos ? "" : name.substr(colon + 1);
  int count = 0;
  auto [ptr, ec] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (ec != std::errc() || ptr != count_text.data() + count_text.size() || gpu.empty())
    throw UsageError("'" + name + "': a flat topology is written flat:N:GPU, e.g. flat:1024:h100");
  if (count < 2 || count > kMaxFlatGpus)
    throw UsageError("'" + name + "': a flat topology has 2 to " + std::to_string(kMaxFlatGpus) + " GPUs");
  std::vector<std::string> gpus;
  for (const auto& entry : catalog.gpus()) gpus.push_back(entry.first);
  if (catalog.gpus().count(gpu) == 0) throw UsageError("'" + name + "': " + unknown_name_message("GPU model", gpu, gpus));
  const GpuModel& model = catalog.gpus().at(gpu);
  if (model.nvlink_model.empty()) throw UsageError("'" + name + "': " + gpu + " has no NVLink to put on a flat switch");
  std::string flat_switch = "flat-" + model.nvlink_model;
  if (catalog.switches().count(flat_switch) == 0)
    throw UsageError("'" + name + "': models/ has no switch model '" + flat_switch + "' for " + model.nvlink_model);
  std::string cpu;
  for (const auto& [cpu_name, cpu_model] : catalog.cpus())
    if (cpu.empty() && cpu_model.pcie_lanes >= kGpusPerCpu * catalog.link(model.pcie_model, {}).lanes) cpu = cpu_name;
  if (cpu.empty()) throw UsageError("'" + name + "': no CPU model in models/ has lanes for " + std::to_string(kGpusPerCpu) + " GPUs");

  TopologySpec spec;
  spec.file = name;
  spec.name = name;
  spec.description = std::to_string(count) + " " + gpu + " on one non-blocking " + model.nvlink_model +
                     " switch (generated benchmark topology)";
  auto device = [&](const std::string& id, DeviceType type, const std::string& m) {
    DeviceSpec d;
    d.id = id;
    d.type = type;
    d.model = m;
    d.where = SourceRef{name, "/devices/" + std::to_string(spec.devices.size())};
    spec.devices.push_back(d);
  };
  auto link = [&](const std::string& a, const std::string& b, const std::string& m, int links) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.model = m;
    l.count = links;
    l.where = SourceRef{name, "/links/" + std::to_string(spec.links.size())};
    spec.links.push_back(l);
  };
  for (int g = 0; g < count; ++g) device("gpu" + std::to_string(g), DeviceType::gpu, gpu);
  device("switch", DeviceType::nvswitch, flat_switch);
  int cpus = (count + kGpusPerCpu - 1) / kGpusPerCpu;
  for (int c = 0; c < cpus; ++c) device("cpu" + std::to_string(c), DeviceType::cpu, cpu);
  for (int g = 0; g < count; ++g) {
    link("gpu" + std::to_string(g), "switch", model.nvlink_model, model.nvlink_count);
    link("gpu" + std::to_string(g), "cpu" + std::to_string(g / kGpusPerCpu), model.pcie_model, 1);
  }
  return spec;
}

}  // namespace topsim
