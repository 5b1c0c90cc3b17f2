#include <filesystem>
#include <fstream>

#include "cli/calibrate_measured.hpp"
#include "cli/coll_common.hpp"
#include "cli/measured_checks.hpp"
#include "cli/validate_measured.hpp"
#include "interop/nccl_tests_rows.hpp"
#include "io/io.hpp"
#include "io/model_overlay.hpp"
#include "study/predictions.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"
#include "validate/measured_calibration.hpp"

namespace topsim {

namespace {

// The command as given, for each constant's provenance (no date: outputs stay deterministic).
std::string command_line(const MeasuredCalibrationArgs& a) {
  std::string text = "topsim calibrate --measured " + join(a.logs, " ") + " --topology " + a.topology;
  if (!a.gpu.empty()) text += " --gpu " + a.gpu;
  if (a.nodes > 0) text += " --nodes " + std::to_string(a.nodes);
  if (!a.op.empty()) text += " --op " + a.op;
  if (!a.leave_out.empty()) text += " --leave-out " + a.leave_out;
  if (a.split) text += " --split";
  return text + " --out " + a.out;
}

// "FILE:LINE" of a row imported from a log: its note starts with it (nccl_tests_rows.cpp).
std::string line_of(const ValidationRow& row) { return row.note.substr(0, row.note.find(": ")); }

std::string accuracy_line(const std::string& what, const std::vector<ValidationResult>& results) {
  std::vector<double> errors;
  for (const ValidationResult& r : results) errors.push_back(r.error);
  AccuracySummary s = accuracy_of(errors);
  return what + fixed(100 * s.geomean_error, 1) + "% (median " + fixed(100 * s.median_abs_error, 1) + "%, worst " +
         fixed(100 * s.worst_abs_error, 1) + "%)";
}

// Writes DIR/overlay.json whole: into a fresh DIR.tmp, then renamed over DIR (an earlier overlay
// is replaced; any other existing directory is refused, so nothing of the user's is lost).
void check_out_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !is_overlay_dir(dir) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    throw UsageError("--out " + dir + " exists and is not an overlay (no " + kOverlayFile +
                     "); give a new directory or an earlier overlay to replace");
}

void write_overlay(const std::string& dir, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  check_out_dir(dir);
  const std::string temporary = dir + ".tmp";
  fs::remove_all(temporary, ec);
  if (!fs::create_directories(temporary, ec)) throw UsageError("--out " + dir + ": cannot create " + temporary);
  {
    std::ofstream out(fs::path(temporary) / kOverlayFile, std::ios::binary);
    if (!out || !(out << text).flush()) {
      fs::remove_all(temporary, ec);
      throw UsageError("--out " + dir + ": write failed");
    }
  }
  fs::remove_all(dir, ec);
  fs::rename(temporary, dir, ec);
  if (ec) {
    fs::remove_all(temporary, ec);
    throw UsageError("--out " + dir + ": cannot write");
  }
}

// A busbw no run can reach here would pin a constant to an impossible figure: refused.
void check_ceiling(Context& context, const NcclTestsRun& run, const std::string& file, const Topology& t,
                   const std::vector<int>& gpus, const std::string& op, const std::string& topology) {
  const CollOp coll = parse_op(operation_of(run, file, op));
  Communicator comm(t, gpus, nccl_option(context, run.nccl_version), routes_of(RequestArgs{}));
  const Communicator::BusbwCeiling ceiling = comm.busbw_ceiling(coll);
  std::vector<OverCeiling> over = over_ceiling(run, ceiling);
  if (over.empty()) return;
  const NcclTestsPoint& p = run.points[over.front().point];
  throw InputError(file, place_of(p, over.front().point),
                   std::string(to_string(coll)) + " of " + format_size(p.size_B) + " on " + std::to_string(gpus.size()) +
                       " GPUs: " + over.front().column + " busbw " + fixed(over.front().busbw_GBps, 2) +
                       " GB/s is above the ceiling of " + topology + ", " + ceiling_text(ceiling, t) + " (" +
                       std::to_string(over.size()) + (over.size() == 1 ? " line" : " lines") +
                       " above it); no constant is solved from a figure that cannot be measured there: check the "
                       "log's GPUs and --topology, or take the line out");
}

// The logs' rows; each run must fit the topology, as validate --measured runs it, on the GPUs it
// names, within the physical ceiling.
std::vector<ValidationRow> rows_of_logs(Context& context, const MeasuredCalibrationArgs& args) {
  std::vector<NcclTestsLog> logs;
  for (const std::string& file : args.logs) logs.push_back(parse_nccl_tests_output(read_text_file(file), file));
  ScaleOut asked;
  asked.nodes = args.nodes;
  for (const NcclTestsLog& log : logs)
    for (const NcclTestsRun& run : log.runs)
      if (!run.points.empty()) {
        const Topology& t = context.workspace().topology(args.topology, run_scale_out(run, log.file, asked), args.gpu);
        std::vector<int> gpus = gpus_of_run(run, log.file, t, args.topology);
        check_run_gpus(context.workspace(), run, log.file, t, gpus, args.topology, args.gpu);
        check_ceiling(context, run, log.file, t, gpus, args.op, args.topology);
      }
  return measured_rows(logs, args.topology, args.nodes, args.op, args.gpu).rows;
}

}  // namespace

