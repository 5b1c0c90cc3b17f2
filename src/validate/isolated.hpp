#pragma once
// Predictions in child processes (util/processes.hpp carries them). SimGrid's engine lives for
// the process and never frees a platform, so the hundreds of predictions calibration makes (the same rows under many trial
// values of a constant) each run in a fork of their own, and the parent's memory stays flat.
// Independent predictions (a leave-out per source, the two points of a finite difference) run in
// several children at once; each child computes what it would alone, so the results do not
// depend on how many run together.
#include <functional>
#include <vector>

#include "util/processes.hpp"  // usable_cpus
#include "validate/validation.hpp"

namespace topsim {

/// One child's work: `body` simulates `rows` (and returns their results in that order).
struct ChildPrediction {
  const std::vector<ValidationRow>* rows = nullptr;
  std::function<std::vector<ValidationResult>()> body;
};

/// Runs each body in a forked child, at most `parallel` (>= 1) at a time, and returns their
/// results in the order given. An InputError, UsageError or other exception in a child is thrown
/// again here with the same text; when several fail, the first in the given order is thrown, so
/// the error does not depend on which child finished first. A child never returns into the caller.
/// `progress` (may be null) counts the children that answered.
std::vector<std::vector<ValidationResult>> evaluate_in_children(const std::vector<ChildPrediction>& asked, int parallel,
                                                                Progress* progress = nullptr);

/// The same for one body.
std::vector<ValidationResult> evaluate_in_child(const std::vector<ValidationRow>& rows,
                                                const std::function<std::vector<ValidationResult>()>& body);

}  // namespace topsim
