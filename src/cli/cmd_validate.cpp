// topsim validate: every bundled published measurement beside its prediction.
#include <algorithm>
#include <filesystem>

#include "cli/common.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/validation.hpp"

namespace topsim {

namespace {

std::string measured_text(const ValidationRow& row) {
  int digits = row.metric == "latency_us" ? 2 : 2;
  if (row.measured_low == row.measured_high) return fixed(row.measured_low, digits);
  return fixed(row.measured_low, digits) + "-" + fixed(row.measured_high, digits);
}

std::string status(const ValidationResult& r) {
  if (!r.row.tolerance) return "info";
  return r.pass() ? "ok" : "FAIL";
}

Table results_table(const std::vector<ValidationResult>& results, bool with_sources) {
  std::vector<Column> columns = {{"id"},          {"role"},        {"metric"},     {"measured"}, {"predicted", 2},
                                 {"error_pct", 1}, {"target_pct"}, {"status"}, {"ran"}};
  if (with_sources) columns.push_back({"source"});
  Table table(columns);
  for (const auto& r : results) {
    std::vector<Cell> row = {r.row.id,
                             r.row.role,
                             r.row.metric,
                             measured_text(r.row),
                             r.predicted,
                             100 * r.error,
                             r.row.tolerance ? fixed(100 * *r.row.tolerance, 0) : std::string("-"),
                             status(r),
                             r.detail.empty() ? std::string("-") : r.detail};
    if (with_sources) row.push_back(r.row.source);
    table.add_row(row);
  }
  return table;
}

std::string summary_text(const std::vector<ValidationResult>& results, const std::vector<TargetResult>& targets) {
  std::string out;
  for (const RoleSummary& s : summarize(results))
    out += s.role + ": " + std::to_string(s.rows) + " rows, geometric-mean |error| " +
           fixed(100 * s.geomean_abs_error, 1) + "%, worst " + fixed(100 * s.worst_abs_error, 1) + "% (" + s.worst_id +
           ")\n";
  int failed = static_cast<int>(std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.pass(); }));
  int gated = static_cast<int>(std::count_if(results.begin(), results.end(), [](const auto& r) { return r.row.tolerance.has_value(); }));
  out += std::to_string(gated - failed) + " of " + std::to_string(gated) + " gated rows within target; " +
         std::to_string(results.size() - gated) + " rows informational\n";
  for (const TargetResult& t : targets) {
    out += "target " + t.target.metric + " over " + std::to_string(t.rows) + " rows:";
    if (t.target.geomean)
      out += " geometric-mean |error| " + fixed(100 * t.geomean_abs_error, 1) + "% (target " +
             fixed(100 * *t.target.geomean, 0) + "%)";
    if (t.target.worst)
      out += " worst " + fixed(100 * t.worst_abs_error, 1) + "% (target " + fixed(100 * *t.target.worst, 0) + "%)";
    out += t.pass() ? ": ok\n" : ": FAIL\n";
  }
  return out;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& context) {
  CLI::App* validate = app.add_subcommand("validate", "Compare predictions with every bundled published measurement");
  struct Args {
    std::string format;
    std::vector<std::string> files;
  };
  auto args = std::make_shared<Args>();
  validate->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))
      ->default_val("table");
  validate->add_option("files", args->files, "Validation files (default: every scenarios/validation/*.json)");
  validate->callback([args, &context]() {
    std::vector<std::string> files = args->files;
    if (files.empty()) {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(context.data_dir + "/scenarios/validation", ec))
        if (entry.path().extension() == ".json") files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(context.data_dir + "/scenarios/validation", "", "no validation files found");
    }
    std::vector<ValidationRow> rows;
    std::vector<ValidationTarget> targets;
    for (const auto& file : files) {
      ValidationFile loaded = load_validation_file(file);
      for (const auto& row : loaded.rows)
        for (const auto& earlier : rows)
          if (earlier.id == row.id)
            throw InputError(row.where.file, row.where.pointer + "/id",
                             "row id '" + row.id + "' is also used at " + earlier.where.file + ":" + earlier.where.pointer);
      rows.insert(rows.end(), loaded.rows.begin(), loaded.rows.end());
      targets.insert(targets.end(), loaded.targets.begin(), loaded.targets.end());
    }
    Catalog catalog = context.catalog();
    EvaluationInputs inputs;
    inputs.topology = [&](const std::string& name, const ScaleOut& scale, const std::string& gpu) {
      return context.topology(name, scale, gpu);
    };
    inputs.scenario = [&](const std::string& name) { return load_scenario(context.scenario_path(name)); };
    inputs.catalog = &catalog;
    auto results = evaluate(rows, inputs);
    auto target_results = check_targets(targets, results);
    if (args->format == "markdown") {
      context.out = results_table(results, true).to_markdown() + "\n" + summary_text(results, target_results);
    } else {
      Format format = parse_format(args->format);
      Table table = results_table(results, format != Format::table);
      context.out = table.render(format);
      if (format == Format::table) context.out += "\n" + summary_text(results, target_results);
    }
    int failed = static_cast<int>(std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.pass(); }));
    int missed = static_cast<int>(
        std::count_if(target_results.begin(), target_results.end(), [](const auto& t) { return !t.pass(); }));
    if (failed > 0 || missed > 0)
      throw ExitStatus(1, std::to_string(failed) + " validation rows outside their target, " + std::to_string(missed) +
                              " summary targets missed\n");
  });
}

}  // namespace topsim
