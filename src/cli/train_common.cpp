#include "cli/train_common.hpp"

#include <algorithm>

#include "llm/fp8_kernels.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

void add_train_target_options(CLI::App& command, TrainArgs& args) {
  command.add_option("model", args.model, "Transformer: a bundled name (llama3-70b, gpt3-175b, ...) or a model file; train also takes an LLM scenario")->required();
  command.add_option("--topology", args.topology, "Server or cluster: a bundled name or a file (required)");
  add_scale_out_options(command, args.scale);
  command.add_option("--gpus", args.gpus, "GPUs to train on (servers follow from the topology's size)")
      ->check(CLI::Range(1, 1 << 20));
  add_gpu_option(command, args.gpu);
  command.add_option("--nccl", args.nccl, "NCCL release whose tuner chooses (2.18.5, 2.26)");
  command.add_option("--global-batch", args.layout.global_batch, "Sequences per iteration (default: micro-batch x dp)")
      ->check(CLI::Range(1, 1 << 30));
  command.add_option("--seq", args.layout.seq_len, "Tokens per sequence (default: the model's)")->check(CLI::Range(1, 1 << 24));
  command.add_option("--precision", args.layout.precision, "bf16, fp16 or fp8 (fp8 GEMMs, bf16 elsewhere)");
  // Megatron's --fp8-recipe and its default (megatron/core/transformer/transformer_config.py:594@Megatron-LM@d98e8a64ddf3).
  command.add_option_function<std::string>(
      "--fp8-recipe",
      [&args](const std::string& recipe) {
        args.layout.fp8_recipe = recipe;
        args.fp8_recipe_given = true;
      },
      "With --precision fp8: Transformer Engine's scaling recipe, delayed (default, Megatron's), tensorwise, "
      "blockwise (Hopper and later) or mxfp8 (Blackwell)");
  add_format_option(command, args.format);
}

void add_layout_options(CLI::App& command, TrainArgs& args) {
  LlmLayout& L = args.layout;
  command.add_option("--tp", L.tp, "Tensor-parallel size");
  command.add_option("--pp", L.pp, "Pipeline stages");
  command.add_option("--vp", L.vp, "Virtual stages per pipeline rank (interleaved 1F1B)");
  command.add_option("--cp", L.cp, "Context-parallel size (ring attention)");
  command.add_option("--ep", L.ep, "Expert-parallel size (MoE models; carved out of dp)");
  command.add_option("--dp", L.dp, "Data-parallel size (default: GPUs / (tp pp cp))");
  command.add_flag("--sp", L.sp, "Sequence parallelism (with tp > 1)");
  command.add_option("--zero", L.zero, "0: replicated optimizer; 1: distributed optimizer (default); 2: + gradients; 3: + parameters");
  command.add_flag("--fsdp", L.fsdp, "Fully sharded data parallelism (parameters, gradients, states)");
  command.add_option("--recompute", args.recompute, "Activation recomputation: none, selective or full");
  command.add_option("--attention", args.attention, "Attention core: flash (fused) or unfused (scores in memory, Megatron-LM before 2023)");
  command.add_option("--micro-batch", L.micro_batch, "Sequences per micro-batch");
  command.add_option("--order", args.order, "Rank placement, innermost first (Megatron's: tp-cp-dp-pp)");
  command.add_flag("--tp-comm-overlap", L.tp_comm_overlap, "Overlap tensor-parallel collectives with GEMMs (Megatron-Core)");
  add_data_parallel_options(command, args);
}

