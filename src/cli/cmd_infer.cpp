// topsim infer MODEL --gpu G: serving a model (CNN, BERT, decoder LLM) on GPUs, MIG instances or
// a tensor-parallel group: throughput, latency, memory, what bounds it, per watt and per dollar.
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/common.hpp"
#include "cli/price_options.hpp"
#include "infer/tensor_parallel.hpp"
#include "io/io.hpp"
#include "study/train.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct InferArgs {
  std::string model;
  std::string gpus;
  std::string topology;
  std::string mig;
  std::string batches;
  int seq = 0;
  std::string seq_dist;
  bool no_tf32 = false;
  int output_tokens = 0;
  std::string precision = "fp16";
  std::string sparsity = "dense";
  std::string framework = "tensorrt";
  std::string scenario = "offline";
  std::string latency_bound;
  int tp = 1;
  int replicas = 1;
  std::string nccl;
  PriceArgs prices;
  std::string format;
};

/// One GPU model to serve on, with the topology its tensor-parallel group sits in (none at tp 1).
struct Target {
  const GpuModel* gpu = nullptr;
  const Topology* topology = nullptr;
};

std::vector<Target> targets_of(const InferArgs& args, const Workspace& ws) {
  std::vector<std::string> names = args.gpus.empty() ? std::vector<std::string>{""} : split(args.gpus, ',');
  if (args.gpus.empty() && args.topology.empty())
    throw UsageError("give --gpu (a GPU model of models/gpus.json, or a list) or --topology (its GPUs serve)");
  if (args.tp > 1 && args.topology.empty())
    throw UsageError("--tp " + std::to_string(args.tp) + " needs --topology: the all-reduces between the " +
                     std::to_string(args.tp) + " GPUs run on its fabric");
  std::vector<Target> targets;
  for (const std::string& name : names) {
    Target t;
    if (!args.topology.empty()) {
      int gpus = 0;
      t.topology = &training_topology(ws, args.topology, {}, name, gpus);
      if (gpus < args.tp)
        throw UsageError("--tp " + std::to_string(args.tp) + ": " + args.topology + " has " + std::to_string(gpus) +
                         " GPUs");
      t.gpu = &t.topology->gpu_model(0);
    } else {
      try {
        t.gpu = &ws.catalog().gpu(name, {});
      } catch (const InputError& e) {
        throw UsageError("--gpu: " + e.message());
      }
    }
    targets.push_back(t);
  }
  return targets;
}

InferenceRequest request_of(const InferArgs& args) {
  InferenceRequest r;
  r.model = args.model;
  r.framework = args.framework;
  r.shape.precision = args.precision;
  r.shape.sparse = args.sparsity == "2:4";
  r.shape.seq = args.seq;
  r.shape.tp = args.tp;
  r.output_tokens = args.output_tokens;
  r.gpus = args.replicas;
  r.allow_tf32 = !args.no_tf32;
  // A malformed file is an InputError naming the file and pointer (exit 2).
  if (!args.seq_dist.empty()) r.shape.lengths = load_sequence_lengths(args.seq_dist);
  try {
    r.scenario = parse_serving_scenario(args.scenario);
    if (!args.mig.empty()) r.mig = parse_mig(args.mig);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!args.latency_bound.empty()) {
    if (r.scenario != ServingScenario::server) throw UsageError("--latency-bound applies to --scenario server");
    try {
      r.latency_bound_s = parse_time_s(args.latency_bound);
    } catch (const ParseError& e) {
      throw UsageError(std::string("--latency-bound: ") + e.what());
    }
    if (!(r.latency_bound_s > 0)) throw UsageError("--latency-bound must be positive");
  }
  return r;
}

Table result_table(const std::vector<InferenceResult>& results, const InferArgs& args, const Catalog& catalog,
                   const PriceTable& prices, Format format) {
  const bool text = format == Format::table;
  const bool priced = !prices.empty();
  std::vector<Column> columns = {{"model"}, {"gpu"}, {"precision"}, {"sparsity"}, {"batch"}, {"seq"},
                                 {"throughput", text ? 1 : 3}, {"unit"}, {"latency_ms", text ? 3 : 6},
                                 {"memory_GiB", 2}, {"fits"}, {"bound"}, {"per_W", 3}};
  if (priced) columns.push_back({"per_usd", 0});
  if (!text)
    for (const char* name : {"math_ms", "memory_ms", "launch_ms", "comm_ms"}) columns.push_back({name, 6});
  Table table(columns);
  for (const InferenceResult& r : results) {
    std::vector<Cell> row = {args.model, r.gpu, args.precision, args.sparsity, static_cast<long long>(r.batch),
                             r.seq > 0 ? Cell(static_cast<long long>(r.seq)) : Cell(std::string("-")),
                             r.throughput, r.unit, r.latency_s / kMs, r.memory_B / kGiB,
                             r.fits, r.bound};
    const CostFigures cost = cost_figures(catalog, prices, r.gpu, double(args.tp) * args.replicas, r.throughput);
    row.push_back(cell_or_dash(cost.per_W));
    if (priced) row.push_back(cell_or_dash(cost.per_usd));
    if (!text)
      for (double s : {r.parts.math_s, r.parts.memory_s, r.parts.launch_s, r.parts.comm_s}) row.push_back(s / kMs);
    table.add_row(row);
  }
  return table;
}

}  // namespace

