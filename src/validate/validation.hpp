#pragma once
// Published measurements beside topsim's predictions: the accuracy table.
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/validation_spec.hpp"
#include "model/workload_spec.hpp"

namespace topsim {

struct ValidationResult {
  ValidationRow row;
  bool evaluated = false;  ///< false for pending rows: shown with what is missing, never simulated
  std::string quantity;    ///< quantity_of() the row
  double predicted = 0;    ///< with the committed models
  double error = 0;        ///< (predicted - measured midpoint) / measured midpoint
  /// Cross-validated: predicted with the constants re-solved without the row's own source.
  std::optional<double> predicted_cross;
  std::optional<double> error_cross;
  std::string detail;      ///< what the prediction ran (a collective's algorithm/protocol)
  /// The accuracy class the row counts in: GPU generation x server kind x network x quantity for
  /// collectives ("hopper/nvswitch/ib/time<64MiB"), generation x quantity otherwise ("ampere/llm").
  std::string accuracy_class;
  /// NCCL's own tuner estimate for the algorithm and protocol the prediction ran, in the row's
  /// metric; absent where the tuner estimates nothing (p2p operations, copies, workloads). Nothing
  /// in it is fitted, so leaving a source out does not change it.
  std::optional<double> nccl_predicted;
  /// LLM rows: the data-parallel degree the layout ran (dp); 0 for every other row.
  int data_parallel = 0;
  /// The models the prediction used, as constant "things" ("gpus:a100", "nccl:ampere",
  /// "links:nvlink3"): a constant of one of them is a constant the prediction used.
  std::set<std::string> things;
};

/// The developers' guide's accuracy metric over rows of one quantity: the geometric mean of
/// (1 + |error|), minus 1, with the median and the worst |error| beside it. (The geometric mean
/// of |error| itself, used before issue 27, flatters: a few exact rows pull it towards 0.)
struct AccuracySummary {
  std::string quantity;  ///< a quantity_of() name, or "all"
  int rows = 0;
  double geomean_error = 0;  ///< exp(mean(log(1 + |error|))) - 1
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::string worst_id;
};

/// geomean_error, median_abs_error and worst_abs_error of `errors` (signed or not); 0 for none.
AccuracySummary accuracy_of(const std::vector<double>& errors);

/// The LLM check rows' cross-validated error against their data-parallel degree (issue 50: the
/// error must not trend with it): rows in bands of dp (1, 2-15, 16-63, 64-255, 256+), each with
/// its AccuracySummary (quantity = the band) and its mean signed speed error (+: predicted
/// faster than measured; a time metric's error turned into its speed's); `slope_per_doubling` is
/// the least-squares slope of that signed error against log2(dp) over every row.
struct ScaleTrend {
  std::vector<AccuracySummary> bands;
  std::vector<double> mean_signed_error;  ///< per band, speed error
  double slope_per_doubling = 0;
  int rows = 0;
};
ScaleTrend llm_error_by_data_parallel(const std::vector<ValidationResult>& results);

/// Over the rows of `role` that were simulated, per quantity (in a fixed order) and for all of
/// them; `cross` takes error_cross (rows without one are left out).
std::vector<AccuracySummary> summarize(const std::vector<ValidationResult>& results, const std::string& role, bool cross);

/// One accuracy class: the simulation's cross-validated error on its check rows and, beside it,
/// NCCL's own estimate on the rows that have one.
struct ClassSummary {
  std::string accuracy_class;
  AccuracySummary simulated;
  AccuracySummary nccl;  ///< rows == 0 where the tuner estimates none of the class's rows
  /// The simulation over the same rows as `nccl`, so the two are compared like for like.
  AccuracySummary simulated_on_nccl_rows;
};

/// Per accuracy class (sorted by name), over the evaluated check rows with a cross-validated
/// error.
std::vector<ClassSummary> summarize_classes(const std::vector<ValidationResult>& results);

/// Quantities in the order summaries print them.
const std::vector<std::string>& quantity_order();

class Topology;

/// What evaluate() needs to turn rows into simulations.
struct EvaluationInputs {
  /// A topology by name or path, with a scale-out request and a GPU what-if ("" for none).
  std::function<Topology(const std::string&, const ScaleOut&, const std::string&)> topology;
  /// A training scenario by path or bundled name (training rows only).
  std::function<ScenarioSpec(const std::string&)> scenario;
  const Catalog* catalog = nullptr;  ///< compute models (kernel rows), networks, frameworks (training rows)
};

/// Predicts every row but pending ones with the engine; all platforms are built up front in one
/// Simulator (a Simulator seals its platforms at its first run).
std::vector<ValidationResult> evaluate(const std::vector<ValidationRow>& rows, const EvaluationInputs& inputs);

/// Cross-references between rows: unique ids, `repeats` naming another row, the same source id
/// cited the same way in every file. InputError at the offending row otherwise.
void check_rows(const std::vector<ValidationRow>& rows);

}  // namespace topsim
