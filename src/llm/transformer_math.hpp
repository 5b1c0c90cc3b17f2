#pragma once
// A transformer's arithmetic, by hand-checkable formulas: parameters, the FLOPs MFU and HFU count,
// the kernels one rank runs for one micro-batch through one layer under a layout, the bytes its
// communication moves, and what one GPU holds. No simulation here: the iteration model times
// the kernels with the compute model and the communication on the fabric.
#include <string>
#include <vector>

#include "compute/kernel.hpp"
#include "model/llm_spec.hpp"

namespace topsim {

/// Parameters of a whole model (elements), by part. Biases are left out (Llama has none; for
/// GPT they are < 0.1%).
struct ParamCounts {
  double attention = 0;       ///< QKV and output projections, all layers
  double mlp = 0;             ///< dense FFNs (dense layers only)
  double experts = 0;         ///< routed experts of every MoE layer
  double shared_experts = 0;  ///< always-active experts of every MoE layer
  double router = 0;          ///< MoE gates
  double norms = 0;           ///< two norms per layer and the final one (h each)
  double embedding = 0;       ///< vocab x hidden
  double lm_head = 0;         ///< vocab x hidden, 0 when tied to the embedding
  double total() const { return attention + mlp + experts + shared_experts + router + norms + embedding + lm_head; }
};
ParamCounts count_params(const TransformerSpec& model);

/// FLOPs of one iteration over `sequences` sequences of `seq_len` tokens, as Megatron-LM counts
/// them (Narayanan et al. 2021, eq. 3, generalised to GQA, SwiGLU and MoE): per token, forward
/// 2 x (the matrix parameters a token passes through, the LM head included, the embedding lookup
/// not) + 4 x seq_len x heads x head_dim per layer (attention scores and context over the full
/// square, not the causal half); backward twice forward.
///   model: 3 x forward (what MFU divides by the peak)
///   hardware: + one more forward of every layer under full recomputation, + the attention
///             core's forward under selective (what HFU counts; the LM head is never recomputed)
struct IterationFlops {
  double model = 0;
  double hardware = 0;
};
IterationFlops iteration_flops(const TransformerSpec& model, int seq_len, double sequences, Recompute recompute);

/// A kernel of one rank's layer, forward or backward, with the name a breakdown uses.
struct NamedKernel {
  std::string name;   ///< "qkv", "attention", "fc1.dgrad", ...
  Kernel kernel;
  bool gemm = false;  ///< a GEMM that tensor-parallel communication may overlap
  bool core = false;  ///< part of the attention core (what selective recomputation runs again)
};

/// What one rank does for one micro-batch through one layer (or the embedding / LM head).
struct LayerKernels {
  std::vector<NamedKernel> forward;
  std::vector<NamedKernel> backward;  ///< without recomputation (the caller adds the forward again)
};

/// The math type of the layout's GEMMs ("fp8" GEMMs under fp8) and of everything else.
struct LlmTypes {
  std::string gemm_dtype;     ///< bf16, fp16, or under fp8 the recipe's: fp8, fp8_block or mxfp8
  std::string other_dtype;    ///< bf16 or fp16: attention, activations
  double activation_B = 0;    ///< bytes of one activation element
  double gradient_B = 0;      ///< bytes of one gradient element as data parallelism reduces it
  std::string gradient_nccl;  ///< NCCL type of that reduction
};
/// Megatron-LM's rule (megatron/training/arguments.py:1195-1217@Megatron-LM@d98e8a64ddf3): under
/// bf16 (and fp8, whose non-GEMM math is bf16) gradients accumulate and are reduced in fp32 (the
/// main-grads dtype's default) unless --grad-reduce-in-bf16; under fp16 in fp16 unless
/// --accumulate-allreduce-grads-in-fp32 (LlmLayout::grad_reduce_in_fp32).
LlmTypes llm_types(const LlmLayout& layout);

/// Transformer layer `layer` on one rank: GEMMs split by tp (columns of QKV and fc1, rows of the
/// projections), tokens split by cp (and by tp for norms and residuals under sp), experts of MoE
/// layers not tensor-split (each EP rank runs its tokens' share of the routed experts).
/// `gpu` (may be null) tells fp8 casts whether the GPU's fp8 GEMMs need transposed copies
/// (llm/fp8_kernels.hpp).
LayerKernels layer_kernels(const TransformerSpec& model, const LlmLayout& layout, int layer, const GpuModel* gpu = nullptr);
/// The embedding lookup (first stage) and the LM head with its cross-entropy (last stage).
LayerKernels embedding_kernels(const TransformerSpec& model, const LlmLayout& layout);
LayerKernels head_kernels(const TransformerSpec& model, const LlmLayout& layout);

/// Bytes one rank's communication moves per micro-batch through one layer (sizes as nccl-tests
/// counts them) and how many of each the forward runs; backward runs as many again.
struct LayerComm {
  int tp_ops = 0;            ///< forward TP collectives: 2 all-reduces, or 2 all-gathers + 2 reduce-scatters under sp
  double tp_B = 0;           ///< each one's size: the layer's activation of the micro-batch on this rank
  double pp_B = 0;           ///< activation a stage sends to the next per micro-batch (1/tp of it under sp)
  int cp_steps = 0;          ///< ring-attention steps exchanging K and V (cp - 1)
  double cp_B = 0;           ///< each step's send: this rank's K and V
  double ep_B = 0;           ///< MoE layers: each all-to-all (dispatch, combine) per rank
};
LayerComm layer_comm(const TransformerSpec& model, const LlmLayout& layout, int layer);

/// Parameters one GPU holds of pipeline stage `stage` before any ZeRO sharding: its layers' split
/// by tp (experts by ep), plus the embedding on the first stage and the LM head on the last.
struct RankParams {
  double dense = 0;    ///< replicated over dp x cp (gradients reduced over them)
  double experts = 0;  ///< replicated over dp x cp / ep
  double total() const { return dense + experts; }
  /// What one GPU holds of them: all, or (sharded) its share of dp x cp replicas (experts: of
  /// dp x cp / ep).
  double held(const LlmLayout& layout, bool sharded) const;
};
RankParams rank_params(const TransformerSpec& model, const LlmLayout& layout, int stage);

/// One virtual stage's parameters on one rank (v = chunk x pp + rank), as data parallelism
/// buckets them: the dense ones by where backward produces their gradients (the LM head and
/// final norm on the last virtual stage, the transformer layers, the embedding on the first), the
/// routed experts apart (their own buffer, reduced over the expert data-parallel group).
struct StageParams {
  double head = 0, layers = 0, embedding = 0;
  double experts = 0;
  double dense() const { return head + layers + embedding; }
};
StageParams virtual_stage_params(const TransformerSpec& model, const LlmLayout& layout, int virtual_stage);

/// ZeRO-3 / FSDP: bytes one rank holds whole while it runs its largest layer: that layer's
/// parameters (its tensor-parallel share, its ep share of the experts) gathered as 16-bit
/// weights, and its gradient unsharded until the reduce-scatter.
double largest_gathered_layer_B(const TransformerSpec& model, const LlmLayout& layout);

/// What one GPU of a stage holds during an iteration, in bytes.
struct LlmMemory {
  double weights_B = 0;      ///< 16-bit weights (sharded under ZeRO-3 / FSDP, plus the gathered layers in flight)
  double gradients_B = 0;    ///< gradient buffer (sharded under ZeRO-2 and -3)
  double optimizer_B = 0;    ///< fp32 master weights and Adam moments (sharded under ZeRO >= 1)
  double activations_B = 0;  ///< kept for backward: per layer, times the layers in flight
  double total_B() const { return weights_B + gradients_B + optimizer_B + activations_B; }
};
/// `layers_in_flight`: micro-batch layers whose activations the stage holds at its peak (from
/// the pipeline schedule); `optimizer_state_B`: bytes of optimizer state per parameter.
LlmMemory stage_memory(const TransformerSpec& model, const LlmLayout& layout, int stage, double layers_in_flight,
                       double optimizer_state_B);
/// Bytes one layer keeps for backward per micro-batch on one rank (Korthikanti et al. 2022,
/// without the attention-score term flash attention never stores).
double layer_activation_B(const TransformerSpec& model, const LlmLayout& layout, int layer);

}  // namespace topsim
