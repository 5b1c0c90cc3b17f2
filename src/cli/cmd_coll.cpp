// topsim coll: predicted nccl-tests output for NCCL collectives on a topology.
#include <cstdio>
#include <memory>
#include <optional>
#include <numeric>

#include "cli/coll_common.hpp"
#include "cli/fault_options.hpp"
#include "cli/link_usage_options.hpp"
#include "cli/common.hpp"
#include "collectives/communicator.hpp"
#include "study/batch.hpp"
#include "p2p/p2p.hpp"
#include "topology/faults.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct CollArgs {
  std::string topology;
  std::string format;
  std::string op = "allreduce";
  std::string begin = "32M", end = "32M";
  double factor = 2;
  std::string step;
  int gpus = 0;
  std::string devices;
  std::string redop = "sum";
  int root = 0;
  RequestArgs request;
  bool explain = false;
  std::string model = "flow";
  ScaleOut scale;
  std::string gpu;  ///< --gpu what-if
  LinkUsageArgs usage;
  FaultArgs faults;
};

// One topology's communicator and its platform on the shared simulator.
struct Simulated {
  const Topology* topology = nullptr;  ///< kept by the command's Workspace
  std::unique_ptr<Communicator> comm;
  PlatformRunner* runner = nullptr;    ///< owned by the command's Batch
};

std::vector<double> sizes_of(const CollArgs& a) {
  double begin = size_option(a.begin, "-b");
  double end = size_option(a.end, "-e");
  if (a.step.empty()) return size_series(begin, end, a.factor);
  double step = size_option(a.step, "-i");
  std::vector<double> sizes;
  for (double s = begin; s <= end; s += step) {
    sizes.push_back(s);
    if (sizes.size() > 4096) throw UsageError("more than 4096 sizes; raise -i or narrow -b/-e");
  }
  return sizes;
}

std::vector<int> gpus_of(const CollArgs& a, const Topology& t) {
  if (!a.devices.empty()) {
    if (a.gpus != 0) throw UsageError("give either -g or --devices, not both");
    try {
      return parse_int_list(a.devices);
    } catch (const ParseError& e) {
      throw UsageError(std::string("--devices: ") + e.what());
    }
  }
  int n = a.gpus == 0 ? t.gpu_count() : a.gpus;
  if (n < 1 || n > t.gpu_count())
    throw UsageError("-g " + std::to_string(n) + ": " + t.name() + " has " + std::to_string(t.gpu_count()) + " GPUs");
  std::vector<int> gpus(n);
  std::iota(gpus.begin(), gpus.end(), 0);
  return gpus;
}

// nccl-tests prints times with fewer decimals as they grow.
std::string nccl_time(double us) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
  return buffer;
}

/// How much faster (a fraction) another weighed pair must simulate than NCCL's choice before
/// --explain calls the two models' winners a disagreement (issue 49: more than 20%).
constexpr double kDisagreement = 0.2;

std::string candidates_text(const CollResult& r) {
  std::vector<std::string> parts;
  const Candidate* nccl_best = nullptr;
  for (const Candidate& c : r.candidates)
    if (c.nccl.time_s >= 0 && (nccl_best == nullptr || c.nccl.time_s < nccl_best->nccl.time_s)) nccl_best = &c;
  for (const Candidate& c : r.candidates) {
    bool chosen = c.algo == r.algo && c.proto == r.proto;
    std::string text = std::string(to_string(c.algo)) + "/" + to_string(c.proto) + ": ";
    if (c.nccl.time_s >= 0) text += "NCCL " + fixed(c.nccl.time_s / kUs, 2) + " us";
    else if (c.nccl.excluded.empty()) text += "not tuned";
    if (!c.nccl.excluded.empty()) text += std::string(c.nccl.time_s >= 0 ? ", " : "") + "left out: " + c.nccl.excluded;
    if (c.time_s >= 0)
      text += ", simulated " + fixed(c.time_s / kUs, 2) + " us on " + std::to_string(c.channels) + " channels [latency " +
              fixed(c.latency_s / kUs, 2) + " us]";
    if (chosen) text += " (chosen)";
    parts.push_back(text);
  }
  std::string out = "NCCL " + r.nccl_version + ": " + join(parts, "; ");
  if (nccl_best != nullptr && !nccl_best->nccl.excluded.empty())
    out += "; NCCL would take " + std::string(to_string(nccl_best->algo)) + "/" + to_string(nccl_best->proto) +
           ", which topsim cannot run here: the next best runs instead";
  // Where the simulation finds another weighed pair much faster than NCCL's choice, one of the two
  // models is wrong about one of them: say so, with both figures, rather than hide it.
  const Candidate* chosen = nullptr;
  const Candidate* fastest = nullptr;
  for (const Candidate& c : r.candidates) {
    if (c.time_s < 0 || !c.nccl.excluded.empty()) continue;
    if (c.algo == r.algo && c.proto == r.proto) chosen = &c;
    if (fastest == nullptr || c.time_s < fastest->time_s) fastest = &c;
  }
  if (chosen != nullptr && fastest != chosen && fastest->time_s < chosen->time_s / (1 + kDisagreement)) {
    auto name = [](const Candidate& c) { return std::string(to_string(c.algo)) + "/" + to_string(c.proto); };
    out += "; the simulation and NCCL's estimate disagree on the winner: " + name(*fastest) + " simulates " +
           fixed(fastest->time_s / kUs, 2) + " us, " + fixed(100 * (chosen->time_s / fastest->time_s - 1), 0) +
           "% faster than NCCL's choice " + name(*chosen) + " (NCCL estimates " + fixed(fastest->nccl.time_s / kUs, 2) +
           " against " + fixed(chosen->nccl.time_s / kUs, 2) + " us)";
  }
  return out;
}

