#pragma once
// Training scenarios run through a Workspace (topologies) on a Batch (platforms): what run,
// compare and sweep hand a scenario to.
#include <vector>

#include "study/batch.hpp"
#include "study/workspace.hpp"
#include "workload/scenario.hpp"

namespace topsim {

/// Topologies of a scenario's points, built through `workspace` (kept while it lives).
TopologyFactory topology_factory(const Workspace& workspace);

/// Every point of a scenario, each on a platform of `batch`.
std::vector<ScenarioPoint> run_scenario_points(const ScenarioSpec& scenario, const Workspace& workspace, Batch& batch);

}  // namespace topsim
