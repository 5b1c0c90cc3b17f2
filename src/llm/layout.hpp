#pragma once
// A training layout checked against its model and GPU count, and where each rank sits: Megatron's
// order puts tensor parallelism innermost (consecutive GPUs, inside a server), then context,
// data and pipeline parallelism; `order` overrides it.
#include <array>
#include <string>
#include <vector>

#include "model/llm_spec.hpp"

namespace topsim {

/// Parallel dimensions, innermost first, as rank placement nests them.
enum class Dim { tp, cp, dp, pp };
using DimOrder = std::array<Dim, 4>;
/// "tp-cp-dp-pp" (Megatron's); UsageError unless it names each of tp, cp, dp, pp once.
DimOrder parse_dim_order(const std::string& text);
std::string to_string(const DimOrder& order);

/// Fills dp when 0 (GPUs / (tp pp cp)), vp 1, seq_len from the model when 0, and checks every
/// constraint Megatron-LM checks: UsageError saying which numbers disagree (product of sizes and
/// GPUs, heads and tp, layers and pp x vp, batch and micro-batch x dp, experts and ep, ...).
LlmLayout resolve_layout(const TransformerSpec& model, LlmLayout layout, int gpus);

/// Transformer layers of each virtual stage v = chunk x pp + rank (pp x vp of them, in model
/// order; Megatron's interleaving): layers / (pp vp) each by default; with first/last_stage_layers
/// those on the first and last virtual stage and the rest evenly over the others; with the
/// embedding / loss accounting, (layers + units) / (pp vp) slots each, the first virtual stage's
/// embedding and the last one's loss taking one slot. UsageError naming the numbers that disagree
/// and what would be valid (the one check of the split; resolve_layout runs it).
std::vector<int> virtual_stage_layer_counts(const TransformerSpec& model, const LlmLayout& layout);
/// Layer indices of virtual stage `virtual_stage`, consecutive.
std::vector<int> virtual_stage_layers(const TransformerSpec& model, const LlmLayout& layout, int virtual_stage);
/// Layer indices of pipeline rank `stage`: its vp chunks, chunk c being virtual stage c pp + stage.
std::vector<int> stage_layers(const TransformerSpec& model, const LlmLayout& layout, int stage);
/// The split for a reader, "" unless layout.uneven(): first virtual stage, the middle ones
/// run-length coded, last: "7+emb/8x14/7+loss", "5/6x10/5".
std::string describe_layer_split(const TransformerSpec& model, const LlmLayout& layout);

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

class Placement {
 public:
  Placement(const LlmLayout& layout, DimOrder order);
  int rank(const RankCoord& c) const;
  RankCoord coord(int rank) const;
  int ranks() const { return size_[0] * size_[1] * size_[2] * size_[3]; }
  const DimOrder& order() const { return order_; }

 private:
  int size(Dim d) const;
  DimOrder order_;
  std::array<int, 4> size_{};  ///< by Dim
};

}  // namespace topsim
