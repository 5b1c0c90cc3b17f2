#include "study/predictions.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
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

PredictEach child_predictor(const Workspace& workspace, int jobs, Progress* progress) {
  auto made = std::make_shared<std::size_t>(0);  // predictions so far, over every call
  return [&workspace, jobs, progress, made](const std::vector<PredictionAsk>& asked) {
    std::vector<ChildPrediction> children;
    for (const PredictionAsk& a : asked)
      children.push_back(ChildPrediction{a.rows, [&workspace, a] { return evaluate_with(workspace, *a.rows, a.models->catalog()); }});
    std::vector<std::vector<ValidationResult>> out = evaluate_in_children(children, jobs);
    *made += asked.size();
    if (progress != nullptr) progress->update(*made, 0);
    return out;
  };
}

ValidationRun run_validation(const Workspace& workspace, const std::vector<ValidationRow>& rows, const ModelSet& models,
                             bool cross, const std::string& only_source, int jobs, Progress* progress) {
  ValidationRun run;
  std::set<std::string> sources;
  for (const ValidationRow& row : rows) sources.insert(row.source);
  if (!only_source.empty() && !sources.count(only_source))
    throw UsageError(unknown_name_message("--leave-out source", only_source,
                                          std::vector<std::string>(sources.begin(), sources.end())));
  std::vector<ValidationRow> asked;
  for (const ValidationRow& row : rows)
    if (only_source.empty() || row.source == only_source) asked.push_back(row);
  run.results = evaluate_in_child(asked, [&] { return evaluate_with(workspace, asked, models.catalog()); });
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
  std::vector<std::string> left_out;
  for (const std::string& source : pinning)
    if (only_source.empty() || source == only_source) left_out.push_back(source);
  // One child per source re-solves the constants without it and predicts its rows; the cores go
  // to the sources side by side, or to a lone source's own solve.
  int inner_jobs = left_out.size() > 1 ? 1 : jobs;
  PredictEach predict = child_predictor(workspace, inner_jobs);
  std::vector<std::vector<ValidationRow>> own(left_out.size());
  std::vector<ChildPrediction> children;
  for (std::size_t i = 0; i < left_out.size(); ++i) {
    for (const ValidationResult& r : run.results)
      if (r.evaluated && r.row.source == left_out[i]) own[i].push_back(r.row);
    children.push_back(ChildPrediction{&own[i], [&, i] {
      ModelSet without = models;
      calibrate(without, rows, predict, left_out[i]);
      return predict({PredictionAsk{&own[i], &without}}).front();
    }});
  }
  if (progress != nullptr) progress->update(0, children.size());
  std::vector<std::vector<ValidationResult>> predicted = evaluate_in_children(children, jobs, progress);
  for (std::size_t i = 0; i < left_out.size(); ++i) {
    std::size_t next = 0;
    for (ValidationResult& r : run.results)
      if (r.evaluated && r.row.source == left_out[i]) {
        r.predicted_cross = predicted[i][next].predicted;
        r.error_cross = predicted[i][next].error;
        ++next;
      }
  }
  return run;
}

}  // namespace topsim
