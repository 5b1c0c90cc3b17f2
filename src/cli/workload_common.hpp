#pragma once
// What `run` and `compare` share: a scenario's counts and variants from flags, and its table.
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "workload/scenario.hpp"

namespace topsim {

/// --gpus or --nodes (at most one; "" for none) replacing a scenario's counts.
void override_counts(ScenarioSpec& scenario, const std::string& gpus, const std::string& nodes);

/// Keeps only the variant named `name`; UsageError listing the names when none is.
void select_variant(ScenarioSpec& scenario, const std::string& name);

/// One row per point: variant, topology, GPUs, servers, iteration time and its parts,
/// throughput, speedup and efficiency, and the ratio to the first variant's throughput at the
/// same point. `table` format shows milliseconds; csv and json carry seconds (`iteration_s`).
Table scenario_table(const std::vector<ScenarioPoint>& points, Format format);

}  // namespace topsim
