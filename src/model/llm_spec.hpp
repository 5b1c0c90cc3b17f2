#pragma once
// Large language models as plain data: a transformer by its shape (models/transformers.json or a
// user file) and a training layout (how Megatron-LM / NeMo split it over GPUs). No JSON here; io
// reads them, llm turns them into kernels, communication and a pipeline schedule.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

/// Mixture-of-experts feed-forward layers (Mixtral, DeepSeek-V3).
struct MoeSpec {
  int experts = 0;               ///< routed experts per MoE layer
  int top_k = 0;                 ///< routed experts each token visits
  int expert_ffn_hidden = 0;     ///< intermediate size of one expert (and of each shared expert)
  int shared_experts = 0;        ///< experts every token visits besides its top_k
  std::vector<bool> moe_layer;   ///< per layer: true when its FFN is the MoE one (size = layers)
};

/// A decoder-only transformer by shape. Every size is a count of elements.
struct TransformerSpec {
  std::string name;
  std::string description;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;              ///< grouped-query attention; == heads for multi-head attention
  int head_dim = 0;              ///< hidden / heads unless the file says otherwise
  int ffn_hidden = 0;            ///< MLP intermediate size of dense layers
  enum class Ffn { gelu, swiglu } ffn = Ffn::gelu;  ///< 2-matrix GELU MLP or gated 3-matrix SwiGLU
  int vocab = 0;
  int seq_len = 0;               ///< the training sequence the model was published with
  bool tied_embeddings = false;  ///< the LM head reuses the input embedding's weights
  /// Bidirectional encoder (BERT): inference is one forward pass over the whole sequence, ending
  /// in a small task head instead of an LM head; no generation.
  bool encoder = false;
  std::optional<MoeSpec> moe;
  std::string source;            ///< where the shape comes from
  SourceRef where;

  bool is_moe_layer(int layer) const { return moe && moe->moe_layer[static_cast<std::size_t>(layer)]; }
};

/// Activation recomputation as Megatron-LM offers it.
enum class Recompute {
  none,       ///< every activation backward needs is kept
  selective,  ///< attention's core (scores, softmax) recomputed: free under flash attention
  full,       ///< only each layer's input kept; the whole forward runs again in backward
};
std::string to_string(Recompute r);

/// How the attention core runs.
enum class Attention {
  flash,    ///< one fused kernel (FlashAttention): no score matrix in memory
  unfused,  ///< Megatron-LM before flash attention: batched GEMMs for scores and context, a fused
            ///< scale-mask-softmax and dropout over the score matrix in memory
};
std::string to_string(Attention a);

/// How one training run splits the model and the batch over GPUs (Megatron-LM's flags).
struct LlmLayout {
  int tp = 1;                    ///< tensor parallel (--tensor-model-parallel-size)
  int pp = 1;                    ///< pipeline stages (--pipeline-model-parallel-size)
  int vp = 1;                    ///< virtual stages per pipeline rank (interleaved 1F1B)
  /// Uneven pipelines (docs/llm.md, "Uneven pipelines"): transformer layers on the first and on
  /// the last virtual stage (Megatron-Core's --decoder-first/last-pipeline-num-layers), the
  /// other virtual stages sharing the rest evenly; 0: not set (the stage gets the even share).
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  /// The embedding (first virtual stage) and the loss (LM head and cross-entropy, last virtual
  /// stage) each take one layer's slot in the split (--account-for-*-in-pipeline-split).
  bool account_for_embedding = false;
  bool account_for_loss = false;
  int cp = 1;                    ///< context parallel (ring attention over the sequence)
  int ep = 1;                    ///< expert parallel (carved out of tp x cp x dp for MoE layers, llm/expert_groups.hpp)
  int dp = 0;                    ///< data-parallel replicas (0: GPUs / (tp pp cp))
  bool sp = false;               ///< sequence parallel (needs tp > 1 to mean anything)
  int zero = 1;                  ///< 0: replicated optimizer; 1: distributed optimizer; 2: + gradients; 3: + parameters
  bool fsdp = false;             ///< PyTorch FSDP: parameters, gradients and states sharded (ZeRO-3 semantics)
  Recompute recompute = Recompute::none;
  Attention attention = Attention::flash;
  int micro_batch = 1;           ///< sequences per micro-batch per data-parallel replica
  int global_batch = 0;          ///< sequences per iteration over all replicas
  int seq_len = 0;               ///< tokens per sequence
  std::string precision = "bf16";  ///< bf16, fp16 or fp8 (fp8 GEMMs, bf16 elsewhere)
  /// Communication overlap as Megatron-Core runs it (--overlap-grad-reduce, --overlap-param-gather,
  /// --tp-comm-overlap), each off by default as in Megatron-LM (models/megatron.json cites where):
  /// off means the communication is exposed in full.
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  /// Megatron-Core DDP (docs/llm.md, "Data parallelism"): the gradient reduction's type (Megatron:
  /// fp32 under bf16 unless --grad-reduce-in-bf16; under fp16, fp16 unless
  /// --accumulate-allreduce-grads-in-fp32, topsim's alias --grad-reduce-in-fp32; llm_types());
  /// the bucket size in parameters (--ddp-bucket-size; 0: Megatron's max(40M, 1M x dp));
  /// gradient reduce-scatters of interleaved chunks launched at the same time across the pipeline
  /// group (align_grad_reduce) and parameter all-gathers dispatched by the schedule
  /// (--no-align-param-gather turns it off).
  bool grad_reduce_in_fp32 = false;
  bool grad_reduce_in_bf16 = false;
  double ddp_bucket_params = 0;
  bool align_grad_reduce = true;
  bool align_param_gather = true;
  /// Transformer Engine's fp8 scaling recipe under --precision fp8 (Megatron's --fp8-recipe):
  /// delayed, tensorwise, blockwise or mxfp8.
  std::string fp8_recipe = "delayed";
  /// Expert tensor parallel (--expert-tensor-parallel-size; 0: equal to tp, Megatron's default).
  int etp = 0;
  /// The MoE dispatch/combine communication of one micro-batch overlapped with another
  /// micro-batch's computation in the 1F1B phase (--overlap-moe-expert-parallel-comm; off by
  /// default, model_parallel_config.py:343@Megatron-LM@d98e8a64ddf3).
  bool overlap_moe_ep_comm = false;
  /// Tensor-, context- or expert-parallel groups may span NVLink domains, their collectives
  /// crossing the network (--allow-cross-server-tp; a published run that did so says it).
  bool allow_cross_server_tp = false;

  int gpus() const { return tp * pp * cp * dp; }
  int micro_batches() const { return global_batch / (micro_batch * dp); }  ///< per replica per iteration
  bool shards_parameters() const { return zero >= 3 || fsdp; }
  /// Whether the layers are split by any of the four uneven-pipeline settings.
  bool uneven() const { return first_stage_layers != 0 || last_stage_layers != 0 || account_for_embedding || account_for_loss; }
};

}  // namespace topsim
