#pragma once
// FP8 training as Megatron-Core runs it on Transformer Engine (TE): which GEMMs run in fp8, and
// the memory-bound cast work each recipe adds around them. docs/llm.md ("FP8") cites the sources;
// in short:
// - fp8: the GEMMs of TE's Linear and LayerNormLinear (QKV, attention projection, FC1, FC2) and
//   TE's GroupedLinear (MoE experts), in fprop, dgrad and wgrad (Megatron's fp8_wgrad True).
// - 16-bit: the attention core (fp8_dot_product_attention False), the embedding and the LM head
//   (not TE modules), the router, norms, activations and residuals.
// - per GEMM: its input cast once per micro-batch, its output gradient cast in backward, its
//   weight cast on the first micro-batch of an iteration only (Megatron passes
//   is_first_microbatch to TE), each with the copies and scales the recipe stores.
#include <string>
#include <vector>

#include "llm/transformer_math.hpp"

namespace topsim {

/// The fp8 scaling recipes Megatron's --fp8-recipe names (Transformer Engine's DelayedScaling,
/// Float8CurrentScaling, Float8BlockScaling, MXFP8BlockScaling), Megatron's default first.
const std::vector<std::string>& fp8_recipes();

/// The GEMM math type of a recipe in the kernel model: "fp8" (one scale per tensor: delayed,
/// tensorwise), "fp8_block" (blockwise) or "mxfp8". std::invalid_argument for other names.
std::string fp8_gemm_dtype(const std::string& recipe);

/// Why `gpu` cannot train under L's fp8 recipe (Transformer Engine's reason: MXFP8 needs
/// Blackwell, block scaling Hopper), "" when it can or L is not fp8.
std::string fp8_recipe_unavailable(const GpuModel& gpu, const LlmLayout& L);

/// How a recipe stores one quantized operand, in bytes per element of the 16-bit source.
struct Fp8Storage {
  /// fp8 copies a cast writes of an operand two GEMMs read: row-wise for one, column-wise for
  /// the other (the wgrad GEMM's X and dY, the dgrad GEMM's W).
  double copies = 2;
  double activation_scale_B = 0;  ///< scale bytes per element per copy of activations and gradients
  double weight_scale_B = 0;      ///< scale bytes per element per copy of weights
  bool amax_pass = false;         ///< current scaling: a pass reading the tensor for its amax first
  bool norm_writes_fp8 = false;   ///< delayed: the norm before QKV / FC1 writes the row-wise fp8 copy itself
  bool norm_finds_amax = false;   ///< current scaling: that norm finds the amax (no amax pass, a cast still)
};
/// `gpu`: per-tensor recipes write one copy where the GPU runs non-TN fp8 GEMMs (compute
/// capability 10.0-11.x and 13.0+); null: two (Hopper and Ada, where topsim's fp8 rows ran).
Fp8Storage fp8_storage(const std::string& recipe, const GpuModel* gpu = nullptr);

/// Adds to a layer's kernels (layer_kernels) the casts of its fp8 GEMMs under L.fp8_recipe:
/// every GEMM of an fp8 math type in `out.forward` gets its input, weight (a 1 / micro-batches
/// share) and output-gradient casts, named GEMM.cast / .amax / .weight_cast / .transpose and
/// GEMM.grad_cast / .grad_amax. Nothing unless L.precision is "fp8".
void add_fp8_casts(LayerKernels& out, const LlmLayout& L, const GpuModel* gpu = nullptr);

/// Delayed scaling's amax reduction (reduce_amax True): one all-reduce (MAX) of the amaxes of a
/// model chunk's fp8 tensors when its forward leaves fp8_autocast, one in its backward, over the
/// tensor x data x context-parallel group. Latency-bound: not timed by the iteration model yet
/// (docs/llm.md says so); the bytes for whoever times it.
struct Fp8AmaxReduction {
  double forward_B = 0;   ///< one chunk's forward all-reduce: 3 amaxes (input, weight, output) per GEMM, fp32
  double backward_B = 0;  ///< one chunk's backward all-reduce: 2 amaxes (output gradient, input gradient) per GEMM
  int group_ranks = 0;    ///< tp x dp x cp
};
/// Of `layers` layers of `gemms_per_layer` fp8 GEMMs each; zero bytes unless delayed under fp8.
Fp8AmaxReduction fp8_amax_reduction(const LlmLayout& L, int layers, int gemms_per_layer);

}  // namespace topsim
