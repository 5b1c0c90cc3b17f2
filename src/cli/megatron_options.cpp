// topsim train --megatron-args "ARGS" | @FILE: the model and layout from Megatron-LM's arguments
// (docs/llm.md, "Megatron arguments"); llm/megatron_args.hpp reads them.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/train_common.hpp"
#include "io/io.hpp"
#include "llm/fp8_kernels.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// What may stand beside --megatron-args: where to run and how to print, none of which Megatron's
// arguments say. Every other option of `train` is topsim's own model or layout flag.
const std::vector<std::string>& target_options() {
  static const std::vector<std::string> names = {"--megatron-args", "--topology", "--nodes", "--nic", "--nics-per-node", "--gpus",
                                                 "--gpu", "--nccl", "--format", "--emit-chakra", "--allow-cross-server-tp"};
  return names;
}

}  // namespace

void add_megatron_option(CLI::App& command, std::string& text) {
  command.add_option("--megatron-args", text,
                     "The model and layout as Megatron-LM's pretrain_gpt.py arguments, or @FILE holding them (docs/llm.md); "
                     "no MODEL and no layout flags beside it");
}

std::string megatron_flag_legend() {
  return " (in Megatron's arguments: --tp is --tensor-model-parallel-size, --pp --pipeline-model-parallel-size, --vp the "
         "virtual stages per rank, --cp --context-parallel-size, --ep --expert-model-parallel-size, --first/last-stage-layers "
         "--decoder-first/last-pipeline-num-layers; --allow-cross-server-tp is topsim's own and may stand beside --megatron-args)";
}

MegatronRun megatron_train_run(const CLI::App& command, const TrainArgs& args, const std::string& text,
                               const MegatronArgumentTable& table, int gpus, const GpuModel& gpu) {
  const bool from_file = !text.empty() && text[0] == '@';
  const std::string place = from_file ? "--megatron-args " + text : std::string("--megatron-args");
  if (!args.model.empty())
    throw UsageError(place + " gives the model: leave out MODEL ('" + args.model + "'), or leave out --megatron-args");
  std::vector<std::string> clashing;
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    if (option->count() > 0 && name.rfind("--", 0) == 0 &&
        std::find(target_options().begin(), target_options().end(), name) == target_options().end())
      clashing.push_back(name);
  }
  if (!clashing.empty())
    throw UsageError(place + " gives the layout: leave out " + join(clashing, ", ") + " (topsim's own layout flags); beside it give only " +
                     join(std::vector<std::string>(target_options().begin() + 1, target_options().end()), ", "));
  try {
    const std::string words = from_file ? read_text_file(text.substr(1)) : text;
    const std::string name = from_file ? std::filesystem::path(text.substr(1)).filename().string() : "megatron-args";
    MegatronRun run = read_megatron_run(split_megatron_words(words), table, gpus, name);
    run.layout.allow_cross_server_tp = args.layout.allow_cross_server_tp;
    const std::string why = run.layout.precision == "fp8" ? fp8_recipe_unavailable(gpu, run.layout) : "";
    if (!why.empty()) throw UsageError("--fp8-recipe " + run.layout.fp8_recipe + ": " + why);
    for (const std::string& note : run.notes) std::cerr << "# megatron-args: " << note << "\n";
    if (!run.not_modelled.empty())
      std::cerr << "# not modelled: " << join(run.not_modelled, ", ") << " (Megatron-LM arguments topsim reads past)\n";
    return run;
  } catch (const UsageError& e) {
    throw UsageError(place + ": " + e.what());
  }
}

}  // namespace topsim
