#include "study/scenarios.hpp"

namespace topsim {

TopologyFactory topology_factory(const Workspace& workspace) {
  return [&workspace](const std::string& topology, const ScaleOut& scale, const std::string& gpu) {
    return workspace.topology(topology, scale, gpu);
  };
}

std::vector<ScenarioPoint> run_scenario_points(const ScenarioSpec& scenario, const Workspace& workspace, Batch& batch) {
  return run_scenario(scenario, workspace.catalog(), topology_factory(workspace), batch.platforms());
}

}  // namespace topsim
