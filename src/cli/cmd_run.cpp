// topsim run: replays a workload. A training scenario becomes one generated iteration per
// point (variants x GPU or server counts); a trace is replayed as written on a topology.
#include <memory>

#include "cli/coll_common.hpp"
#include "cli/fault_options.hpp"
#include "cli/link_usage_options.hpp"
#include "cli/workload_common.hpp"
#include "interop/chakra/chakra.hpp"
#include "io/io.hpp"
#include "study/scenarios.hpp"
#include "topology/faults.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "workload/training.hpp"

namespace topsim {

namespace {

struct RunArgs {
  std::string file;
  std::string format;
  std::string topology;
  std::string gpu;
  std::string gpus;
  ScaleOut scale;
  std::string nodes;
  bool no_p2p = false;
  bool no_gdr = false;
  std::string variant;
  std::string nccl;
  LinkUsageArgs usage;
  FaultArgs faults;
  std::string chakra;                       ///< --chakra PREFIX: PREFIX.<rank>.et
  std::string chakra_compute = "duration";  ///< duration | model
  std::string chakra_deps = "all";          ///< all (data_deps and ctrl_deps) | data
  int chakra_ranks = 0;
};

// --chakra PREFIX: the Chakra ET read into a trace, and the header line saying how it was read.
TraceSpec chakra_trace(const RunArgs& args, std::string& note) {
  ChakraReadOptions options;
  if (args.chakra_compute == "model") options.compute = ChakraReadOptions::Compute::model;
  else if (args.chakra_compute != "duration")
    throw UsageError("--chakra-compute '" + args.chakra_compute + "': valid: duration, model");
  if (args.chakra_deps == "data") options.ctrl_deps = false;
  else if (args.chakra_deps != "all") throw UsageError("--chakra-deps '" + args.chakra_deps + "': valid: all, data");
  options.ranks = args.chakra_ranks;
  ChakraSummary s;
  TraceSpec trace = read_chakra(args.chakra, options, &s);
  note = "# chakra: " + std::to_string(s.files) + " file" + (s.files == 1 ? "" : "s") + " for " + std::to_string(s.ranks) +
         " rank" + (s.ranks == 1 ? "" : "s") + ", " + std::to_string(s.nodes) + " nodes (" + std::to_string(s.host_nodes) +
         " host, " + std::to_string(s.compute_nodes) + " GPU compute, " + std::to_string(s.collective_nodes) +
         " collective, " + std::to_string(s.p2p_nodes) + " send/recv); compute by " +
         (options.compute == ChakraReadOptions::Compute::model ? "the compute model (num_ops, tensor_size)" : "duration_micros") +
         "; dependencies: " + (options.ctrl_deps ? "data_deps and ctrl_deps" : "data_deps only") + "\n";
  return trace;
}

std::string scenario_header(const ScenarioSpec& s, const Catalog& catalog) {
  const TrainingSpec& t = s.training;
  const Network& net = catalog.network(t.network, s.where.at("training").at("network"));
  const FrameworkModel& fw = catalog.framework(t.framework, s.where.at("training").at("framework"));
  TrainingTypes types = training_types(t, fw);
  std::string text = "# topsim run: " + s.description + "\n";
  text += "# " + net.name + " (" + fixed(net.params() / 1e6, 1) + " M parameters), " + fixed(t.batch_per_gpu, 0) + " " +
          net.sample + "s per GPU, " + t.precision + " (" + types.math_dtype + " math), " + fw.name + " (buckets of " +
          fixed(t.bucket_B.value_or(fw.bucket_B) / (1 << 20), 0) + " MiB, gradients in " + types.gradient_dtype +
          "), " + t.optimizer + "\n";
  if (t.step_time_s) text += "# kernel times scaled to the measured one-GPU step of " + fixed(*t.step_time_s * 1e3, 2) + " ms\n";
  text += "# throughput in " + net.sample + "s/s; speedup over one GPU of the same variant; vs_first: throughput "
          "over the first variant's at the same count\n";
  return text;
}

void run_trace(const RunArgs& args, Context& context, Format format) {
  if (args.topology.empty()) throw UsageError("a trace names no topology: give --topology NAME|PATH");
  std::string note;
  TraceSpec trace = args.chakra.empty() ? load_trace(args.file) : chakra_trace(args, note);
  const std::string title = args.chakra.empty() ? "trace " + args.file : "Chakra ET " + args.chakra;
  const Catalog& catalog = context.workspace().catalog();
  Faults faults = faults_of(args.faults);
  if (faults.any() && args.usage.any())
    throw UsageError("--heatmap and --link-usage draw one run; leave out --fail, --degrade and --straggler");
  const Topology& topology = context.workspace().topology(args.topology, args.scale, args.gpu, faults);
  ReplayOptions options;
  options.routes.peer_access = !args.no_p2p;
  options.routes.gpu_direct = !args.no_gdr;
  options.nccl = nccl_option(context, args.nccl).name;
  Replay replay(topology, catalog, trace, options);
  Batch batch(args.usage.any());
  PlatformRunner& runner = batch.add(topology, replay.routes(), replay.needs());
  // With faults, the same trace on the healthy topology too, added before the first run.
  std::unique_ptr<Replay> healthy_replay;
  PlatformRunner* healthy_runner = nullptr;
  if (faults.any()) {
    const Topology& healthy_topology = context.workspace().topology(args.topology, args.scale, args.gpu);
    healthy_replay = std::make_unique<Replay>(healthy_topology, catalog, trace, options);
    healthy_runner = &batch.add(healthy_topology, healthy_replay->routes(), healthy_replay->needs());
  }
  ReplayResult r = replay.run(runner);
  if (args.usage.any()) write_link_usage(args.usage, batch.simulator(), title + " on " + topology.name());
  bool seconds = format != Format::table;
  double unit = seconds ? 1 : 1e3;
  std::string suffix = seconds ? "_s" : "_ms";
  int digits = seconds ? 6 : 3;
  // With faults a first column says which run a row is: "faulty", then "healthy".
  std::vector<Column> columns = {{"ranks"},
                                 {"nodes"},
                                 {"iteration" + suffix, digits},
                                 {"compute" + suffix, digits},
                                 {"exposed_comm" + suffix, digits},
                                 {"comm" + suffix, digits},
                                 {"collectives"},
                                 {"throughput", 1},
                                 {"algorithms"}};
  if (healthy_replay) columns.insert(columns.begin(), Column{"case"});
  Table table(columns);
  int nodes = 0;
  for (int g = 0; g < trace.ranks; ++g) nodes = std::max(nodes, topology.node_of(g) + 1);
  auto add_row = [&](const ReplayResult& x, const char* label) {
    std::vector<Cell> row = {static_cast<long long>(trace.ranks), static_cast<long long>(nodes), x.iteration_s * unit,
                             x.compute_s * unit, x.exposed_comm_s * unit, x.comm_s * unit,
                             static_cast<long long>(x.collectives), trace.samples > 0 ? trace.samples / x.iteration_s : 0.0,
                             x.algorithms.empty() ? std::string("-") : x.algorithms};
    if (healthy_replay) row.insert(row.begin(), std::string(label));
    table.add_row(row);
  };
  add_row(r, "faulty");
  std::string change;
  if (healthy_replay) {
    ReplayResult h = healthy_replay->run(*healthy_runner);
    add_row(h, "healthy");
    change = "# what-if: " + faults_text(faults) + "; iteration time " +
             fixed(change_pct(h.iteration_s, r.iteration_s), 1) + "%, throughput " +
             fixed(change_pct(h.iteration_s > 0 ? 1 / h.iteration_s : 0, r.iteration_s > 0 ? 1 / r.iteration_s : 0), 1) +
             "% against the healthy topology\n";
  }
  if (format != Format::table) {
    context.out = table.render(format);
    return;
  }
  const bool described = args.chakra.empty() && !trace.description.empty();
  context.out = "# topsim run: " + title + (described ? " (" + trace.description + ")" : "") + " on " + topology.name() +
                "\n" + note + "# throughput: the trace's samples per second (0 when it declares none)\n" + change +
                table.to_text();
}

}  // namespace

void add_run_command(CLI::App& app, Context& context) {
  CLI::App* run = app.add_subcommand("run", "Replay a workload: a training scenario (iteration time, throughput, scaling) or a trace");
  auto args = std::make_shared<RunArgs>();
  run->add_option("file", args->file, "Scenario or trace: a path or a bundled scenario name (resnet50-dgx-a100)");
  run->add_option("--chakra", args->chakra, "Replay a Chakra execution trace: files PREFIX.<rank>.et (docs/chakra.md)");
  run->add_option("--chakra-compute", args->chakra_compute,
                  "Chakra GPU compute nodes: duration (duration_micros, default) or model (num_ops, tensor_size)");
  run->add_option("--chakra-deps", args->chakra_deps,
                  "Chakra dependencies: all (data_deps and ctrl_deps, default) or data (data_deps only, as Chakra's feeder)");
  run->add_option("--chakra-ranks", args->chakra_ranks, "Chakra: replay a one-file trace as N ranks running the same nodes")
      ->check(CLI::Range(1, 1 << 20));
  add_format_option(*run, args->format);
  run->add_option("--topology", args->topology, "Topology: replaces the scenario's; required for a trace");
  add_gpu_option(*run, args->gpu);
  run->add_option("--gpus", args->gpus, "Scenario: GPU counts in one server, rising (1,2,4,8 or 1-8)");
  run->add_option("--nodes", args->nodes, "Scenario: server counts, rising; trace: servers to replicate");
  run->add_option("--nic", args->scale.nic, "What-if: replace every NIC (a NIC model or edr, hdr200, ndr, 100gbe, ...)");
  run->add_option("--nics-per-node", args->scale.nics_per_node, "What-if: use the first K NICs of each server")
      ->check(CLI::Range(1, 64));
  run->add_flag("--no-p2p", args->no_p2p, "NCCL without peer access (through host memory)");
  run->add_flag("--no-gdr", args->no_gdr, "NIC traffic staged through host memory (no GPUDirect RDMA)");
  run->add_option("--variant", args->variant, "Scenario: run only this variant");
  run->add_option("--nccl", args->nccl, "NCCL release whose tuner chooses (2.18.5, 2.26; replaces the scenario's)");
  add_link_usage_options(*run, args->usage);
  add_fault_options(*run, args->faults);
  run->callback([args, &context]() {
    Format format = parse_format(args->format);
    if (!args->chakra.empty()) {
      if (!args->file.empty()) throw UsageError("give a scenario or trace file, or --chakra PREFIX, not both");
      if (!args->gpus.empty()) throw UsageError("--gpus: a Chakra trace has its own ranks");
      if (!args->variant.empty()) throw UsageError("--variant: a Chakra trace has no variants");
      if (!args->nodes.empty()) args->scale.nodes = counts_option(args->nodes, "--nodes").back();
      run_trace(*args, context, format);
      return;
    }
    if (args->file.empty()) throw UsageError("run needs a scenario or trace file, or --chakra PREFIX");
    if (args->chakra_compute != "duration" || args->chakra_deps != "all" || args->chakra_ranks != 0)
      throw UsageError("--chakra-compute, --chakra-deps and --chakra-ranks apply to --chakra PREFIX");
    const std::string given = args->file;  // as the user named it, for titles
    args->file = context.workspace().scenario_path(args->file);
    if (is_trace_file(args->file)) {
      if (!args->gpus.empty()) throw UsageError("--gpus: a trace has its own ranks");
      if (!args->nodes.empty()) args->scale.nodes = counts_option(args->nodes, "--nodes").back();
      if (!args->variant.empty()) throw UsageError("--variant: a trace has no variants");
      run_trace(*args, context, format);
      return;
    }
    if (args->no_p2p || args->no_gdr) throw UsageError("--no-p2p and --no-gdr apply to traces; scenarios run NCCL's defaults");
    if (faults_of(args->faults).any())
      throw UsageError("--fail, --degrade and --straggler apply to traces for now (topsim run TRACE --topology T ...); "
                       "a scenario's points differ in servers, so one name does not fit them all");
    ScenarioSpec scenario = load_scenario(args->file);
    if (!args->topology.empty()) scenario.topology = args->topology;
    if (!args->nccl.empty()) scenario.nccl = nccl_option(context, args->nccl).name;
    override_counts(scenario, args->gpus, args->nodes);
    for (Variant& v : scenario.variants) {
      if (v.gpu.empty()) v.gpu = args->gpu;
      if (v.nic.empty()) v.nic = args->scale.nic;
      if (v.nics_per_node == 0) v.nics_per_node = args->scale.nics_per_node;
    }
    if (!args->variant.empty()) select_variant(scenario, args->variant);
    if (args->usage.any()) {
      std::size_t counts = scenario.gpus.empty() ? scenario.nodes.size() : scenario.gpus.size();
      if (counts * scenario.variants.size() != 1)
        throw UsageError("--heatmap and --link-usage draw one run, and this scenario has " +
                         std::to_string(counts * scenario.variants.size()) + " points: choose one count with --gpus N or "
                         "--nodes N" + (scenario.variants.size() > 1 ? " and one variant with --variant NAME" : ""));
    }
    Batch batch(args->usage.any());
    std::vector<ScenarioPoint> points = run_scenario_points(scenario, context.workspace(), batch);
    if (args->usage.any()) {
      const ScenarioPoint& p = points.front();
      write_link_usage(args->usage, batch.simulator(),
                       given + (p.variant.empty() ? "" : " " + p.variant) + " on " + p.topology + ", " +
                           std::to_string(p.gpus) + " GPUs");
    }
    Table table = scenario_table(points, format);
    std::vector<std::string> what_if;
    if (!args->topology.empty()) what_if.push_back("--topology " + args->topology);
    if (!args->gpu.empty()) what_if.push_back("--gpu " + args->gpu);
    if (!args->scale.nic.empty()) what_if.push_back("--nic " + args->scale.nic);
    if (args->scale.nics_per_node > 0) what_if.push_back("--nics-per-node " + std::to_string(args->scale.nics_per_node));
    std::string header = scenario_header(scenario, context.workspace().catalog());
    if (!what_if.empty()) header += "# what-if: " + join(what_if, ", ") + "\n";
    context.out = format == Format::table ? header + table.to_text() : table.render(format);
  });
}

}  // namespace topsim
