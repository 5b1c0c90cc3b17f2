#pragma once
// Megatron-LM's launch arguments (what people pass to pretrain_gpt.py) as a transformer and a
// layout (docs/llm.md, "Megatron arguments"). Megatron's defaults, the combinations it rejects and
// the names it knows come from models/megatron.json (model/megatron_args.hpp); nothing here
// defaults a value of its own.
#include <string>
#include <vector>

#include "model/llm_spec.hpp"
#include "model/megatron_args.hpp"

namespace topsim {

/// Pasted arguments as words, the way a shell would split them: whitespace separates;
/// backslash-newline continues a line; '...' and "..." quote (a backslash escapes the next
/// character outside single quotes); '#' where a word would start comments out the rest of the
/// line; "--name=value" becomes "--name", "value". UsageError on an unclosed quote.
std::vector<std::string> split_megatron_words(const std::string& text);

/// What a set of Megatron arguments runs.
struct MegatronRun {
  TransformerSpec model;
  LlmLayout layout;  ///< unresolved (dp 0): resolve_layout() completes it
  /// Arguments Megatron accepts that topsim does not model, each once, in the order given.
  std::vector<std::string> not_modelled;
  /// What topsim derived as Megatron does, worth a line (the padded vocabulary).
  std::vector<std::string> notes;
};

/// Reads `words` (split_megatron_words()) on `gpus` GPUs (Megatron's world size). The words up
/// to the first "*.py" (python or torchrun and its options, pretrain_gpt.py) are skipped.
/// UsageError naming the argument for a name Megatron does not define (with the closest one), a
/// missing value topsim needs and Megatron has no default for, a value Megatron would not parse,
/// a combination Megatron rejects (its reason and citation) and one topsim cannot model.
/// `name` names the model.
MegatronRun read_megatron_run(const std::vector<std::string>& words, const MegatronArgumentTable& table, int gpus,
                              const std::string& name);

/// The 0/1 per layer of --moe-layer-freq: an integer N (layer i is MoE when i % N == 0) or a
/// list expression of [a, b, ...], '+', '* N' and parentheses ("([0]*3+[1]*58)"). UsageError
/// for any other form.
std::vector<int> moe_layer_pattern(const std::string& text, int layers);

}  // namespace topsim
