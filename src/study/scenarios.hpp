#pragma once
// Training scenarios run through a Workspace (topologies) on a Batch (platforms), and their
// table: what run, compare and sweep hand a scenario to.
#include <vector>

#include "report/table.hpp"
#include "study/batch.hpp"
#include "study/workspace.hpp"
#include "workload/scenario.hpp"

namespace topsim {

/// Topologies of a scenario's points, built through `workspace` (kept while it lives).
TopologyFactory topology_factory(const Workspace& workspace);

/// Every point of a scenario, each on a platform of `batch`.
std::vector<ScenarioPoint> run_scenario_points(const ScenarioSpec& scenario, const Workspace& workspace, Batch& batch);

/// One row per point: variant, topology, GPUs, servers, iteration time and its parts,
/// throughput, speedup and efficiency, and the ratio to the first variant's throughput at the
/// same point. `table` format shows milliseconds; csv and json carry seconds (`iteration_s`).
Table scenario_table(const std::vector<ScenarioPoint>& points, Format format);

}  // namespace topsim
