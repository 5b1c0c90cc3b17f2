#pragma once
// Predictions in a child process. SimGrid's engine lives for the process and never frees a
// platform, so the hundreds of predictions calibration makes (the same rows under many trial
// values of a constant) each run in a fork of their own, and the parent's memory stays flat.
#include <functional>
#include <vector>

#include "validate/validation.hpp"

namespace topsim {

/// Runs `body` (which simulates `rows`) in a forked child and returns its results in the parent.
/// An InputError, UsageError or other exception in the child is thrown again here with the
/// same text; the child never returns into the caller.
std::vector<ValidationResult> evaluate_in_child(const std::vector<ValidationRow>& rows,
                                                const std::function<std::vector<ValidationResult>()>& body);

}  // namespace topsim
