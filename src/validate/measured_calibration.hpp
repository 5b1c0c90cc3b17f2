#pragma once
// `topsim calibrate --measured`: which constants a user's nccl-tests rows can pin, and the split
// of those rows into the ones solved from and the ones held out to measure the result on.
#include <string>
#include <vector>

#include "io/model_set.hpp"
#include "validate/calibrate.hpp"
#include "validate/validation.hpp"

namespace topsim {

/// What part of the rows is held out: sizes in [low_B, high_B], or every other size (--split).
struct HoldOut {
  bool range = false;
  double low_B = 0, high_B = 0;
  bool split = false;
  std::string text;  ///< as given ("64M-8G", "alternate sizes"); "" when nothing is held out
};

/// "64M-8G" (nccl-tests sizes, powers of 1024, both ends included) or one size "1G". UsageError
/// naming what is valid otherwise.
HoldOut parse_leave_out(const std::string& text);

/// Rows solved from (`fit`) and held out (`held`): by size range, or (split) the 2nd, 4th, ...
/// of the distinct sizes in ascending order. UsageError when either part would be empty.
void split_rows(const std::vector<ValidationRow>& rows, const HoldOut& hold, std::vector<ValidationRow>& fit,
                std::vector<ValidationRow>& held);

/// A constant of the models the rows used that no row pins, and why.
struct UnpinnedConstant {
  std::string id;
  std::string reason;
};

struct PinChoice {
  std::vector<ValidationRow> rows;  ///< the rows that pin something, `pins` set (what calibrate_chosen solves)
  std::vector<std::string> loose;   ///< ids of rows that move no fitted constant enough to pin one
  std::vector<UnpinnedConstant> unpinned;
  std::vector<ValidationResult> before;  ///< every row predicted with the models as given
  int predictions = 0;
};

/// A row pins a constant when a 1% change of it moves the row's prediction by at least this
/// fraction of 1% (d log predicted / d log value); below it the row cannot resolve it.
constexpr double kMinPinSlope = 0.05;

/// The constants `rows` can pin: every row is predicted once, then once per fitted constant of
/// a model the rows used (ValidationResult::things) moved down by 1%; each row pins the constant
/// it moves most, if by at least kMinPinSlope. Fitted constants the rows used but do not pin, and
/// the assumptions and carried constants they used (not solved: they have no prior or bounds, or
/// belong to other hardware), are named with the reason.
PinChoice choose_pins(const ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict);

}  // namespace topsim