std::string table_text(const std::vector<CollResult>& results, const Topology& t, const Communicator& comm,
                       const std::string& redop, bool explain) {
  std::string out = "# topsim coll: predicted NCCL on " + t.label() + ", " + communicator_text(comm) + "\n";
  int nodes = static_cast<int>(comm.fabric().nodes().size());
  CollOp current = results.front().op;
  double busbw_sum = 0;
  int rows = 0;
  auto header = [&](CollOp op) {
    out += "#\n# " + std::string(to_string(op)) + "\n";
    out += "#       size         count      type   redop    root     time   algbw   busbw  algo    proto   channels  nodes  bound\n";
    out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  };
  header(current);
  for (const CollResult& r : results) {
    if (r.op != current) {
      current = r.op;
      header(current);
    }
    char line[256];
    std::snprintf(line, sizeof line, "%12.0f  %12lld  %8s  %6s  %6d  %s  %6.2f  %6.2f  %-6s  %-6s  %8d  %5d  %s\n",
                  r.size.size_B, r.size.count, r.dtype.name.c_str(), is_reduction(r.op) ? redop.c_str() : "none",
                  r.root, nccl_time(r.time_s / kUs).c_str(), r.algbw_Bps / kGB, r.busbw_Bps / kGB, to_string(r.algo),
                  to_string(r.proto), r.channels, nodes, r.bound_class.c_str());
    out += line;
    if (explain) out += "#   " + candidates_text(r) + "\n#   bound by: " + r.bound + "\n";
    busbw_sum += r.busbw_Bps;
    ++rows;
  }
  out += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : " + fixed(busbw_sum / rows / kGB, 4) + "\n";
  return out;
}

// `healthy`, when not empty, is the same requests on the topology without the faults: three
// more columns per row.
Table rows_table(const std::vector<CollResult>& results, const Communicator& comm, const std::string& redop,
                 bool explain, const std::vector<CollResult>& healthy) {
  std::vector<Column> columns = {{"op"},       {"size_B", 0},     {"count"},          {"dtype"},  {"redop"},
                                 {"root"},     {"gpus"},          {"nodes"},          {"algo"},   {"proto"},
                                 {"channels"}, {"time_us", 3},    {"algbw_GBps", 3},  {"busbw_GBps", 3},
                                 {"bound"},    {"bound_detail"}};
  if (explain) columns.push_back({"candidates"});
  if (!healthy.empty())
    for (Column c : std::vector<Column>{{"healthy_time_us", 3}, {"healthy_busbw_GBps", 3}, {"busbw_change_pct", 3}})
      columns.push_back(c);
  Table table(columns);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CollResult& r = results[i];
    std::vector<Cell> row = {std::string(to_string(r.op)),
                             whole(r.size.size_B),
                             r.size.count,
                             r.dtype.name,
                             std::string(is_reduction(r.op) ? redop : "none"),
                             static_cast<long long>(r.root),
                             static_cast<long long>(comm.ranks()),
                             static_cast<long long>(comm.fabric().nodes().size()),
                             std::string(to_string(r.algo)),
                             std::string(to_string(r.proto)),
                             static_cast<long long>(r.channels),
                             r.time_s / kUs,
                             r.algbw_Bps / kGB,
                             r.busbw_Bps / kGB,
                             r.bound_class,
                             r.bound};
    if (explain) row.push_back(candidates_text(r));
    if (!healthy.empty()) {
      row.push_back(healthy[i].time_s / kUs);
      row.push_back(healthy[i].busbw_Bps / kGB);
      row.push_back(change_pct(healthy[i].busbw_Bps, r.busbw_Bps));
    }
    table.add_row(row);
  }
  return table;
}

}  // namespace

