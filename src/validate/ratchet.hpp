#pragma once
// The per-class accuracy ratchet: a class may not get worse than its committed figure, nor fall
// behind NCCL's own estimate, without a commit that raises its entry and says why.
#include <string>
#include <vector>

#include "model/accuracy_ratchet.hpp"
#include "validate/validation.hpp"

namespace topsim {

/// How far a class's geo-mean error may grow before the ratchet fails, in percentage points
/// (issue 49: "fails when a class's error grows by more than 1 point").
constexpr double kRatchetTolerancePct = 1.0;
/// Classes with at least this many rows that NCCL's tuner estimates must not be less accurate
/// than that estimate (issue 49's acceptance: "in no class with 10 or more check rows").
constexpr int kNcclFloorRows = 10;

/// The ratchet entries of measured class summaries, in their order.
AccuracyRatchet ratchet_of(const std::vector<ClassSummary>& classes);

/// Whether a class with enough NCCL-estimated rows is less accurate than NCCL's estimate.
bool behind_nccl(const RatchetEntry& entry);

/// Every way `measured` breaks `committed`, one line each ("" entries never): a class worse by
/// more than the tolerance, a class newly behind NCCL's estimate, and, when `every_class` (all
/// validation files were read), a class added or gone. Without `every_class` only classes with as
/// many rows as committed are compared: the others are other figures.
std::vector<std::string> ratchet_failures(const AccuracyRatchet& committed, const AccuracyRatchet& measured,
                                          bool every_class);

/// Check rows of one validation file (its stem) and quantity, as the sets report them.
struct SetSummary {
  std::string set;  ///< "nccl-public busbw>=64MiB"
  AccuracySummary simulated;
  AccuracySummary nccl;  ///< rows == 0 where none of the set's rows has NCCL's estimate
};
std::vector<SetSummary> summarize_sets(const std::vector<ValidationResult>& results);

}  // namespace topsim