void add_infer_command(CLI::App& app, Context& context) {
  CLI::App* infer = app.add_subcommand(
      "infer", "Serving a model (resnet50, bert-base, bert-large, a transformer) on GPUs, MIG instances or a TP group");
  auto args = std::make_shared<InferArgs>();
  infer->add_option("model", args->model, "A network (models/networks.json) or transformer (models/transformers.json)")
      ->required();
  infer->add_option("--gpu", args->gpus, "GPU model(s) of models/gpus.json, e.g. a100 or rtx4090,l40s,h100; with --topology, for each, " + gpu_what_if_help());
  infer->add_option("--topology", args->topology, "Server whose GPUs serve (needed for --tp; --gpu replaces its GPUs)");
  infer->add_option("--mig", args->mig, "MIG profile of the GPU, e.g. 1g.10gb; PROFILExN for N instances of one GPU");
  infer->add_option("--batch", args->batches,
                    "Batch sizes, e.g. 1,8,64 (default: offline and server pick the best that fits)");
  infer->add_option("--seq", args->seq, "Tokens per sequence (transformers; default the model's)")
      ->check(CLI::Range(1, 1 << 20));
  infer->add_option("--seq-dist", args->seq_dist,
                    "Encoder: a sequence-length distribution file (docs/inference.md), e.g. "
                    "models/datasets/squad-v1.1-mlperf.json; packed or padded to --seq as the framework runs it");
  infer->add_flag("--no-tf32", args->no_tf32,
                  "fp32 math on the fp32 units, overriding the framework's TF32 defaults (NVIDIA_TF32_OVERRIDE=0)");
  infer->add_option("--output-tokens", args->output_tokens, "Decoder: tokens generated per sequence (default 128)")
      ->check(CLI::Range(1, 1 << 20));
  infer->add_option("--precision", args->precision, "fp32, tf32, fp16, bf16, fp8 or int8")
      ->check(CLI::IsMember(inference_precisions()))
      ->default_val("fp16");
  infer->add_option("--sparsity", args->sparsity, "dense, or 2:4 (structured sparse weights)")
      ->check(CLI::IsMember({"dense", "2:4"}))
      ->default_val("dense");
  infer->add_option("--framework", args->framework, "tensorrt (fused engine) or pytorch (eager)")
      ->default_val("tensorrt");
  infer->add_option("--scenario", args->scenario, "offline, server or single-stream (MLPerf Inference's)")
      ->default_val("offline");
  infer->add_option("--latency-bound", args->latency_bound, "server: bound on a query's latency, e.g. 15ms");
  infer->add_option("--tp", args->tp, "Tensor-parallel GPUs (transformers; all-reduces on the topology's fabric)")
      ->check(CLI::Range(1, 1024))
      ->default_val(1);
  infer->add_option("--replicas", args->replicas, "GPUs (or TP groups) each serving their own copy")
      ->check(CLI::Range(1, 1 << 20))
      ->default_val(1);
  infer->add_option("--nccl", args->nccl, "NCCL release whose tuner chooses the all-reduce (default: the default line)");
  add_price_options(*infer, args->prices);
  add_format_option(*infer, args->format);
  infer->callback([args, &context]() {
    Format format = parse_format(args->format);
    const Workspace& ws = context.workspace();
    InferenceRequest request = request_of(*args);
    PriceTable prices = read_prices(args->prices, ws.catalog());
    std::vector<int> batches = args->batches.empty() ? std::vector<int>{0} : counts_option(args->batches, "--batch");
    std::vector<InferenceResult> results;
    for (const Target& target : targets_of(*args, ws)) {
      AllReduceTime allreduce;
      if (args->tp > 1) allreduce = fabric_allreduce(*target.topology, ws.catalog(), args->tp, args->nccl);
      for (int batch : batches) {
        request.shape.batch = batch;
        try {
          results.push_back(serve(ws.catalog(), *target.gpu, request, allreduce));
        } catch (const std::invalid_argument& e) {
          throw UsageError(e.what());
        }
      }
    }
    Table table = result_table(results, *args, ws.catalog(), prices, format);
    std::string head = "# topsim infer: " + args->model + ", " + args->framework + ", " + args->scenario +
                       (request.mig.profile.empty() ? std::string()
                                                    : ", MIG " + request.mig.profile + " x" +
                                                          std::to_string(request.mig.instances) + " per GPU") +
                       (args->tp > 1 ? ", tp " + std::to_string(args->tp) + " on " + args->topology : std::string()) +
                       "\n# throughput over every replica and instance; per_W over board TDP" +
                       (prices.empty() ? std::string() : "; per_usd: samples (tokens) per US dollar at the hourly price") +
                       "\n";
    for (const InferenceResult& r : results)
      if (!r.within_bound)
        std::cerr << "note: " << r.gpu << ": no batch meets the server bound of " << fixed(r.latency_bound_s / kMs, 3)
                  << " ms; batch " << fixed(r.batch, 0) << " takes " << fixed(r.latency_s / kMs, 3)
                  << " ms, and a query may wait one batch more\n";
    context.out = format == Format::table ? head + table.to_text() : table.render(format);
  });
}

}  // namespace topsim
