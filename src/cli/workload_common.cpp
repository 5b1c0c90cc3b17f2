#include "cli/workload_common.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

void override_counts(ScenarioSpec& scenario, const std::string& gpus, const std::string& nodes) {
  if (!gpus.empty() && !nodes.empty()) throw UsageError("give --gpus or --nodes, not both");
  if (!gpus.empty()) {
    scenario.gpus = counts_option(gpus, "--gpus");
    scenario.nodes.clear();
  }
  if (!nodes.empty()) {
    scenario.nodes = counts_option(nodes, "--nodes");
    scenario.gpus.clear();
  }
}

void select_variant(ScenarioSpec& scenario, const std::string& name) {
  std::vector<std::string> names;
  for (const Variant& v : scenario.variants) {
    if (v.name == name) {
      Variant keep = v;
      scenario.variants = {keep};
      return;
    }
    names.push_back(v.name);
  }
  throw UsageError("--variant " + name + ": the scenario's variants are " + join(names, ", "));
}

}  // namespace topsim
