#pragma once
// Predictions in a child process. SimGrid has one engine per process and seals its platform at
// the first run, so a process can simulate only one set of models; calibration predicts the
// same rows under many trial values of a constant, each in a fork of its own.
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
