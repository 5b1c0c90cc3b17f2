// topsim scale: one collective against the number of servers, the scaling curve a capacity
// planner asks for. Every cluster size is built up front into one Simulator (SimGrid seals its
// platform at the first run), then each runs its request.
#include <memory>

#include "cli/coll_common.hpp"
#include "cli/common.hpp"
#include "cli/fault_options.hpp"
#include "study/batch.hpp"
#include "topology/faults.hpp"
#include "util/error.hpp"
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
  RequestArgs request;
  FaultArgs faults;
};

struct Point {
  const Topology* topology = nullptr;  ///< kept by the command's Workspace
  std::unique_ptr<Communicator> comm;
  PlatformRunner* runner = nullptr;  ///< owned by the command's Batch
  std::unique_ptr<Point> healthy;  ///< with --fail/--degrade/--straggler: the same count without them
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
  add_request_options(*scale, args->request);
  add_fault_options(*scale, args->faults);
  scale->callback([args, &context]() {
    Faults faults = faults_of(args->faults);
    Format format = parse_format(args->format);
    CollRequest request = request_of(args->request, parse_op(args->op));
    request.size_B = size_option(args->size, "-b");
    std::vector<int> counts = counts_option(args->nodes, "--nodes");

    const NcclVersion& version = nccl_option(context, args->request.nccl);
    Batch batch;
    std::vector<Point> points;
    for (int nodes : counts) {
      ScaleOut scale_out;
      scale_out.nodes = nodes;
      scale_out.nic = args->nic;
      scale_out.nics_per_node = args->nics_per_node;
      auto point = [&](const Faults& with) {
        Point p;
        p.topology = &context.workspace().topology(args->topology, scale_out, "", with);
        std::vector<int> gpus(static_cast<std::size_t>(p.topology->gpu_count()));
        for (int g = 0; g < p.topology->gpu_count(); ++g) gpus[static_cast<std::size_t>(g)] = g;
        p.comm = std::make_unique<Communicator>(*p.topology, gpus, version, routes_of(args->request));
        p.runner = &batch.add(*p.topology, p.comm->routes(), p.comm->needs({request}));
        return p;
      };
      Point p = point(faults);
      if (faults.any()) p.healthy = std::make_unique<Point>(point(Faults{}));
      points.push_back(std::move(p));
    }

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
      CollResult r = points[i].comm->run(request, *points[i].runner);
      if (i == 0) first_busbw = r.busbw_Bps;
      std::vector<Cell> row = {static_cast<long long>(counts[i]), static_cast<long long>(points[i].comm->ranks()),
                               std::string(to_string(r.algo)), std::string(to_string(r.proto)),
                               static_cast<long long>(r.channels), r.time_s / kUs, r.algbw_Bps / kGB, r.busbw_Bps / kGB,
                               first_busbw > 0 ? r.busbw_Bps / first_busbw : 0.0, r.bound_class, r.bound};
      if (const Point* healthy = points[i].healthy.get()) {
        CollResult h = healthy->comm->run(request, *healthy->runner);
        comparison.push_back(FaultComparison{std::to_string(counts[i]), h.time_s, r.time_s, h.busbw_Bps, r.busbw_Bps});
        if (columns)
          for (Cell c : std::vector<Cell>{h.time_s / kUs, h.busbw_Bps / kGB, change_pct(h.busbw_Bps, r.busbw_Bps)})
            row.push_back(c);
      }
      table.add_row(row);
    }
    if (format != Format::table) {
      context.out = table.render(format);
      return;
    }
    const Point& last = points.back();
    context.out = "# topsim scale: " + std::string(to_string(request.op)) + " of " + args->size + " (" +
                  request.dtype.name + ") on " + last.topology->name() + "\n# largest: " +
                  communicator_text(*last.comm) + "\n# efficiency: busbw against the first count's (" +
                  std::to_string(counts.front()) + (counts.front() == 1 ? " server" : " servers") + ")\n" +
                  table.to_text();
    if (faults.any()) context.out += comparison_text(faults_text(faults), "nodes", comparison);
  });
}

}  // namespace topsim
