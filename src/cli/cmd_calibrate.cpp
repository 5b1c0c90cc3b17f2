// topsim calibrate: every fitted constant of models/ solved from the calibration rows of
// scenarios/validation/, written back with its provenance; --check only compares.
#include <memory>

#include "cli/calibrate_measured.hpp"
#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "study/predictions.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

Table constants_table(const CalibrationReport& report, const ModelSet& models) {
  Table table({{"constant"}, {"method"}, {"old", 6}, {"new", 6}, {"unit"}, {"residual_pct", 3}, {"solved_from"}});
  for (const SolvedConstant& s : report.constants) {
    const ModelConstant* c = models.find(s.id);
    table.add_row({s.id, s.method, s.old_value, s.value, c->unit.empty() ? std::string("-") : c->unit,
                   s.method == "carried" || s.method == "prior" ? std::numeric_limits<double>::quiet_NaN() : 100 * s.residual,
                   s.rows.empty() ? (s.method == "carried" ? c->provenance.carried_from : std::string("-")) : join(s.rows, " ")});
  }
  return table;
}

// What differs between the committed provenance and the solver's, for --check.
std::string differences(const CalibrationReport& report, const ModelSet& committed) {
  std::string out;
  for (const SolvedConstant& s : report.constants) {
    const ModelConstant& c = *committed.find(s.id);
    std::string line;
    if (c.value != s.value)
      line += " value " + shortest(c.value) + c.unit + " -> " + shortest(s.value) + c.unit;
    if (s.method != "carried") {
      const Provenance& p = c.provenance;
      if (p.solved_from != s.rows) line += " solved_from [" + join(p.solved_from, ", ") + "] -> [" + join(s.rows, ", ") + "]";
      if (p.method != s.method) line += " method '" + p.method + "' -> '" + s.method + "'";
      if (!p.residual || *p.residual != s.residual)
        line += " residual " + (p.residual ? shortest(*p.residual) : std::string("none")) + " -> " + shortest(s.residual);
    }
    if (!line.empty()) out += "  " + s.id + ":" + line + "\n";
  }
  return out;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& context) {
  CLI::App* calibrate_cmd =
      app.add_subcommand("calibrate", "Solve every fitted constant of models/ from the calibration rows and write it back");
  struct Args {
    bool check = false;
    std::string format;
    std::vector<std::string> files;
    int jobs = 1;
    bool quiet = false;
    std::vector<std::string> kernels;  ///< --kernels FILE...: the kernel model's constants instead
  };
  auto args = std::make_shared<Args>();
  auto measured = std::make_shared<MeasuredCalibrationArgs>();
  calibrate_cmd->add_flag("--check", args->check,
                          "Write nothing; exit 1 listing every constant whose committed value or provenance differs");
  add_format_option(*calibrate_cmd, args->format);
  add_jobs_option(*calibrate_cmd, args->jobs);
  add_quiet_option(*calibrate_cmd, args->quiet);
  calibrate_cmd->add_option("files", args->files, "Validation files (default: every scenarios/validation/*.json)");
  calibrate_cmd->add_option("--measured", measured->logs, "nccl-tests output of your machine: solve only the constants it pins")
      ->check(CLI::ExistingFile);
  std::vector<CLI::Option*> with_measured = {
      calibrate_cmd->add_option("--topology", measured->topology, "With --measured: the topology the logs ran on"),
      calibrate_cmd->add_option("--out", measured->out, "With --measured: the overlay directory to write (use it with --models)"),
      calibrate_cmd->add_option("--nodes", measured->nodes, "With --measured: servers of that topology (default: the log's hosts)")
          ->check(CLI::Range(1, 1 << 20)),
      calibrate_cmd->add_option("--op", measured->op, "With --measured: the operation of runs that name no program"),
      add_gpu_option(*calibrate_cmd, measured->gpu),
      calibrate_cmd->add_option("--leave-out", measured->leave_out,
                                "With --measured: hold out sizes MIN-MAX (64M-8G) and report the error on them"),
      calibrate_cmd->add_flag("--split", measured->split, "With --measured: hold out every other size and report the error on them")};
  calibrate_cmd->add_option("--kernels", args->kernels,
                            "Kernel tables (CSV): solve the kernel model's constants per architecture, family and dtype "
                            "into models/compute.json \"kernels\" (rows on GPUs by their device column, or --gpu)")
      ->check(CLI::ExistingFile);
  calibrate_cmd->callback([args, measured, with_measured, calibrate_cmd, &context]() {
    if (!args->kernels.empty()) {
      if (!measured->logs.empty() || !args->files.empty())
        throw UsageError("--kernels solves the kernel constants; leave out --measured and validation files");
      for (const CLI::Option* o : with_measured)
        if (o->count() > 0 && o->get_name() != "--gpu") throw UsageError(o->get_name() + " applies to --measured LOG only");
      KernelCommandArgs kernels;
      kernels.files = args->kernels;
      kernels.gpu = measured->gpu;
      kernels.format = args->format;
      kernels.threads = args->jobs;
      kernels.check = args->check;
      run_kernel_calibration(context, kernels);
      return;
    }
    if (!measured->logs.empty()) {
      if (args->check || !args->files.empty() || calibrate_cmd->count("--format") > 0)
        throw UsageError("--measured writes an overlay; leave out --check, --format and validation files");
      measured->jobs = args->jobs;
      measured->quiet = args->quiet;
      run_measured_calibration(context, *measured);
      return;
    }
    for (const CLI::Option* o : with_measured)
      if (o->count() > 0) throw UsageError(o->get_name() + " applies to --measured LOG only");
    if (context.workspace().models_are_overlay())
      throw UsageError("--models " + context.models_dir + " is an overlay; calibrate without --measured solves a whole models folder");
    std::vector<ValidationRow> rows = load_validation_rows(context.workspace(), args->files);
    ModelSet committed = context.workspace().model_set();
    ModelSet models = committed;
    Progress progress("topsim calibrate", "predictions", stderr_progress(args->quiet));
    CalibrationReport report = calibrate(models, rows, child_predictor(context.workspace(), args->jobs, &progress));
    progress.finish();
    Format format = parse_format(args->format);
    context.out = constants_table(report, models).render(format);
    auto changed = models.changed_files();
    if (format == Format::table)
      context.out += "\n" + std::to_string(report.constants.size()) + " constants, " + std::to_string(report.sweeps) +
                     " sweeps, " + std::to_string(report.predictions) + " predictions; " +
                     (changed.empty() ? std::string("models/ already equal the solution")
                                      : std::to_string(changed.size()) + (args->check ? " files differ" : " files written")) +
                     "\n";
    if (args->check) {
      if (!changed.empty())
        throw ExitStatus(1, "committed models differ from what calibrate solves (run topsim calibrate):\n" +
                                differences(report, committed));
      return;
    }
    for (const auto& [path, text] : changed) write_file_whole(path, text, "calibrate");
  });
}

}  // namespace topsim
