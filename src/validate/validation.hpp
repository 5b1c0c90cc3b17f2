#pragma once
// Published measurements beside topsim's predictions: the accuracy table.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/validation_spec.hpp"
#include "model/workload_spec.hpp"

namespace topsim {

struct ValidationResult {
  ValidationRow row;
  double predicted = 0;
  double error = 0;  ///< (predicted - measured midpoint) / measured midpoint
  std::string detail;  ///< what the prediction ran (a collective's algorithm/protocol)
  bool pass() const { return !row.tolerance || std::abs(error) <= *row.tolerance; }
};

struct RoleSummary {
  std::string role;
  int rows = 0;
  double geomean_abs_error = 0;  ///< geometric mean of |error| (floored at 0.01% so exact rows count)
  double worst_abs_error = 0;
  std::string worst_id;
};

std::vector<RoleSummary> summarize(const std::vector<ValidationResult>& results);

/// A target evaluated over the rows of its metric.
struct TargetResult {
  ValidationTarget target;
  int rows = 0;
  double geomean_abs_error = 0;
  double worst_abs_error = 0;
  bool pass() const;
};

/// Each target over the gated rows (those with a tolerance) of its metric.
std::vector<TargetResult> check_targets(const std::vector<ValidationTarget>& targets,
                                        const std::vector<ValidationResult>& results);

class Topology;

/// What evaluate() needs to turn rows into simulations.
struct EvaluationInputs {
  /// A topology by name or path, with a scale-out request and a GPU what-if ("" for none).
  std::function<Topology(const std::string&, const ScaleOut&, const std::string&)> topology;
  /// A training scenario by path or bundled name (training rows only).
  std::function<ScenarioSpec(const std::string&)> scenario;
  const Catalog* catalog = nullptr;  ///< networks, frameworks, compute models (training rows only)
};

/// Predicts every row with the engine; all platforms are built up front in one Simulator
/// (SimGrid seals the platform at the first run).
std::vector<ValidationResult> evaluate(const std::vector<ValidationRow>& rows, const EvaluationInputs& inputs);

}  // namespace topsim