void add_data_parallel_options(CLI::App& command, TrainArgs& args) {
  LlmLayout& L = args.layout;
  // Megatron-LM's names and defaults (megatron/training/arguments.py, cited in models/megatron.json).
  command.add_flag("--overlap-grad-reduce", L.overlap_grad_reduce,
                   "Reduce-scatter (all-reduce) each gradient bucket during the last micro-batch's backward (Megatron's default: off)");
  command.add_flag("--overlap-param-gather", L.overlap_param_gather,
                   "All-gather parameters during the next forward (distributed optimizer; Megatron's default: off)");
  command.add_flag("--accumulate-allreduce-grads-in-fp32,--grad-reduce-in-fp32", L.grad_reduce_in_fp32,
                   "fp16: accumulate and reduce gradients in fp32 (bf16 and fp8 already do, as Megatron)");
  command.add_flag("--grad-reduce-in-bf16", L.grad_reduce_in_bf16,
                   "bf16 and fp8: reduce gradients in bf16, not Megatron's default fp32");
  command.add_option("--ddp-bucket-size", L.ddp_bucket_params,
                     "Gradient bucket in parameters (Megatron's default: max(40M, 1M x data-parallel size))")
      ->check(CLI::Range(1.0, 2147483647.0));
  command.add_flag("!--no-align-param-gather", L.align_param_gather,
                   "Interleaved pipelines: each bucket's parameter all-gather dispatched by the module that needs it, not by the schedule");
}

void add_layer_split_options(CLI::App& command, TrainArgs& args) {
  LlmLayout& L = args.layout;
  command.add_option("--first-stage-layers", L.first_stage_layers,
                     "Layers on the first (virtual) pipeline stage, the rest even over the others (Megatron-Core's "
                     "--decoder-first-pipeline-num-layers)")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("--last-stage-layers", L.last_stage_layers,
                     "Layers on the last (virtual) pipeline stage (--decoder-last-pipeline-num-layers)")
      ->check(CLI::Range(1, 1 << 20));
  command.add_flag("--account-for-embedding", L.account_for_embedding,
                   "The embedding takes one layer's slot on the first stage (--account-for-embedding-in-pipeline-split)");
  command.add_flag("--account-for-loss", L.account_for_loss,
                   "The LM head and loss take one layer's slot on the last stage (--account-for-loss-in-pipeline-split)");
}

void add_cross_server_option(CLI::App& command, TrainArgs& args) {
  command.add_flag("--allow-cross-server-tp", args.layout.allow_cross_server_tp,
                   "Let tensor-, context- and expert-parallel groups span NVLink domains (servers), their collectives "
                   "crossing the network");
}

std::string unfit_reason(const LlmResult& r) {
  const double GiB = 1024.0 * 1024 * 1024;
  if (r.fits) return "";
  return "needs " + fixed(r.memory.total_B() / GiB, 1) + " of " + fixed(r.memory_capacity_B / GiB, 1) + " GiB per GPU";
}

std::string cross_domain_notes(const std::vector<GroupSpan>& spanning) {
  std::string text;
  for (const GroupSpan& s : spanning)
    text += "# --" + s.group + " " + std::to_string(s.size) + " spans " + std::to_string(s.domains) +
            (s.domain_servers > 1 ? " NVLink domains" : " servers") +
            " (--allow-cross-server-tp): its collectives cross the network\n";
  return text;
}

void check_fp8_recipe(const TrainArgs& args, const GpuModel* gpu) {
  const std::vector<std::string>& names = fp8_recipes();
  if (std::find(names.begin(), names.end(), args.layout.fp8_recipe) == names.end())
    throw UsageError(unknown_name_message("--fp8-recipe", args.layout.fp8_recipe, names));
  if (args.fp8_recipe_given && args.layout.precision != "fp8")
    throw UsageError("--fp8-recipe " + args.layout.fp8_recipe + " needs --precision fp8 (the recipe scales fp8 GEMMs; " +
                     "--precision is " + args.layout.precision + ")");
  const std::string why = gpu ? fp8_recipe_unavailable(*gpu, args.layout) : "";
  if (!why.empty())
    throw UsageError("--precision fp8" + (args.fp8_recipe_given ? " --fp8-recipe " + args.layout.fp8_recipe : std::string()) +
                     ": " + why);
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  if (text == "full") return Recompute::full;
  throw UsageError("--recompute '" + text + "': expected none, selective or full");
}

Attention parse_attention(const std::string& text) {
  if (text == "flash") return Attention::flash;
  if (text == "unfused") return Attention::unfused;
  throw UsageError("--attention '" + text + "': expected flash or unfused");
}