void add_coll_command(CLI::App& app, Context& context) {
  CLI::App* coll = app.add_subcommand("coll", "Predicted NCCL collectives, printed as nccl-tests prints them");
  auto args = std::make_shared<CollArgs>();
  coll->add_option("topology", args->topology, "Topology file, or the name of a bundled one (dgx-a100)")->required();
  add_format_option(*coll, args->format);
  coll->add_option("-o,--op", args->op,
                   "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, or all")
      ->default_val("allreduce");
  coll->add_option("-b,--minbytes", args->begin, "First size (nccl-tests style: 8, 1K, 256M)")->default_val("32M");
  coll->add_option("-e,--maxbytes", args->end, "Last size")->default_val("32M");
  auto* factor = coll->add_option("-f,--stepfactor", args->factor, "Size multiplier between points")->default_val(2);
  coll->add_option("-i,--stepbytes", args->step, "Size increment between points (instead of -f)")->excludes(factor);
  auto* g = coll->add_option("-g,--ngpus", args->gpus, "Use the first N GPUs (default: all)");
  coll->add_option("--devices", args->devices, "Use these GPUs, in rank order: 0,1,2,3")->excludes(g);
  coll->add_option("--redop", args->redop, "Reduction printed for reducing operations")
      ->check(CLI::IsMember({"sum", "prod", "min", "max", "avg"}))
      ->default_val("sum");
  coll->add_option("-r,--root", args->root, "Root rank of broadcast and reduce")->default_val(0);
  coll->add_flag("--explain", args->explain, "For each size: every algorithm/protocol considered and what bounds the choice");
  coll->add_option("--model", args->model,
                   "flow: one long-lived flow per ring (fast at any scale); steps: every pipeline step simulated (reference)")
      ->check(CLI::IsMember({"flow", "steps"}))
      ->default_val("flow");
  add_request_options(*coll, args->request);
  add_scale_out_options(*coll, args->scale);
  add_gpu_option(*coll, args->gpu);
  add_link_usage_options(*coll, args->usage);
  add_fault_options(*coll, args->faults);
  coll->callback([args, &context]() {
    Faults faults = faults_of(args->faults);
    if (faults.any() && args->usage.any())
      throw UsageError("--heatmap and --link-usage draw one run; leave out --fail, --degrade and --straggler");
    Format format = parse_format(args->format);
    std::vector<CollOp> ops = args->op == "all" ? all_ops() : std::vector<CollOp>{parse_op(args->op)};
    CollRequest base = request_of(args->request, CollOp::allreduce);
    base.root = args->root;
    base.model = args->model == "steps" ? CollModel::steps : CollModel::flow;
    base.simulate_all = args->explain;
    std::vector<CollRequest> requests;
    for (CollOp op : ops)
      for (double size : sizes_of(*args)) {
        CollRequest r = base;
        r.op = op;
        r.size_B = size;
        requests.push_back(r);
      }
    if (args->usage.any() && requests.size() != 1)
      throw UsageError("--heatmap and --link-usage draw one run: give one --op and one size (-b equal to -e)");
    Batch batch(args->usage.any());
    // The faulty topology first (its errors come before any work), then the healthy one to
    // compare with; both platforms are added before the first run.
    auto simulated = [&](const Faults& with) {
      Simulated s;
      s.topology = &context.workspace().topology(args->topology, args->scale, args->gpu, with);
      s.comm = std::make_unique<Communicator>(*s.topology, gpus_of(*args, *s.topology),
                                              nccl_option(context, args->request.nccl), routes_of(args->request));
      s.runner = &batch.add(*s.topology, s.comm->routes(), s.comm->needs(requests));
      return s;
    };
    Simulated faulty = simulated(faults);
    std::optional<Simulated> healthy;
    if (faults.any()) healthy = simulated(Faults{});
    const Topology& t = *faulty.topology;
    Communicator& comm = *faulty.comm;
    PlatformRunner& runner = *faulty.runner;
    std::vector<CollResult> results, healthy_results;
    for (const CollRequest& r : requests) results.push_back(comm.run(r, runner));
    if (healthy) {
      for (const CollRequest& r : requests) healthy_results.push_back(healthy->comm->run(r, *healthy->runner));
    }
    if (args->usage.any()) {
      // The choice ran every candidate; run the chosen one again so that it is the last run.
      CollRequest chosen = requests.front();
      chosen.algo = results.front().algo;
      chosen.proto = results.front().proto;
      comm.run(chosen, runner);
      write_link_usage(args->usage, batch.simulator(),
                       std::string(to_string(chosen.op)) + " " + format_size(chosen.size_B) + " on " + t.label() + " (" +
                           to_string(*chosen.algo) + "/" + to_string(*chosen.proto) + ")");
    }
    if (format != Format::table) {
      context.out = rows_table(results, comm, args->redop, args->explain, healthy_results).render(format);
      return;
    }
    context.out = table_text(results, t, comm, args->redop, args->explain);
    if (!healthy) return;
    std::vector<FaultComparison> rows;
    for (std::size_t i = 0; i < results.size(); ++i)
      rows.push_back(FaultComparison{std::string(to_string(results[i].op)) + " " + fixed(results[i].size.size_B, 0),
                                     healthy_results[i].time_s, results[i].time_s, healthy_results[i].busbw_Bps,
                                     results[i].busbw_Bps});
    context.out += comparison_text(faults_text(faults), "point", rows);
  });
}

}  // namespace topsim
