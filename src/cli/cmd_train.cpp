// topsim train MODEL --topology T [layout flags]: one training iteration of a transformer (or
// train --megatron-args ARGS --topology T: the model and layout from Megatron-LM's arguments).
#include <filesystem>
#include <memory>

#include "io/io.hpp"

#include "cli/train_common.hpp"
#include "interop/chakra/chakra.hpp"
#include "llm/iteration_trace.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// "# DOES NOT FIT: ..." when the layout needs more memory than its GPU has: the figures that
// follow are what it would run at with enough memory, a what-if rather than a run.
std::string unfit_line(const LlmResult& r, const Topology& topology) {
  if (r.fits) return "";
  const double GiB = 1024.0 * 1024 * 1024;
  return "# DOES NOT FIT: needs " + fixed(r.memory.total_B() / GiB, 1) + " GiB per GPU of " +
         fixed(r.memory_capacity_B / GiB, 1) + " GiB (" + topology.gpu_model(0).name +
         "); the figures below assume the memory were there (topsim plan lists layouts that fit)\n";
}

std::string header(const TransformerSpec& m, const LlmLayout& L, const LlmResult& r, const Topology& topology,
                   const DimOrder& order, const std::vector<GroupSpan>& spanning) {
  ParamCounts p = count_params(m);
  const double GiB = 1024.0 * 1024 * 1024;
  std::string text = "# topsim train: " + m.name + " (" + fixed(p.total() / 1e9, 2) + " B parameters) on " +
                     std::to_string(r.gpus) + " GPUs of " + topology.label() + "\n";
  text += unfit_line(r, topology);
  text += "# layout: tp " + std::to_string(L.tp) + (L.sp ? " (sp)" : "") + ", pp " + std::to_string(L.pp) + ", vp " +
          std::to_string(L.vp) + ", cp " + std::to_string(L.cp) + ", ep " + std::to_string(L.ep) + ", dp " +
          std::to_string(L.dp) + "; " + std::to_string(L.global_batch) + " sequences of " + std::to_string(L.seq_len) +
          " tokens, micro-batch " + std::to_string(L.micro_batch) + " (" + std::to_string(L.micro_batches()) +
          " per replica); " + L.precision + "; ranks " + to_string(order) + "\n";
  if (L.uneven())  // first virtual stage / middle ones (layers x stages) / last
    text += "# layers per virtual stage: " + describe_layer_split(m, L) + "\n";
  text += cross_domain_notes(spanning);
  text += "# memory per GPU: weights " + fixed(r.memory.weights_B / GiB, 1) + " GiB, gradients " +
          fixed(r.memory.gradients_B / GiB, 1) + ", optimizer states " + fixed(r.memory.optimizer_B / GiB, 1) +
          ", activations " + fixed(r.memory.activations_B / GiB, 1) + " of " + fixed(r.memory_capacity_B / GiB, 1) +
          " GiB\n";
  text += "# communication (one instance, under its window's traffic): ";
  std::vector<std::string> parts;
  for (const auto& [name, s] : r.comm_s)
    if (s > 0) parts.push_back(name + " " + fixed(s * 1e3, 3) + " ms");
  text += (parts.empty() ? std::string("none") : join(parts, ", ")) + "\n";
  text += "# NCCL: " + r.algorithms + "\n";
  if (!r.dp_gradient_type.empty() && L.dp * L.cp > 1)
    text += "# data parallelism (Megatron-Core, docs/llm.md): " +
            (L.overlap_grad_reduce ? "buckets of " + fixed(r.dp_bucket_params / 1e6, 1) + "M parameters (" +
                                         std::to_string(r.dp_first_chunk_buckets) + " on stage 0's first chunk), reduced during the last backward"
                                   : std::string("one collective per model chunk after the last backward")) +
            ", gradients as " + r.dp_gradient_type + (L.zero == 1 ? (L.overlap_param_gather ? "; parameters gathered during the next forward" : "; parameters gathered before the next forward") : "") +
            "; exposed: reduction " + fixed(r.dp_reduce_exposed_s * 1e3, 3) + " ms" +
            (L.zero == 1 ? ", all-gather " + fixed(r.dp_gather_exposed_s * 1e3, 3) + " ms" : "") + "\n";
  const LlmBounds& f = r.floors;
  text += "# floors (docs/llm.md): compute " + fixed(f.compute_s, 3) + " s, GPU links " + fixed(f.gpu_links_s, 3) +
          " s, network " + fixed(f.network_s, 3) + " s; the iteration is " + fixed(r.iteration_s / f.iteration_s(), 2) +
          " times the " + f.binding() + " floor\n";
  text += "# mfu: model FLOPs (Megatron's count, docs/llm.md) over the dense peak of the GEMMs' math (fp8 runs: the fp8 peak); hfu adds recomputation\n";
  return text;
}