Table training_table(const TransformerSpec& model, const std::vector<std::pair<LlmLayout, LlmResult>>& rows,
                     Format format, const std::vector<std::string>& labels) {
  const double GiB = 1024.0 * 1024 * 1024;
  std::vector<Column> columns = {{"gpus"}, {"nodes"}, {"tp"}, {"pp"}, {"vp"}, {"cp"}, {"ep"}, {"dp"}, {"mb"}, {"zero"},
                                 {"recompute"}, {"iteration_s", 3}, {"tokens_per_s", 0}, {"tflops_per_gpu", 1},
                                 {"mfu", 3}, {"hfu", 3}, {"memory_GiB", 1}, {"fits"}, {"compute_s", 3}, {"bubble_s", 3},
                                 {"tp_s", 3}, {"pp_s", 3}, {"dp_s", 3}, {"cp_s", 3}, {"ep_s", 3}, {"optimizer_s", 3}};
  // ZeRO: the text table's `zero` reads "fsdp" or the stage; CSV and JSON carry the stage as an
  // integer and FSDP as a flag of its own, the layout keys of a scenario file (docs/llm.md).
  const std::size_t zero_at = 9;  // after mb
  const bool parts = format != Format::table;
  if (parts) columns.insert(columns.begin() + zero_at + 1, Column{"fsdp"});
  // Layers per virtual stage, only when a row splits them unevenly (even tables stay as they were).
  bool uneven = false;
  for (const auto& row : rows) uneven = uneven || row.first.uneven();
  const std::size_t split_at = 5;  // after vp
  // Why a row cannot run, only when one cannot (tables of layouts that fit stay as they were).
  bool unfit = false;
  for (const auto& row : rows) unfit = unfit || !row.second.fits;
  const auto fits_column = std::find_if(columns.begin(), columns.end(), [](const Column& c) { return c.name == "fits"; });
  const auto reason_at = static_cast<std::size_t>(fits_column - columns.begin()) + 1;
  if (unfit) columns.insert(columns.begin() + reason_at, Column{"unfit_reason"});
  if (uneven) columns.insert(columns.begin() + split_at, Column{"split"});
  if (!labels.empty()) columns.insert(columns.begin(), Column{"variant"});
  if (parts)
    for (const char* name : {"weights_GiB", "gradients_GiB", "optimizer_states_GiB", "activations_GiB"})
      columns.push_back(Column{name, 2});
  if (parts)
    for (const char* name : {"floor_s", "compute_floor_s", "gpu_links_floor_s", "network_floor_s"})
      columns.push_back(Column{name, 3});
  Table table(columns);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [L, r] = rows[i];
    std::vector<Cell> row = {static_cast<long long>(r.gpus), static_cast<long long>(r.nodes), static_cast<long long>(L.tp),
                             static_cast<long long>(L.pp), static_cast<long long>(L.vp), static_cast<long long>(L.cp),
                             static_cast<long long>(L.ep), static_cast<long long>(L.dp),
                             static_cast<long long>(L.micro_batch),
                             parts ? Cell(static_cast<long long>(L.zero))
                                   : Cell(L.fsdp ? std::string("fsdp") : std::to_string(L.zero)),
                             to_string(L.recompute),
                             r.iteration_s, r.tokens_per_s, r.tflops_per_gpu, r.mfu, r.hfu, r.memory.total_B() / GiB,
                             r.fits, r.compute_s, r.bubble_s, r.tp_s, r.pp_s, r.dp_s, r.cp_s, r.ep_s, r.optimizer_s};
    if (parts) row.insert(row.begin() + zero_at + 1, L.fsdp);
    if (parts)
      for (double b : {r.memory.weights_B, r.memory.gradients_B, r.memory.optimizer_B, r.memory.activations_B})
        row.push_back(b / GiB);
    if (parts)
      for (double s : {r.floors.iteration_s(), r.floors.compute_s, r.floors.gpu_links_s, r.floors.network_s}) row.push_back(s);
    if (unfit) row.insert(row.begin() + reason_at, unfit_reason(r));
    if (uneven) {
      const std::string split = describe_layer_split(model, L);
      row.insert(row.begin() + split_at, split.empty() ? std::string("even") : split);
    }
    if (!labels.empty()) row.insert(row.begin(), labels[i]);
    table.add_row(row);
  }
  return table;
}

}  // namespace topsim