void run_measured_calibration(Context& context, const MeasuredCalibrationArgs& args) {
  if (args.topology.empty()) throw UsageError("--measured needs --topology: the topology the logs ran on");
  if (args.out.empty()) throw UsageError("--measured needs --out DIR: the overlay directory to write");
  if (!context.models_dir.empty())
    throw UsageError("calibrate --measured solves against the bundled models and writes an overlay of them; leave out --models");
  if (args.split && !args.leave_out.empty()) throw UsageError("--leave-out and --split each hold out part of the logs; give one");
  check_out_dir(args.out);  // refused before anything is solved or printed
  if (!args.op.empty()) parse_op(args.op);
  HoldOut hold;
  if (!args.leave_out.empty()) hold = parse_leave_out(args.leave_out);
  if (args.split) {
    hold.split = true;
    hold.text = "every other size";
  }
  std::vector<ValidationRow> rows = rows_of_logs(context, args), fit, held;
  split_rows(rows, hold, fit, held);

  const ModelSet bundled = context.workspace().model_set();
  ModelSet solved = bundled;
  Progress progress("topsim calibrate", "predictions", stderr_progress(args.quiet));
  PredictEach predict = child_predictor(context.workspace(), args.jobs, &progress);
  PinChoice choice = choose_pins(bundled, fit, predict);
  CalibrationReport report = calibrate_chosen(solved, choice.rows, predict);
  std::vector<std::vector<ValidationResult>> after =
      predict({{&fit, &solved}, {&held, &bundled}, {&held, &solved}});
  progress.finish();

  Table table({{"constant"}, {"method"}, {"bundled", 6}, {"solved", 6}, {"unit"}, {"rows"}, {"residual_pct", 2}, {"pinned_by"}});
  std::vector<OverlayConstant> overlay;
  for (const SolvedConstant& s : report.constants) {
    const ModelConstant& c = *solved.find(s.id);
    std::vector<std::string> ids, lines;
    for (const ValidationRow& r : choice.rows)
      if (r.pins == s.id) {
        ids.push_back(r.id);
        lines.push_back(line_of(r));
      }
    table.add_row({s.id, s.method, s.old_value, s.value, c.unit.empty() ? std::string("-") : c.unit,
                   static_cast<long long>(ids.size()), 100 * s.residual, join(lines, " ")});
    if (s.value == s.old_value) continue;  // the bundled value already fits: nothing to overlay
    OverlayConstant o;
    o.id = s.id;
    o.value = s.value;
    o.unit = c.unit;
    o.bundled = s.old_value;
    o.provenance = {command_line(args), args.logs, ids, lines, s.method, s.residual};
    overlay.push_back(o);
  }
  std::string& out = context.out;
  out = report.constants.empty() ? std::string("no constant is pinned by these rows\n") : table.to_text();
  if (!choice.unpinned.empty()) {
    out += "\nnot pinned by these rows:\n";
    for (const UnpinnedConstant& u : choice.unpinned) out += "  " + u.id + ": " + u.reason + "\n";
  }
  if (!choice.loose.empty())
    out += "\nrows that pin nothing (no fitted constant moves them): " + join(choice.loose, ", ") + "\n";
  out += "\nerror = (predicted - measured) / measured, geo-mean(1+|error|)-1 (busbw from 64 MiB, time below):\n";
  out += "  calibrated on " + std::to_string(fit.size()) + " rows: " + accuracy_line("bundled ", choice.before) + " -> " +
         accuracy_line("solved ", after[0]) + "\n";
  if (!held.empty())
    out += "  held out (" + hold.text + ", " + std::to_string(held.size()) + " rows): " + accuracy_line("bundled ", after[1]) +
           " -> " + accuracy_line("solved ", after[2]) + "\n";
  out += "\n" + std::to_string(report.constants.size()) + " constants solved (" + std::to_string(overlay.size()) +
         " changed), " + std::to_string(choice.unpinned.size()) + " not pinned, " +
         std::to_string(choice.predictions + report.predictions + 3) + " predictions\n";
  if (report.constants.empty())
    throw ExitStatus(1, "error: these logs pin no constant of the models (see above); nothing written to " + args.out + "\n");
  std::string description = "topsim calibrate --measured overlay: constants solved from " + join(args.logs, ", ") + " on " +
                            args.topology + (args.gpu.empty() ? "" : " with --gpu " + args.gpu) + "; every other constant is the bundled models' (load with --models " +
                            args.out + ")";
  write_overlay(args.out, overlay_json(description, overlay));
  out += "wrote " + args.out + "/" + kOverlayFile + " (" + std::to_string(overlay.size()) +
         " constants); use it with --models " + args.out + "\n";
}

}  // namespace topsim
