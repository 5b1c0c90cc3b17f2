#pragma once
// What `validate` and `calibrate` share: the validation rows of scenarios/validation/, and
// predictions of rows under a set of models, each in a child process (see evaluate_in_child),
// with topologies and scenarios found through a Workspace.
#include <string>
#include <vector>

#include "study/workspace.hpp"
#include "util/progress.hpp"
#include "validate/calibrate.hpp"

namespace topsim {

/// Every row of `files` (default: every scenarios/validation/*.json), cross-checked.
std::vector<ValidationRow> load_validation_rows(const Workspace& workspace, const std::vector<std::string>& files);

/// Predicts rows under ModelSets, each in a child process of its own, at most `jobs` children at
/// once; the returned function refers to `workspace` (and `progress`, when not null, which it
/// tells the predictions made so far, of a total nobody knows ahead: calibrate's solves decide).
PredictEach child_predictor(const Workspace& workspace, int jobs, Progress* progress = nullptr);

/// Results of every row under the committed models, and (cross) each evaluated row's prediction
/// with the constants re-solved without its own source. `only_source`: leave out just this one
/// (and return only its rows). Each source is left out in a child process of its own, `jobs` at
/// once (a lone source's solve uses the `jobs` itself); the results do not depend on `jobs`.
/// `progress` (may be null) counts the sources left out.
struct ValidationRun {
  std::vector<ValidationResult> results;
};
ValidationRun run_validation(const Workspace& workspace, const std::vector<ValidationRow>& rows, const ModelSet& models,
                             bool cross, const std::string& only_source, int jobs, Progress* progress = nullptr);

}  // namespace topsim
