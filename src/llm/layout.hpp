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
