// topsim scale: one collective against the number of servers, the scaling curve a capacity
// planner asks for. Each cluster size is built and run in a child process of its own (--jobs at
// once), so only the points in flight hold a topology and a platform.
#include <memory>
#include <optional>

#include "cli/coll_common.hpp"
#include "cli/common.hpp"
#include "cli/fault_options.hpp"
#include "study/batch.hpp"
#include "topology/faults.hpp"
#include "util/bytes.hpp"
#include "util/error.hpp"
#include "util/processes.hpp"
#include "util/progress.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct ScaleArgs {
  std::string topology;
  std::string format;
  std::string op = "allreduce";
  std::string size = "1G";
  std::string nodes = "1,2,4,8,16,32,64,128";
  std::string nic;
  int nics_per_node = 0;
  std::string gpu;  ///< --gpu what-if
  RequestArgs request;
  FaultArgs faults;
};

// One server count's figures, as a child process computes them (util/processes.hpp): the
// point's topology, routes and platform die with the child, so a sweep up to thousands of
// servers holds one point's memory at a time per job, not every point's.
struct PointResult {
  int ranks = 0;
  std::string algo, proto, bound_class, bound, topology_name, communicator;
  int channels = 0;
  double time_s = 0, algbw_Bps = 0, busbw_Bps = 0;
  bool with_healthy = false;
  double healthy_time_s = 0, healthy_busbw_Bps = 0;  ///< the same count without --fail/--degrade/--straggler

  // The fields in one order, written and read alike (P is PointResult or const PointResult).
  template <typename P, typename Visit>
  static void each_field(P& p, Visit&& visit) {
    for (auto* f : {&p.algo, &p.proto, &p.bound_class, &p.bound, &p.topology_name, &p.communicator}) visit(*f);
    for (auto* v : {&p.ranks, &p.channels}) visit(*v);
    visit(p.with_healthy);
    for (auto* v : {&p.time_s, &p.algbw_Bps, &p.busbw_Bps, &p.healthy_time_s, &p.healthy_busbw_Bps}) visit(*v);
  }
  std::string to_bytes() const {
    ByteWriter out;
    each_field(*this, [&](const auto& field) { out.put(field); });
    return out.take();
  }
  static PointResult from_bytes(const std::string& bytes) {
    PointResult p;
    ByteReader in(bytes, "scale: a point's child process answered short");
    each_field(p, [&](auto& field) { in.get(field); });
    return p;
  }
};

}  // namespace

