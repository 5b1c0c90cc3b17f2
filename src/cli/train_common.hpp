#pragma once
// What `train` and `plan` share: the model and cluster flags, the layout flags, and the row
// every layout prints.
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "llm/domains.hpp"
#include "llm/megatron_args.hpp"
#include "study/train.hpp"

namespace topsim {

struct TrainArgs {
  std::string model;
  std::string topology;
  ScaleOut scale;
  std::string gpu;
  int gpus = 0;
  std::string nccl;
  std::string order = "tp-cp-dp-pp";
  std::string recompute = "none";
  std::string attention = "flash";
  std::string format = "table";
  LlmLayout layout;
  bool fp8_recipe_given = false;  ///< --fp8-recipe was on the command line (it needs --precision fp8)
};

/// Refuses an unknown --fp8-recipe, one without --precision fp8, and (given the GPU) one the GPU
/// cannot run (UsageError).
void check_fp8_recipe(const TrainArgs& args, const GpuModel* gpu = nullptr);

/// --allow-cross-server-tp (both commands: tensor, context and expert groups across NVLink
/// domains; src/llm/domains.hpp).
void add_cross_server_option(CLI::App& command, TrainArgs& args);

/// Why a layout cannot run, "" when it fits: "needs 96.2 of 40.0 GiB per GPU".
std::string unfit_reason(const LlmResult& result);

/// The notes a layout's groups across NVLink domains (allowed) earn above a table: "# --tp 16
/// spans 2 servers (--allow-cross-server-tp): its collectives cross the network\n".
std::string cross_domain_notes(const std::vector<GroupSpan>& spanning);

/// MODEL, --topology, --nodes, --nic, --nics-per-node, --gpus, --gpu, --nccl, --global-batch,
/// --seq, --precision, --fp8-recipe, --format (the flags both commands take).
void add_train_target_options(CLI::App& command, TrainArgs& args);
/// --tp, --pp, --vp, --cp, --ep, --dp, --sp, --zero, --fsdp, --recompute, --micro-batch, --order
/// and the overlap switches (train only: plan searches them).
void add_layout_options(CLI::App& command, TrainArgs& args);

/// --overlap-grad-reduce, --overlap-param-gather, --grad-reduce-in-fp32, --ddp-bucket-size,
/// --no-align-param-gather (Megatron-LM's flags and defaults; part of add_layout_options, and
/// plan's own since it does not search them).
void add_data_parallel_options(CLI::App& command, TrainArgs& args);

/// --first-stage-layers, --last-stage-layers, --account-for-embedding, --account-for-loss (both
/// commands: train splits by them; plan, given any, takes that split for every layout).
void add_layer_split_options(CLI::App& command, TrainArgs& args);

/// --megatron-args "ARGS" | @FILE (train; cli/megatron_options.cpp).
void add_megatron_option(CLI::App& command, std::string& text);
/// The model and layout of --megatron-args on `gpus` GPUs. UsageError when MODEL or a layout flag
/// of `command` is given beside it (one source of truth: only the target options --topology,
/// --gpus, --nodes, --nic, --nics-per-node, --gpu, --nccl, --format, --emit-chakra and
/// --allow-cross-server-tp may be), or when the arguments are refused (llm/megatron_args.hpp).
/// `gpu` must run the fp8 recipe given (fp8_recipe_unavailable()). Writes the arguments topsim
/// does not model in one line to stderr.
MegatronRun megatron_train_run(const CLI::App& command, const TrainArgs& args, const std::string& text,
                               const MegatronArgumentTable& table, int gpus, const GpuModel& gpu);

/// "; topsim's --tp is Megatron's --tensor-model-parallel-size, ...": what the layout checks'
/// messages (which name topsim's flags) say in Megatron's words.
std::string megatron_flag_legend();

Recompute parse_recompute(const std::string& text);
Attention parse_attention(const std::string& text);

/// The table of `train` and `plan`: one row per layout with its figures and breakdown.
/// `labels`, when given, make a first column "variant" (one label per row); a column "split"
/// after vp when some row's layers are split unevenly (describe_layer_split()); a column
/// "unfit_reason" after fits when some row does not fit in its GPU's memory (unfit_reason()).
Table training_table(const TransformerSpec& model, const std::vector<std::pair<LlmLayout, LlmResult>>& rows,
                     Format format, const std::vector<std::string>& labels = {});

}  // namespace topsim
