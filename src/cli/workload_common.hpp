#pragma once
// What `run` and `compare` share: a scenario's counts and variants from flags.
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "study/scenarios.hpp"

namespace topsim {

/// --gpus or --nodes (at most one; "" for none) replacing a scenario's counts.
void override_counts(ScenarioSpec& scenario, const std::string& gpus, const std::string& nodes);

/// Keeps only the variant named `name`; UsageError listing the names when none is.
void select_variant(ScenarioSpec& scenario, const std::string& name);

}  // namespace topsim
