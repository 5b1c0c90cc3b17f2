#pragma once
// What one training iteration cannot beat, derived from the layout alone (no simulation): the
// kernels at the datasheet peak, the bytes the layout's communication must move over the line
// rate of the links that can carry them, and the memory a rank must hold. Every LlmResult obeys
// them; the sanitizer pass (TOPSIM_INVARIANTS) checks it on every train, plan and validation row.
//
// Communication floors, per collective of nccl-tests size S over n ranks (any algorithm, SHARP
// and NVLS included): a rank of an all-reduce sends >= S and receives >= S (each element either
// leaves as its partial or as the result); an all-gather delivers S (n-1)/n into each rank, a
// reduce-scatter takes S (n-1)/n out of each. A server holding k of the n ranks: all-reduce
// >= S out and in, all-gather >= S (n-k)/n in, reduce-scatter >= S (n-k)/n out. Summed over the
// job and divided by the summed line rate (the busiest GPU or server is at least the mean).
#include <string>

#include "model/catalog.hpp"
#include "model/llm_spec.hpp"

namespace topsim {

class Topology;
struct LlmOptions;
struct LlmResult;

struct LlmBounds {
  double compute_s = 0;    ///< the mean pipeline rank's kernels at their floor (KernelCost::floor_s), optimizer step included
  double gpu_links_s = 0;  ///< bytes into or out of the GPUs over the line rate of every GPU's links
  double network_s = 0;    ///< bytes into or out of the servers over the line rate of the links leaving them
  double memory_B = 0;     ///< weights, gradients and optimizer state of the mean rank, plus the largest gathered buffer
  /// Per-iteration bytes, summed over the job, the larger direction.
  double gpu_links_B = 0, network_B = 0;
  double iteration_s() const;
  /// "compute", "gpu links" or "network": which floor is highest.
  std::string binding() const;
};

LlmBounds llm_bounds(const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                     const LlmLayout& layout, const LlmOptions& options);

/// std::logic_error naming the bound `result` breaks: iteration_s below a floor, hfu above 1,
/// mfu above hfu, or memory below what a rank must hold.
void check_llm_invariants(const LlmResult& result, const LlmBounds& bounds);

}  // namespace topsim