void add_scale_command(CLI::App& app, Context& context) {
  CLI::App* scale = app.add_subcommand("scale", "One collective against the number of servers: busbw, time, efficiency");
  auto args = std::make_shared<ScaleArgs>();
  scale->add_option("topology", args->topology, "Server topology (with a default fabric) or cluster file")->required();
  add_format_option(*scale, args->format);
  scale->add_option("-o,--op", args->op, "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv")
      ->default_val("allreduce");
  scale->add_option("-b,--size", args->size, "Message size (nccl-tests style: 1G, 256M)")->default_val("1G");
  scale->add_option("--nodes", args->nodes, "Server counts, rising: 1,2,4,8 or 1-4,8")->default_val("1,2,4,8,16,32,64,128");
  scale->add_option("--nic", args->nic, "Replace every NIC: a NIC model or a port type (edr, hdr200, hdr100, ndr, 100gbe)");
  scale->add_option("--nics-per-node", args->nics_per_node, "Use only the first K NICs of each server")
      ->check(CLI::Range(1, 64));
  add_gpu_option(*scale, args->gpu);
  add_request_options(*scale, args->request);
  add_gpus_per_thread_option(*scale, args->request);
  add_fault_options(*scale, args->faults);
  auto jobs = std::make_shared<int>();
  add_jobs_option(*scale, *jobs);
  auto quiet = std::make_shared<bool>(false);
  add_quiet_option(*scale, *quiet);
  scale->callback([args, jobs, quiet, &context]() {
    Faults faults = faults_of(args->faults);
    Format format = parse_format(args->format);
    CollRequest request = request_of(args->request, parse_op(args->op));
    request.size_B = size_option(args->size, "-b");
    std::vector<int> counts = counts_option(args->nodes, "--nodes");

    const NcclVersion& version = nccl_option(context, args->request.nccl);
    std::vector<std::size_t> items(counts.size());
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
    // The --gpu swap's note (and refusal) once, here: each child would repeat it.
    if (!args->gpu.empty()) {
      context.workspace().topology(args->topology, ScaleOut{counts.front(), args->nic, args->nics_per_node}, args->gpu);
    }
    Progress progress("topsim scale", "server counts", stderr_progress(*quiet));
    std::vector<std::string> answers = run_in_processes(items, *jobs, [&](std::size_t i) {
      context.workspace().set_note_sink({});
      ScaleOut scale_out;
      scale_out.nodes = counts[i];
      scale_out.nic = args->nic;
      scale_out.nics_per_node = args->nics_per_node;
      // Both platforms (with and without the faults) go to one Batch before either runs.
      Batch batch;
      struct Built {
        const Topology* topology;
        std::unique_ptr<Communicator> comm;
        PlatformRunner* runner;
      };
      auto build = [&](const Faults& with) {
        const Topology& t = context.workspace().topology(args->topology, scale_out, args->gpu, with);
        std::vector<int> gpus(static_cast<std::size_t>(t.gpu_count()));
        for (int g = 0; g < t.gpu_count(); ++g) gpus[static_cast<std::size_t>(g)] = g;
        auto comm = std::make_unique<Communicator>(t, gpus, version, routes_of(args->request));
        PlatformRunner* runner = &batch.add(t, comm->routes(), comm->needs({request}));
        return Built{&t, std::move(comm), runner};
      };
      Built point = build(faults);
      std::optional<Built> healthy;
      if (faults.any()) healthy = build(Faults{});
      CollResult r = point.comm->run(request, *point.runner);
      PointResult out;
      out.ranks = point.comm->ranks();
      out.algo = to_string(r.algo);
      out.proto = to_string(r.proto);
      out.channels = r.channels;
      out.time_s = r.time_s;
      out.algbw_Bps = r.algbw_Bps;
      out.busbw_Bps = r.busbw_Bps;
      out.bound_class = r.bound_class;
      out.bound = r.bound;
      out.topology_name = point.topology->label();
      out.communicator = communicator_text(*point.comm);
      if (healthy) {
        CollResult h = healthy->comm->run(request, *healthy->runner);
        out.with_healthy = true;
        out.healthy_time_s = h.time_s;
        out.healthy_busbw_Bps = h.busbw_Bps;
      }
      return out.to_bytes();
    }, &progress);
    progress.finish();
    std::vector<PointResult> points;
    for (const std::string& answer : answers) points.push_back(PointResult::from_bytes(answer));

    // csv and json carry the healthy figures as columns; the table gets a trailing block.
    bool columns = faults.any() && format != Format::table;
    std::vector<Column> header = {{"nodes"},         {"gpus"},         {"algo"},          {"proto"},
                                  {"channels"},      {"time_us", 1},   {"algbw_GBps", 2}, {"busbw_GBps", 2},
                                  {"efficiency", 3}, {"bound"},        {"bound_detail"}};
    if (columns)
      for (Column c : std::vector<Column>{{"healthy_time_us", 1}, {"healthy_busbw_GBps", 2}, {"busbw_change_pct", 1}})
        header.push_back(c);
    Table table(header);
    std::vector<FaultComparison> comparison;
    double first_busbw = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const PointResult& r = points[i];
      if (i == 0) first_busbw = r.busbw_Bps;
      std::vector<Cell> row = {static_cast<long long>(counts[i]), static_cast<long long>(r.ranks),
                               r.algo, r.proto,
                               static_cast<long long>(r.channels), r.time_s / kUs, r.algbw_Bps / kGB, r.busbw_Bps / kGB,
                               first_busbw > 0 ? r.busbw_Bps / first_busbw : 0.0, r.bound_class, r.bound};
      if (r.with_healthy) {
        comparison.push_back(
            FaultComparison{std::to_string(counts[i]), r.healthy_time_s, r.time_s, r.healthy_busbw_Bps, r.busbw_Bps});
        if (columns)
          for (Cell c : std::vector<Cell>{r.healthy_time_s / kUs, r.healthy_busbw_Bps / kGB,
                                          change_pct(r.healthy_busbw_Bps, r.busbw_Bps)})
            row.push_back(c);
      }
      table.add_row(row);
    }
    if (format != Format::table) {
      context.out = table.render(format);
      return;
    }
    const PointResult& last = points.back();
    context.out = "# topsim scale: " + std::string(to_string(request.op)) + " of " + args->size + " (" +
                  request.dtype.name + ") on " + last.topology_name + "\n# largest: " + last.communicator +
                  "\n# efficiency: busbw against the first count's (" +
                  std::to_string(counts.front()) + (counts.front() == 1 ? " server" : " servers") + ")\n" +
                  table.to_text();
    if (faults.any()) context.out += comparison_text(faults_text(faults), "nodes", comparison);
  });
}

}  // namespace topsim