// A bundled LLM scenario: every variant at every server count.
void run_llm_scenario(const std::string& path, const TrainArgs& args, Context& context, Format format) {
  const Workspace& ws = context.workspace();
  LlmScenarioSpec s = load_llm_scenario(path);
  TransformerSpec model = find_transformer(ws, s.model);
  LlmOptions options;
  options.nccl = args.nccl;
  std::vector<std::pair<LlmLayout, LlmResult>> rows;
  std::vector<std::string> labels;
  for (const LlmVariant& v : s.variants)
    for (int nodes : s.nodes) {
      ScaleOut scale;
      scale.nodes = nodes;
      scale.nic = v.nic;
      scale.nics_per_node = v.nics_per_node;
      int gpus = 0;
      const Topology& topology = training_topology(ws, v.topology.empty() ? s.topology : v.topology, scale, v.gpu, gpus);
      LlmLayout layout;
      try {
        layout = resolve_layout(model, v.layout, gpus);
        layout.allow_cross_server_tp = layout.allow_cross_server_tp || args.layout.allow_cross_server_tp;
        check_group_domains(topology, layout, options.order, v.topology.empty() ? s.topology : v.topology);
      } catch (const UsageError& e) {
        throw InputError(path, v.name.empty() ? "/layout" : "/variants", (v.name.empty() ? "" : "variant '" + v.name + "' ") +
                                                                        "at " + std::to_string(nodes) + " servers: " + e.what());
      }
      rows.emplace_back(layout, simulate_iteration(topology, ws.catalog(), model, layout, options));
      labels.push_back(v.name.empty() ? "-" : v.name);
    }
  Table table = training_table(model, rows, format, labels);
  std::size_t unfit = 0;
  for (const auto& row : rows) unfit += row.second.fits ? 0 : 1;
  const std::string unfit_note = unfit == 0 ? ""
                                            : "# DOES NOT FIT: " + std::to_string(unfit) + " of " + std::to_string(rows.size()) +
                                                  " rows need more memory than their GPUs have (unfit_reason); their "
                                                  "figures assume the memory were there\n";
  context.out = format == Format::table ? "# topsim train: " + s.description + "\n# " + model.name + " on " +
                                              s.topology + "; " + s.sources + "\n" + unfit_note + table.to_text()
                                        : table.render(format);
}

}  // namespace

void add_train_command(CLI::App& app, Context& context) {
  CLI::App* train =
      app.add_subcommand("train", "One training iteration of a transformer under a parallel layout, or an LLM scenario's points");
  auto args = std::make_shared<TrainArgs>();
  add_train_target_options(*train, *args);
  add_layout_options(*train, *args);
  add_layer_split_options(*train, *args);
  add_cross_server_option(*train, *args);
  auto megatron = std::make_shared<std::string>();
  add_megatron_option(*train, *megatron);
  train->get_option("model")->required(false);  // --megatron-args gives the model instead
  auto emit_chakra = std::make_shared<std::string>();
  train->add_option("--emit-chakra", *emit_chakra,
                    "Write the iteration as Chakra ET files PREFIX.<rank>.et, one per rank (docs/chakra.md)");
  train->callback([train, args, megatron, emit_chakra, &context]() {
    Format format = parse_format(args->format);
    check_fp8_recipe(*args);
    const Workspace& ws = context.workspace();
    if (args->model.empty() && megatron->empty())
      throw UsageError("MODEL is required: a bundled transformer, a model file or an LLM scenario (or --megatron-args)");
    if (megatron->empty() && ws.catalog().transformers().count(args->model) == 0) {
      std::string path = ws.scenario_path(args->model);
      std::error_code ec;
      if (std::filesystem::is_regular_file(path, ec) && is_llm_scenario_file(path)) {
        if (!emit_chakra->empty()) throw UsageError("--emit-chakra writes one iteration: give a model, not a scenario");
        run_llm_scenario(path, *args, context, format);
        return;
      }
    }
    TransformerSpec model = megatron->empty() ? find_transformer(ws, args->model) : TransformerSpec{};
    if (args->topology.empty()) throw UsageError("--topology is required: the server or cluster to train on");
    LlmOptions options;
    options.order = parse_dim_order(args->order);
    options.nccl = args->nccl;
    args->layout.recompute = parse_recompute(args->recompute);
    args->layout.attention = parse_attention(args->attention);
    int gpus = args->gpus;
    const Topology& topology = training_topology(ws, args->topology, args->scale, args->gpu, gpus);
    LlmLayout layout = args->layout;
    if (!megatron->empty()) {
      MegatronRun run = megatron_train_run(*train, *args, *megatron, ws.catalog().megatron_arguments(), gpus, topology.gpu_model(0));
      model = run.model;
      layout = run.layout;
    } else {
      check_fp8_recipe(*args, &topology.gpu_model(0));
    }
    std::vector<GroupSpan> spanning;
    try {
      layout = resolve_layout(model, layout, gpus);
      spanning = check_group_domains(topology, layout, options.order, args->topology);
    } catch (const UsageError& e) {
      if (megatron->empty()) throw;
      throw UsageError(std::string("--megatron-args: ") + e.what() + megatron_flag_legend());
    }
    IterationWindows windows;
    LlmResult r = simulate_iteration(topology, ws.catalog(), model, layout, options, &windows);
    std::string emitted;
    if (!emit_chakra->empty()) {
      std::vector<std::string> files = write_chakra(*emit_chakra, iteration_trace(layout, options.order, r, windows));
      emitted = "# chakra: wrote " + std::to_string(files.size()) + " files " + *emit_chakra + ".{0.." +
                std::to_string(files.size() - 1) + "}.et (topsim run --chakra " + *emit_chakra + " replays them)\n";
    }
    Table table = training_table(model, {{layout, r}}, format);
    context.out = format == Format::table ? header(model, layout, r, topology, options.order, spanning) + emitted + table.to_text()
                                          : table.render(format);
  });
}

}  // namespace topsim
