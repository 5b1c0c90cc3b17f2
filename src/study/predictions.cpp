#include "study/predictions.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/isolated.hpp"

namespace topsim {

std::vector<ValidationRow> load_validation_rows(const Workspace& workspace, const std::vector<std::string>& given) {
  std::vector<std::string> files = given;
  if (files.empty()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(workspace.data_dir() + "/scenarios/validation", ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(workspace.data_dir() + "/scenarios/validation", "", "no validation files found");
  }
  std::vector<ValidationRow> rows;
  for (const auto& file : files) {
    ValidationFile loaded = load_validation_file(file);
    rows.insert(rows.end(), loaded.rows.begin(), loaded.rows.end());
  }
  check_rows(rows);
  return rows;
}

namespace {

std::vector<ValidationResult> evaluate_with(const Workspace& workspace, const std::vector<ValidationRow>& rows,
                                            const Catalog& catalog) {
  EvaluationInputs inputs;
  inputs.topology = [&](const std::string& name, const ScaleOut& scale, const std::string& gpu) {
    return workspace.topology(name, scale, gpu, catalog);
  };
  inputs.scenario = [&](const std::string& name) { return load_scenario(workspace.scenario_path(name)); };
  inputs.catalog = &catalog;
  return evaluate(rows, inputs);
}

}  // namespace

Predict child_predictor(const Workspace& workspace) {
  return [&workspace](const std::vector<ValidationRow>& rows, const ModelSet& models) {
    return evaluate_in_child(rows, [&] { return evaluate_with(workspace, rows, models.catalog()); });
  };
}

ValidationRun run_validation(const Workspace& workspace, const std::vector<ValidationRow>& rows, const ModelSet& models,
                             bool cross, const std::string& only_source) {
  Predict predict = child_predictor(workspace);
  ValidationRun run;
  std::set<std::string> sources;
  for (const ValidationRow& row : rows) sources.insert(row.source);
  if (!only_source.empty() && !sources.count(only_source))
    throw UsageError(unknown_name_message("--leave-out source", only_source,
                                          std::vector<std::string>(sources.begin(), sources.end())));
  std::vector<ValidationRow> asked;
  for (const ValidationRow& row : rows)
    if (only_source.empty() || row.source == only_source) asked.push_back(row);
  run.results = predict(asked, models);
  ++run.predictions;
  if (!cross && only_source.empty()) return run;

  // A source with no calibration row pins nothing: leaving it out changes no constant, so its
  // rows' cross-validated predictions are their predictions.
  std::set<std::string> pinning;
  for (const ValidationRow& row : rows)
    if (row.role == "calibration") pinning.insert(row.source);
  for (ValidationResult& r : run.results)
    if (r.evaluated && !pinning.count(r.row.source)) {
      r.predicted_cross = r.predicted;
      r.error_cross = r.error;
    }
  for (const std::string& source : pinning) {
    if (!only_source.empty() && source != only_source) continue;
    ModelSet without = models;
    CalibrationReport report = calibrate(without, rows, predict, source);
    run.predictions += report.predictions;
    run.sources_left_out.push_back(source);
    std::vector<ValidationRow> own;
    for (const ValidationResult& r : run.results)
      if (r.evaluated && r.row.source == source) own.push_back(r.row);
    std::vector<ValidationResult> predicted = predict(own, without);
    ++run.predictions;
    std::size_t next = 0;
    for (ValidationResult& r : run.results)
      if (r.evaluated && r.row.source == source) {
        r.predicted_cross = predicted[next].predicted;
        r.error_cross = predicted[next].error;
        ++next;
      }
  }
  return run;
}

}  // namespace topsim
