// topsim validate: every bundled published measurement beside its prediction; --cross predicts
// each row with the constants re-solved without its own source.
#include <algorithm>
#include <cmath>
#include <limits>
#include <iostream>
#include <map>
#include <optional>

#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "cli/validate_measured.hpp"
#include "study/predictions.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/ratchet.hpp"

namespace topsim {

namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

std::string measured_text(const ValidationRow& row) {
  if (row.measured_low == row.measured_high) return fixed(row.measured_low, 2);
  return fixed(row.measured_low, 2) + "-" + fixed(row.measured_high, 2);
}

std::string ran(const ValidationResult& r) {
  if (r.row.role == "pending") return "missing: " + r.row.missing;
  if (r.row.role == "repeat") return "repeats " + r.row.repeats + (r.detail.empty() ? "" : "; " + r.detail);
  if (r.row.role == "calibration") return "pins " + r.row.pins + (r.detail.empty() ? "" : "; " + r.detail);
  return r.detail.empty() ? "-" : r.detail;
}

Table results_table(const std::vector<ValidationResult>& results, bool cross, bool percent) {
  double scale = percent ? 100 : 1;
  int digits = percent ? 1 : 4;
  std::string error = percent ? "error_pct" : "error";
  std::vector<Column> columns = {{"id"}, {"source"}, {"role"}, {"quantity"}, {"metric"}, {"measured"}, {"predicted", 2},
                                 {error, digits}};
  if (cross) {
    columns.push_back({"predicted_cross", 2});
    columns.push_back({percent ? "error_cross_pct" : "error_cross", digits});
  }
  columns.push_back({"ran"});
  Table table(columns);
  for (const auto& r : results) {
    std::vector<Cell> row = {r.row.id, r.row.source, r.row.role, r.quantity, r.row.metric, measured_text(r.row),
                             r.evaluated ? r.predicted : kNone, r.evaluated ? scale * r.error : kNone};
    if (cross) {
      row.push_back(r.predicted_cross ? *r.predicted_cross : kNone);
      row.push_back(r.error_cross ? scale * *r.error_cross : kNone);
    }
    row.push_back(ran(r));
    table.add_row(row);
  }
  return table;
}

std::string summary_lines(const std::vector<AccuracySummary>& summaries) {
  std::string out;
  for (const AccuracySummary& s : summaries)
    out += "  " + s.quantity + ": " + std::to_string(s.rows) + " rows, geo-mean(1+|error|)-1 " +
           fixed(100 * s.geomean_error, 1) + "%, median " + fixed(100 * s.median_abs_error, 1) + "%, worst " + fixed(100 * s.worst_abs_error, 1) + "% (" + s.worst_id +
           ")\n";
  return out.empty() ? "  (none)\n" : out;
}

// Assumed and carried constants of the models each simulated row used, with how many rows used them.
std::string assumed_used(const std::vector<ValidationResult>& results, const ModelSet& models) {
  std::map<std::string, int> used;
  for (const ModelConstant& c : models.constants()) {
    if (c.provenance.kind != Provenance::Kind::assumed && c.provenance.kind != Provenance::Kind::carried) continue;
    for (const ValidationResult& r : results)
      if (r.evaluated && r.things.count(c.thing)) ++used[c.id];
  }
  std::string out;
  for (const ModelConstant& c : models.constants()) {
    auto it = used.find(c.id);
    if (it == used.end()) continue;
    out += "  " + c.id + " (" + to_string(c.provenance.kind) + ", " + std::to_string(it->second) + " rows): " +
           (c.provenance.kind == Provenance::Kind::carried ? "from " + c.provenance.carried_from + "; " : "") +
           c.provenance.text + "\n";
  }
  return out.empty() ? "  (none)\n" : out;
}

// Every constant that is not a cited fact, with what pins it or where its assumption comes from.
Table constants_table(const ModelSet& models) {
  Table table({{"constant"}, {"provenance"}, {"value"}, {"pinned by, or source"}});
  for (const ModelConstant& c : models.constants()) {
    const Provenance& p = c.provenance;
    std::string value = c.has_value ? shortest(c.value) + c.unit : std::string("-");
    std::string why;
    if (p.kind == Provenance::Kind::fitted)
      why = join(p.solved_from, ", ") + " (" + p.method + ", residual " + fixed(100 * p.residual.value_or(0), 2) +
            "%); prior " + shortest(*p.prior) + c.unit + ": " + p.prior_source;
    else if (p.kind == Provenance::Kind::carried)
      why = "from " + p.carried_from + ", backed by " + join(p.backed_by, ", ") + ": " + p.text;
    else
      why = p.text;
    table.add_row({c.id, std::string(to_string(p.kind)), value, why});
  }
  return table;
}

std::string summary_text(const ValidationRun& run, const ModelSet& models, bool cross) {
  std::map<std::string, int> roles;
  for (const auto& r : run.results) ++roles[r.row.role];
  std::string out = "rows:";
  for (const char* role : {"calibration", "check", "repeat", "informational", "pending"})
    out += std::string(" ") + std::to_string(roles[role]) + " " + role + (role == std::string("pending") ? "\n" : ",");
  if (cross) {
    out += "check rows (nothing was solved on them), cross-validated (constants re-solved without the row's own source):\n";
    out += summary_lines(summarize(run.results, "check", true));
    const ScaleTrend trend = llm_error_by_data_parallel(run.results);
    if (trend.rows > 0) {
      out += "LLM check rows against the data-parallel degree (cross-validated; signed: + predicts faster than measured):\n";
      for (std::size_t b = 0; b < trend.bands.size(); ++b) {
        const AccuracySummary& a = trend.bands[b];
        out += "  " + a.quantity + ": " + std::to_string(a.rows) + " rows, geo-mean(1+|error|)-1 " +
               fixed(100 * a.geomean_error, 1) + "%, mean signed " + fixed(100 * trend.mean_signed_error[b], 1) + "%\n";
      }
      out += "  trend: " + fixed(100 * trend.slope_per_doubling, 2) + " points of signed error per doubling of dp (least squares, " +
             std::to_string(trend.rows) + " rows)\n";
    }
    out += "calibration rows, each predicted with its own source left out:\n";
    out += summary_lines(summarize(run.results, "calibration", true));
  }
  out += "check rows with the committed models" + std::string(cross ? "" : " (--cross gives the cross-validated headline)") +
         ":\n";
  out += summary_lines(summarize(run.results, "check", false));
  out += "assumed and carried constants the predictions used:\n" + assumed_used(run.results, models);
  return out;
}

// Per class: the simulation's cross-validated error on the check rows beside NCCL's own estimate
// on the rows the tuner estimates (and the simulation on those same rows).
Table class_table(const AccuracyRatchet& classes, const std::vector<ClassSummary>& summaries) {
  Table table({{"class"}, {"rows", 0}, {"gm_pct", 1}, {"median_pct", 1}, {"worst_pct", 1}, {"worst_row"}, {"nccl_rows", 0},
               {"sim_gm_on_nccl_rows_pct", 1}, {"nccl_gm_pct", 1}, {"nccl_ahead"}});
  for (std::size_t i = 0; i < classes.classes.size(); ++i) {
    const RatchetEntry& e = classes.classes[i];
    const bool estimated = e.nccl_rows > 0;
    table.add_row({e.accuracy_class, static_cast<double>(e.rows), e.geomean_pct, e.median_pct, e.worst_pct,
                   summaries[i].simulated.worst_id, static_cast<double>(e.nccl_rows),
                   estimated ? e.simulated_on_nccl_rows_pct : kNone, estimated ? e.nccl_geomean_pct : kNone,
                   std::string(!estimated ? "-" : e.simulated_on_nccl_rows_pct > e.nccl_geomean_pct ? "yes" : "no")});
  }
  return table;
}

Table set_table(const std::vector<SetSummary>& sets) {
  Table table({{"set"}, {"rows", 0}, {"gm_pct", 1}, {"median_pct", 1}, {"worst_pct", 1}, {"worst_row"}, {"nccl_rows", 0},
               {"nccl_gm_pct", 1}});
  for (const SetSummary& s : sets)
    table.add_row({s.set, static_cast<double>(s.simulated.rows), 100 * s.simulated.geomean_error,
                   100 * s.simulated.median_abs_error, 100 * s.simulated.worst_abs_error, s.simulated.worst_id,
                   static_cast<double>(s.nccl.rows), s.nccl.rows > 0 ? 100 * s.nccl.geomean_error : kNone});
  return table;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& context) {
  CLI::App* validate = app.add_subcommand("validate", "Compare predictions with every bundled published measurement");
  struct Args {
    std::string format;
    bool cross = false;
    std::string leave_out;
    std::vector<std::string> files;
    int jobs = 1;
    bool quiet = false;
    MeasuredArgs measured;  ///< --measured LOG --topology T: a user's nccl-tests output instead
    std::vector<std::string> kernels;  ///< --kernels FILE...: kernel tables instead
    int folds = 5;
    bool by_class = false;
    std::string ratchet;        ///< --ratchet FILE: fail when a class is worse than FILE holds
    std::string write_ratchet;  ///< --write-ratchet FILE: write the classes measured now
  };
  auto args = std::make_shared<Args>();
  validate->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))
      ->default_val("table");
  validate->add_flag("--cross", args->cross,
                     "Also predict every row with the constants re-solved without its own source (cross-validation)");
  validate->add_option("--leave-out", args->leave_out,
                       "Re-solve the constants without this source's rows and predict them (a source id)");
  add_jobs_option(*validate, args->jobs);
  add_quiet_option(*validate, args->quiet);
  validate->add_option("files", args->files, "Validation files (default: every scenarios/validation/*.json)");
  add_measured_options(*validate, args->measured);
  validate->add_option("--kernels", args->kernels,
                       "Kernel tables (CSV, docs/formats.md \"Kernel tables\"): the kernel model per GPU, family, dtype "
                       "and size class, in-sample and held out by shape; --gpu puts every row on one model")
      ->check(CLI::ExistingFile);
  validate->add_flag("--by-class", args->by_class,
                     "With --cross: the check rows' accuracy per class (GPU generation / server kind / network / "
                     "quantity), beside NCCL's own estimate, and per validation file");
  validate->add_option("--ratchet", args->ratchet,
                       "With --cross: exit 1 when a class is more than 1 point worse than FILE holds, falls behind "
                       "NCCL's estimate, or appears or disappears (tests/accuracy-ratchet.json)")
      ->check(CLI::ExistingFile);
  validate->add_option("--write-ratchet", args->write_ratchet,
                       "With --cross: write the classes measured now to FILE (the ratchet's format)");
  validate->add_option("--folds", args->folds, "With --kernels: folds of the cross-validation by shape (default 5)")
      ->check(CLI::Range(2, 100));
  validate->callback([args, validate, &context]() {
    if (!args->kernels.empty()) {
      if (!args->measured.logs.empty() || !args->files.empty() || args->cross || !args->leave_out.empty())
        throw UsageError("--kernels validates kernel tables; leave out --measured, validation files, --cross and --leave-out");
      for (const std::string& name : args->measured.options)
        if (name != "--gpu" && validate->count(name) > 0) throw UsageError(name + " applies to --measured LOG only");
      KernelCommandArgs kernels;
      kernels.files = args->kernels;
      kernels.gpu = args->measured.gpu;
      kernels.format = args->format;
      kernels.threads = args->jobs;
      kernels.folds = args->folds;
      context.out = kernel_validation_report(context, kernels);
      return;
    }
    if (validate->count("--folds") > 0) throw UsageError("--folds applies to --kernels only");
    if (!args->measured.logs.empty()) {
      if (!args->files.empty() || args->cross || !args->leave_out.empty())
        throw UsageError("--measured compares logs with predictions; leave out validation files, --cross and --leave-out");
      if (args->format == "markdown") throw UsageError("--format markdown: with --measured give table, csv or json");
      context.out = measured_report(context, args->measured, parse_format(args->format));
      return;
    }
    check_measured_options(*validate, args->measured);
    std::vector<ValidationRow> rows = load_validation_rows(context.workspace(), args->files);
    ModelSet models = context.workspace().model_set();
    const bool classes = args->by_class || !args->ratchet.empty() || !args->write_ratchet.empty();
    if (classes && !args->cross)
      throw UsageError("--by-class, --ratchet and --write-ratchet report cross-validated check rows; add --cross");
    if (classes && !args->leave_out.empty())
      throw UsageError("--by-class, --ratchet and --write-ratchet need every source's rows; leave out --leave-out");
    // Read before the 40-second run, so a malformed file fails at once.
    std::optional<AccuracyRatchet> committed;
    if (!args->ratchet.empty()) committed = load_accuracy_ratchet(args->ratchet);
    bool cross = args->cross || !args->leave_out.empty();
    Progress progress("topsim validate", "sources left out", stderr_progress(args->quiet));
    ValidationRun run =
        run_validation(context.workspace(), rows, models, args->cross, args->leave_out, args->jobs, &progress);
    progress.finish();
    if (classes) {
      std::vector<ClassSummary> summaries = summarize_classes(run.results);
      AccuracyRatchet measured = ratchet_of(summaries);
      if (args->format == "markdown") throw UsageError("--format markdown: with --by-class give table, csv or json");
      Format format = parse_format(args->format);
      context.out = class_table(measured, summaries).render(format);
      if (format == Format::table) context.out += "\n" + set_table(summarize_sets(run.results)).render(format);
      if (!args->write_ratchet.empty()) write_file_whole(args->write_ratchet, accuracy_ratchet_json(measured), "--write-ratchet");
      if (committed) {
        std::vector<std::string> failures = ratchet_failures(*committed, measured, args->files.empty());
        if (!failures.empty())
          throw ExitStatus(1, "accuracy ratchet " + args->ratchet + ": " + std::to_string(failures.size()) +
                                  " classes fail:\n  " + join(failures, "\n  ") + "\n");
        std::cerr << "accuracy ratchet " << args->ratchet << ": " << measured.classes.size() << " classes hold\n";
      }
      return;
    }
    if (args->format == "markdown") {
      context.out = results_table(run.results, cross, true).to_markdown() + "\n" + summary_text(run, models, cross) +
                    "\nConstants that are not cited facts (models/*.json):\n\n" + constants_table(models).to_markdown();
      return;
    }
    Format format = parse_format(args->format);
    context.out = results_table(run.results, cross, format == Format::table).render(format);
    if (format == Format::table) context.out += "\n" + summary_text(run, models, cross);
  });
}

}  // namespace topsim
