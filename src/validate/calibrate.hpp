#pragma once
// `topsim calibrate`: every fitted constant of models/ solved from the validation rows that pin
// it. A constant pinned by one row is solved exactly (the row's prediction equals its measured
// midpoint); by several, by least squares on log(predicted / measured). Constants that share
// rows' predictions are solved in turn (Gauss-Seidel over constants, each a 1-D Gauss-Newton
// solve on the simulator's own predictions) until a whole sweep changes no written digit.
#include <functional>
#include <string>
#include <vector>

#include "io/model_set.hpp"
#include "validate/validation.hpp"

namespace topsim {

/// Predicts `rows` under `models` (each call a fresh simulation: see evaluate_in_child).
using Predict = std::function<std::vector<ValidationResult>(const std::vector<ValidationRow>&, const ModelSet&)>;

/// One prediction of several asked at once.
struct PredictionAsk {
  const std::vector<ValidationRow>* rows = nullptr;
  const ModelSet* models = nullptr;
};
/// Makes every prediction asked (independent of each other, so possibly at the same time) and
/// returns their results in the order asked.
using PredictEach = std::function<std::vector<std::vector<ValidationResult>>(const std::vector<PredictionAsk>&)>;

/// `predict` called on each ask in turn.
PredictEach in_turn(Predict predict);

struct SolvedConstant {
  std::string id;
  double old_value = 0;             ///< as committed
  double value = 0;                 ///< as solved, rounded as written
  std::vector<std::string> rows;    ///< the calibration rows that pin it (after leaving a source out)
  std::string method;               ///< "exact", "least_squares", "prior" (no row left) or "carried"
  double residual = 0;              ///< RMS of (predicted / measured - 1) over `rows`
};

struct CalibrationReport {
  std::vector<SolvedConstant> constants;  ///< fitted constants, then carried ones, in models order
  int sweeps = 0;
  int predictions = 0;                    ///< simulations run (child processes)
};

/// Rows and models must declare each other: a calibration row pins a fitted constant that
/// exists, every fitted constant is pinned by at least one calibration row, a carried constant
/// names a fitted one and check rows that exist. InputError at the offending place otherwise.
void check_declarations(const ModelSet& models, const std::vector<ValidationRow>& rows);

/// Solves every fitted constant (leaving out the rows of source `left_out`, if not empty: a
/// constant left with no row takes its prior) and sets carried ones; values and, when nothing
/// is left out, provenance are written into `models`. InputError when a row does not depend on
/// the constant it pins, when one row cannot be matched within its tolerance, or when several
/// rows pin one constant inconsistently beyond their tolerance.
CalibrationReport calibrate(ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict,
                            const std::string& left_out = "");

/// Solves only the constants that `rows` pin (each row's `pins`; its role is not looked at), each
/// from the rows that name it, keeping every other constant as it is: no prior, no carried
/// constant follows, no tolerance check (a user's log is fitted as well as the model can, and the
/// residual says how well). What `calibrate --measured` runs. InputError for a row pinning an
/// unknown constant or one its prediction does not depend on.
CalibrationReport calibrate_chosen(ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict);

/// Default tolerance of a calibration row that states none, for the consistency checks.
constexpr double kDefaultCalibrationTolerance = 0.05;

}  // namespace topsim
