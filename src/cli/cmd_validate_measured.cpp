// topsim validate --measured: nccl-tests logs against predictions of the runs they record.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "cli/measured_checks.hpp"
#include "cli/validate_measured.hpp"
#include "collectives/communicator.hpp"
#include "interop/nccl_tests_rows.hpp"
#include "io/io.hpp"
#include "study/batch.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"
#include "validate/validation.hpp"

namespace topsim {

namespace {

// One run of a log with the communicator that predicts it.
struct PredictedRun {
  std::string file;
  const NcclTestsRun* run = nullptr;
  CollOp op = CollOp::allreduce;
  const Topology* topology = nullptr;
  std::unique_ptr<Communicator> comm;
  std::vector<CollRequest> requests;  ///< one per result line, in order
  PlatformRunner* runner = nullptr;
  Communicator::BusbwCeiling ceiling;
  std::set<std::size_t> over;  ///< result lines above the ceiling (flagged, in no error)
};

std::string run_place(const NcclTestsRun& run) {
  return run.header_line > 0 ? std::to_string(run.header_line) : std::string("/config");
}

}  // namespace

std::vector<int> gpus_of_run(const NcclTestsRun& run, const std::string& file, const Topology& t,
                             const std::string& topology) {
  const int gpus = run.gpu_count();
  std::vector<std::vector<int>> by_server;  // GPU indices of each server, in order
  for (int g = 0; g < t.gpu_count(); ++g) {
    if (g == 0 || t.node_of(g) != t.node_of(g - 1)) by_server.emplace_back();
    by_server.back().push_back(g);
  }
  if (gpus > t.gpu_count())
    throw InputError(file, run_place(run),
                     "the log ran on " + std::to_string(gpus) + " GPUs but " + t.name() + " has " +
                         std::to_string(t.gpu_count()) + "; give the topology it ran on (and --nodes for several servers)");
  std::vector<int> out;
  if (run.ranks.empty()) {
    for (int g = 0; g < gpus; ++g) out.push_back(g);
    return out;
  }
  std::vector<std::string> hosts = run.hosts();
  if (hosts.size() > by_server.size())
    throw InputError(file, run_place(run),
                     "the log ran on " + std::to_string(hosts.size()) + " hosts but " + t.name() + " has " +
                         std::to_string(by_server.size()) + " servers");
  std::set<int> used;
  for (const NcclTestsRank& r : run.ranks) {
    std::size_t server = static_cast<std::size_t>(std::find(hosts.begin(), hosts.end(), r.host) - hosts.begin());
    const std::vector<int>& local = by_server[server];
    std::string at = r.line > 0 ? std::to_string(r.line) : "/config/devices/" + std::to_string(r.rank);
    if (r.device >= static_cast<int>(local.size()))
      throw InputError(file, at,
                       "rank " + std::to_string(r.rank) + " ran on device " + std::to_string(r.device) + " of " + r.host +
                           " but a server of " + topology + " has " + std::to_string(local.size()) + " GPUs");
    int g = local[static_cast<std::size_t>(r.device)];
    if (!used.insert(g).second)
      throw InputError(file, at, "rank " + std::to_string(r.rank) + " shares device " + std::to_string(r.device) + " of " +
                                     r.host + " with an earlier rank; topsim runs one rank per GPU");
    out.push_back(g);
  }
  return out;
}

ScaleOut run_scale_out(const NcclTestsRun& run, const std::string& file, const ScaleOut& asked) {
  ScaleOut scale = asked;
  int hosts = static_cast<int>(run.hosts().size());
  if (hosts > 1 && asked.nodes > 0 && asked.nodes != hosts)
    throw InputError(file, run_place(run),
                     "the log ran on " + std::to_string(hosts) + " hosts (" + join(run.hosts(), ", ") + ") but --nodes " +
                         std::to_string(asked.nodes) + " was given");
  if (hosts > 1) scale.nodes = hosts;
  return scale;
}

namespace {

CollRequest measured_request(const MeasuredArgs& args, CollOp op, const NcclTestsPoint& p, std::size_t index,
                             const std::string& file) {
  CollRequest r = request_of(args.request, op);
  try {
    r.dtype = parse_dtype(p.type);
  } catch (const UsageError& e) {
    throw InputError(file, place_of(p, index), std::string("type column: ") + e.what());
  }
  r.size_B = p.size_B;
  r.root = std::max(p.root, 0);
  return r;
}

double measured_error(double predicted, double measured) { return (predicted - measured) / measured; }

struct MeasuredErrors {
  std::vector<double> values;
  std::vector<std::string> where;
  void add(double e, const std::string& at) {
    values.push_back(e);
    where.push_back(at);
  }
  std::string line(const std::string& what) const {
    AccuracySummary s = accuracy_of(values);
    std::size_t worst = 0;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (std::abs(values[i]) > std::abs(values[worst])) worst = i;
    return "  " + what + ": " + std::to_string(s.rows) + " points, geo-mean(1+|error|)-1 " + fixed(100 * s.geomean_error, 1) +
           "%, median " + fixed(100 * s.median_abs_error, 1) + "%, worst " + fixed(100 * s.worst_abs_error, 1) + "% (" +
           (values.empty() ? std::string("-") : where[worst]) + ")\n";
  }
};

// The rows above their ceiling and the ceilings they break, under the headline ("" for none).
std::string flagged_text(const std::vector<PredictedRun>& runs, const std::vector<std::string>& flagged,
                         const std::string& topology) {
  if (flagged.empty()) return "";
  std::set<std::string> ceilings;
  for (const PredictedRun& p : runs)
    if (!p.over.empty()) ceilings.insert(p.file + ": " + ceiling_text(p.ceiling, *p.topology));
  std::string out = std::to_string(flagged.size()) + (flagged.size() == 1 ? " row" : " rows") +
                    " above the physical ceiling (over_ceiling, left out of the errors above; not physically possible on " +
                    topology + "):\n";
  for (const std::string& f : flagged) out += "  " + f + "\n";
  out += "the busbw no algorithm can exceed there:\n";
  for (const std::string& c : ceilings) out += "  " + c + "\n";
  return out;
}

}  // namespace

void add_measured_options(CLI::App& validate, MeasuredArgs& args) {
  validate.add_option("--measured", args.logs, "nccl-tests output (stdout as printed, or the -J JSON file) to compare with")
      ->check(CLI::ExistingFile);
  const std::size_t before = validate.get_options().size();
  validate.add_option("--topology", args.topology, "With --measured: the topology the logs ran on (a path or bundled name)");
  validate.add_option("--op", args.op, "With --measured: the operation of runs that do not name their program (allreduce, ...)");
  add_gpu_option(validate, args.gpu);
  add_request_options(validate, args.request);
  add_scale_out_options(validate, args.scale);
  const std::vector<CLI::Option*> added = validate.get_options();
  for (std::size_t i = before; i < added.size(); ++i) args.options.push_back(added[i]->get_name());
}

void check_measured_options(const CLI::App& validate, const MeasuredArgs& args) {
  if (!args.logs.empty()) return;
  for (const std::string& name : args.options)
    if (validate.count(name) > 0) throw UsageError(name + " applies to --measured LOG only");
}

std::string measured_report(Context& context, const MeasuredArgs& args, Format format) {
  if (args.topology.empty()) throw UsageError("--measured needs --topology: the topology the logs ran on");
  if (!args.op.empty()) parse_op(args.op);
  std::vector<NcclTestsLog> logs;
  for (const std::string& file : args.logs) logs.push_back(parse_nccl_tests_output(read_text_file(file), file));
  Batch batch;
  std::vector<PredictedRun> runs;
  for (const NcclTestsLog& log : logs)
    for (const NcclTestsRun& run : log.runs) {
      if (run.points.empty()) continue;
      PredictedRun p;
      p.file = log.file;
      p.run = &run;
      p.op = parse_op(operation_of(run, log.file, args.op));
      ScaleOut scale = run_scale_out(run, log.file, args.scale);
      p.topology = &context.workspace().topology(args.topology, scale, args.gpu);
      std::vector<int> gpus = gpus_of_run(run, log.file, *p.topology, args.topology);
      check_run_gpus(context.workspace(), run, log.file, *p.topology, gpus, args.topology, args.gpu);
      const std::string nccl = args.request.nccl.empty() ? run.nccl_version : args.request.nccl;
      p.comm = std::make_unique<Communicator>(*p.topology, gpus, nccl_option(context, nccl), routes_of(args.request));
      p.ceiling = p.comm->busbw_ceiling(p.op);
      for (const OverCeiling& o : over_ceiling(run, p.ceiling)) p.over.insert(o.point);
      for (std::size_t i = 0; i < run.points.size(); ++i)
        p.requests.push_back(measured_request(args, p.op, run.points[i], i, log.file));
      p.runner = &batch.add(*p.topology, p.comm->routes(), p.comm->needs(p.requests));
      runs.push_back(std::move(p));
    }
  if (runs.empty()) throw InputError(args.logs.front(), "", "no result lines (nccl-tests prints them under '#  size  count  type ...', util.cu:757)");
  Table table({{"op"}, {"size_B", 0}, {"gpus"}, {"nodes"}, {"dtype"}, {"measured_time_us", 2}, {"predicted_time_us", 2},
               {"time_error_pct", 1}, {"measured_busbw_GBps", 2}, {"predicted_busbw_GBps", 2}, {"busbw_error_pct", 1},
               {"ceiling_GBps", 2}, {"over_ceiling"}, {"ran"}, {"line"}});
  MeasuredErrors time_errors, busbw_errors, headline;
  std::set<std::string> machines;
  std::vector<std::string> flagged;
  for (PredictedRun& p : runs) {
    machines.insert(p.file + ": " + machine_of(*p.run));
    for (std::size_t i = 0; i < p.requests.size(); ++i) {
      const NcclTestsPoint& m = p.run->points[i];
      CollResult r = p.comm->run(p.requests[i], *p.runner);
      double time_us = r.time_s / kUs, busbw = r.busbw_Bps / kGB;
      std::string at = std::string(to_string(p.op)) + " " + format_size(m.size_B);
      double te = measured_error(time_us, m.out_of_place.time_us);
      double be = m.out_of_place.busbw_GBps > 0 ? measured_error(busbw, m.out_of_place.busbw_GBps) : NAN;
      const bool over = p.over.count(i) > 0;
      if (over) {
        flagged.push_back(p.file + ":" + place_of(m, i) + " (" + at + ", busbw " + fixed(m.out_of_place.busbw_GBps, 2) +
                          " out-of-place, " + fixed(m.in_place.busbw_GBps, 2) + " in-place)");
      } else {
        time_errors.add(te, at);
        if (!std::isnan(be)) busbw_errors.add(be, at);
        if (m.size_B >= 64.0 * 1024 * 1024 && !std::isnan(be)) headline.add(be, at);
        else if (m.size_B < 64.0 * 1024 * 1024) headline.add(te, at);
      }
      table.add_row({std::string(to_string(p.op)), whole(m.size_B), static_cast<long long>(p.comm->ranks()),
                     static_cast<long long>(p.comm->fabric().nodes().size()), r.dtype.name, m.out_of_place.time_us, time_us,
                     100 * te, m.out_of_place.busbw_GBps, busbw, std::isnan(be) ? NAN : 100 * be, p.ceiling.Bps / kGB, over,
                     std::string(to_string(r.algo)) + "/" + to_string(r.proto), p.file + ":" + place_of(m, i)});
    }
  }
  std::string out = table.render(format);
  if (format != Format::table) return out;
  out += "\nmeasured (out-of-place columns) on " + args.topology + ":\n";
  for (const std::string& m : machines) out += "  " + m + "\n";
  out += "error = (predicted - measured) / measured:\n";
  out += headline.line("busbw from 64 MiB, time below (validate's rows)");
  out += time_errors.line("time_us, every size");
  out += busbw_errors.line("busbw_GBps, every size");
  return out + flagged_text(runs, flagged, args.topology);
}

}  // namespace topsim
