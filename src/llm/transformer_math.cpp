#include "llm/transformer_math.hpp"

#include <algorithm>
#include <stdexcept>

#include "llm/expert_groups.hpp"  // expert_tp, expert_dp: the expert side of the layout
#include "llm/fp8_kernels.hpp"
#include "llm/layout.hpp"  // stage_layers: the one map from a stage to its layers

namespace topsim {

std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

namespace {

double attention_params(const TransformerSpec& m) {
  const double h = m.hidden, q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
  return h * q + 2 * h * kv + q * h;  // Wq, Wk, Wv, Wo
}

// Weight matrices of one FFN of intermediate size f: up and down (GELU), gate, up and down (SwiGLU).
double ffn_matrices(const TransformerSpec& m) { return m.ffn == TransformerSpec::Ffn::swiglu ? 3 : 2; }
double ffn_params(const TransformerSpec& m, double f) { return ffn_matrices(m) * m.hidden * f; }

// Matrix parameters one token passes through in layer `layer` (routed experts: top_k of them).
double active_layer_params(const TransformerSpec& m, int layer) {
  double p = attention_params(m);
  if (m.is_moe_layer(layer)) {
    const MoeSpec& e = *m.moe;
    p += (e.top_k + e.shared_experts) * ffn_params(m, e.expert_ffn_hidden) + double(m.hidden) * e.experts;
  } else {
    p += ffn_params(m, m.ffn_hidden);
  }
  return p;
}

NamedKernel gemm(const std::string& name, double m, double n, double k, const std::string& dtype) {
  NamedKernel out{name, {}, true};
  out.kernel.kind = Kernel::Kind::gemm;
  out.kernel.m = m;
  out.kernel.n = n;
  out.kernel.k = k;
  out.kernel.dtype = dtype;
  return out;
}

NamedKernel memory(const std::string& name, double bytes_B, const std::string& dtype) {
  NamedKernel out{name, {}, false};
  out.kernel.kind = Kernel::Kind::memory;
  out.kernel.bytes_B = bytes_B;
  out.kernel.dtype = dtype;
  return out;
}

// A forward GEMM C[m x n] = X[m x k] W[k x n] costs two in backward: dX = dC W^T (m x k by n)
// and dW = X^T dC (k x n by m).
void add_gemm(LayerKernels& out, const std::string& name, double m, double n, double k, const std::string& dtype) {
  out.forward.push_back(gemm(name, m, n, k, dtype));
  out.backward.push_back(gemm(name + ".dgrad", m, k, n, dtype));
  out.backward.push_back(gemm(name + ".wgrad", k, n, m, dtype));
}

// A fused elementwise kernel touching `accesses` tensors of `elements` each; backward reads the
// incoming gradient and what was saved and writes one gradient per input: twice the traffic.
void add_elementwise(LayerKernels& out, const std::string& name, double elements, double accesses, double element_B,
                     const std::string& dtype) {
  out.forward.push_back(memory(name, elements * accesses * element_B, dtype));
  out.backward.push_back(memory(name + ".bwd", 2 * elements * accesses * element_B, dtype));
}

// The attention core of one layer on one rank: `s` local queries against the whole sequence.
void add_attention_core(LayerKernels& out, const TransformerSpec& m, const LlmLayout& L, double s, double e_B,
                        const std::string& dtype) {
  const double heads = L.micro_batch * double(m.heads) / L.tp;  // independent (sequence, head) pairs
  const double keys = L.seq_len, d = m.head_dim;
  if (L.attention == Attention::flash) {
    // Causal flash attention computes half the score square; under cp each rank's queries meet
    // every key (ring attention), load-balanced so that each rank does its share of the half.
    NamedKernel core{"attention", {}, false, true};
    core.kernel.kind = Kernel::Kind::attention;
    core.kernel.m = s;
    core.kernel.n = keys / 2;
    core.kernel.k = d;
    core.kernel.batch = heads;
    core.kernel.dtype = dtype;
    out.forward.push_back(core);
    // FlashAttention-2's backward runs five GEMMs of the forward's two: 2.5 times its math.
    core.name = "attention.bwd";
    core.kernel.batch *= 2.5;
    out.backward.push_back(core);
    return;
  }
  // Unfused: the full score square in memory, batched GEMMs on either side of it.
  auto batched = [&](const std::string& name, double rows, double cols, double depth) {
    NamedKernel k = gemm(name, rows, cols, depth, dtype);
    k.kernel.batch = heads;
    k.gemm = false;
    k.core = true;
    return k;
  };
  const double scores = heads * s * keys;  // elements of the score matrix
  out.forward.push_back(batched("scores", s, keys, d));
  NamedKernel softmax = memory("softmax", scores * 2 * e_B, dtype);  // fused scale-mask-softmax: read, write
  NamedKernel dropout = memory("attention_dropout", scores * (2 * e_B + 1), dtype);  // read, write, 1-byte mask
  softmax.core = dropout.core = true;
  out.forward.push_back(softmax);
  out.forward.push_back(dropout);
  out.forward.push_back(batched("context", s, d, keys));
  // Backward: two GEMMs per forward GEMM; softmax reads its output and the incoming gradient.
  out.backward.push_back(batched("context.dprobs", s, keys, d));
  out.backward.push_back(batched("context.dv", keys, d, s));
  out.backward.push_back(memory("attention_dropout.bwd", scores * (2 * e_B + 1), dtype));
  out.backward.push_back(memory("softmax.bwd", scores * 3 * e_B, dtype));
  out.backward.push_back(batched("scores.dq", s, d, keys));
  out.backward.push_back(batched("scores.dk", keys, d, s));
}

// A memory-bound kernel whose backward moves `backward_B` (a permutation's backward is the
// reverse permutation: the same bytes, not twice them).
void add_memory(LayerKernels& out, const std::string& name, double forward_B, double backward_B, const std::string& dtype) {
  out.forward.push_back(memory(name, forward_B, dtype));
  out.backward.push_back(memory(name + ".bwd", backward_B, dtype));
}

// A grouped GEMM: `groups` GEMMs of one shape in one kernel (balanced routing gives every local
// expert the same rows), and its two backward GEMMs per group.
void add_grouped_gemm(LayerKernels& out, const std::string& name, double groups, double m, double n, double k,
                      const std::string& dtype) {
  add_gemm(out, name, m, n, k, dtype);
  out.forward.back().kernel.batch = groups;
  out.backward[out.backward.size() - 1].kernel.batch = groups;
  out.backward[out.backward.size() - 2].kernel.batch = groups;
}

// The FFN of an MoE layer as Megatron-Core's alltoall token dispatcher runs it
// (token_dispatcher.py:660-900@Megatron-LM@d98e8a64ddf3), dropless and force-balanced as the
// published benchmarks run it: `tokens_rank` = the rank's own tokens T (split by tp under sp).
//   router GEMM on T tokens; permute T tokens into T x top_k expert-sorted copies
//   (moe_utils.py:344); the dispatch all-to-all over ep returns T x top_k token copies on average
//   (layer_comm); with etp > 1 an all-gather over etp makes them rows = T x top_k x etp;
//   with more than one local expert they are sorted by local expert (sort_chunks_by_idxs,
//   token_dispatcher.py:782) and back (817); the experts/ep local experts each run a GEMM of
//   rows / local-experts rows, width split by etp (grouped GEMM); unpermute (moe_utils.py:497)
//   weights and sums the top_k copies back to T tokens.
// Shared experts are a dense MLP split by tp over all the rank's (gathered) tokens.
void add_moe_ffn(LayerKernels& out, const TransformerSpec& m, const LlmLayout& L, double tokens_rank, double tokens_all,
                 double e_B, const std::string& g, const std::string& o) {
  const MoeSpec& e = *m.moe;
  const double h = m.hidden, k = e.top_k, etp = expert_tp(L);
  const double local_experts = double(e.experts) / L.ep, f = e.expert_ffn_hidden / etp;
  const double rows = tokens_rank * k * etp;
  const double gate = m.ffn == TransformerSpec::Ffn::swiglu ? 2 : 1;
  const double act_accesses = m.ffn == TransformerSpec::Ffn::swiglu ? 3 : 2;
  add_gemm(out, "router", tokens_rank, e.experts, h, o);
  add_elementwise(out, "router.topk", tokens_rank * e.experts, 2, e_B, o);  // softmax and top-k over the logits
  add_memory(out, "permute", tokens_rank * h * e_B * (1 + k), tokens_rank * h * e_B * (1 + k), o);
  if (local_experts > 1) add_memory(out, "sort_chunks", 2 * rows * h * e_B, 2 * rows * h * e_B, o);
  add_grouped_gemm(out, "expert.fc1", local_experts, rows / local_experts, gate * f, h, g);
  add_elementwise(out, "expert.act", rows * f, act_accesses, e_B, o);
  add_grouped_gemm(out, "expert.fc2", local_experts, rows / local_experts, h, f, g);
  if (local_experts > 1) add_memory(out, "unsort_chunks", 2 * rows * h * e_B, 2 * rows * h * e_B, o);
  add_memory(out, "unpermute", tokens_rank * h * e_B * (1 + k), tokens_rank * h * e_B * (1 + k), o);
  if (e.shared_experts > 0) {
    const double fs = double(e.shared_experts) * e.expert_ffn_hidden / L.tp;
    add_gemm(out, "shared.fc1", tokens_all, gate * fs, h, g);
    add_elementwise(out, "shared.act", tokens_all * fs, act_accesses, e_B, o);
    add_gemm(out, "shared.fc2", tokens_all, h, fs, g);
  }
}

}  // namespace

std::string to_string(Attention a) { return a == Attention::flash ? "flash" : "unfused"; }

ParamCounts count_params(const TransformerSpec& m) {
  ParamCounts c;
  for (int l = 0; l < m.layers; ++l) {
    c.attention += attention_params(m);
    c.norms += 2.0 * m.hidden;
    if (m.is_moe_layer(l)) {
      c.experts += m.moe->experts * ffn_params(m, m.moe->expert_ffn_hidden);
      c.shared_experts += m.moe->shared_experts * ffn_params(m, m.moe->expert_ffn_hidden);
      c.router += double(m.hidden) * m.moe->experts;
    } else {
      c.mlp += ffn_params(m, m.ffn_hidden);
    }
  }
  c.norms += m.hidden;
  c.embedding = double(m.vocab) * m.hidden;
  c.lm_head = m.tied_embeddings ? 0 : double(m.vocab) * m.hidden;
  return c;
}

IterationFlops iteration_flops(const TransformerSpec& m, int seq_len, double sequences, Recompute recompute) {
  const double tokens = sequences * seq_len;
  double layers_fwd = 0, core_fwd = 0;  // per token
  for (int l = 0; l < m.layers; ++l) {
    const double core = 4.0 * seq_len * m.heads * m.head_dim;
    layers_fwd += 2 * active_layer_params(m, l) + core;
    core_fwd += core;
  }
  const double head_fwd = 2.0 * m.vocab * m.hidden;
  IterationFlops f;
  f.model = 3 * (layers_fwd + head_fwd) * tokens;
  f.hardware = f.model;
  if (recompute == Recompute::full) f.hardware += layers_fwd * tokens;
  if (recompute == Recompute::selective) f.hardware += core_fwd * tokens;
  return f;
}

LlmTypes llm_types(const LlmLayout& L) {
  const std::string& precision = L.precision;
  LlmTypes t;
  if (precision == "bf16" || precision == "fp8") {
    // fp8: the recipe's GEMM (per-tensor, 128-block or MX scaled; llm/fp8_kernels.hpp).
    t.gemm_dtype = precision == "fp8" ? fp8_gemm_dtype(L.fp8_recipe) : precision;
    t.other_dtype = "bf16";
    const bool fp32 = !L.grad_reduce_in_bf16;
    t.gradient_B = dtype_size_B(fp32 ? "fp32" : "bf16");
    t.gradient_nccl = fp32 ? "float" : "bfloat16";
  } else if (precision == "fp16") {
    t.gemm_dtype = t.other_dtype = "fp16";
    t.gradient_B = dtype_size_B(L.grad_reduce_in_fp32 ? "fp32" : "fp16");
    t.gradient_nccl = L.grad_reduce_in_fp32 ? "float" : "half";
  } else {
    throw std::invalid_argument("precision '" + precision + "' is not one of bf16, fp16, fp8");
  }
  t.activation_B = dtype_size_B(t.other_dtype);
  return t;
}

LayerKernels layer_kernels(const TransformerSpec& m, const LlmLayout& L, int layer, const GpuModel* gpu) {
  const LlmTypes types = llm_types(L);
  const std::string& g = types.gemm_dtype;  // under fp8 the recipe's; its casts come at the end
  const std::string& o = types.other_dtype;
  const double e_B = types.activation_B;
  const double s = double(L.seq_len) / L.cp;            // this rank's tokens of one sequence
  const double tokens = L.micro_batch * s;              // rows of every GEMM
  const double replicated = L.sp ? tokens / L.tp : tokens;  // rows of norms and residuals
  const double h = m.hidden, t = L.tp;
  const double q = double(m.heads) * m.head_dim / t, kv = double(m.kv_heads) * m.head_dim / t;
  LayerKernels out;
  add_elementwise(out, "norm1", replicated * h, 2, e_B, o);
  add_gemm(out, "qkv", tokens, q + 2 * kv, h, g);
  add_attention_core(out, m, L, s, e_B, o);
  add_gemm(out, "proj", tokens, h, q, g);
  add_elementwise(out, "residual1", replicated * h, 3, e_B, o);
  add_elementwise(out, "norm2", replicated * h, 2, e_B, o);
  const double gate = m.ffn == TransformerSpec::Ffn::swiglu ? 2 : 1;  // fc1 width in f
  const double act_accesses = m.ffn == TransformerSpec::Ffn::swiglu ? 3 : 2;
  if (m.is_moe_layer(layer)) {
    add_moe_ffn(out, m, L, replicated, tokens, e_B, g, o);
  } else {
    const double f = m.ffn_hidden / t;
    add_gemm(out, "fc1", tokens, gate * f, h, g);
    add_elementwise(out, "act", tokens * f, act_accesses, e_B, o);
    add_gemm(out, "fc2", tokens, h, f, g);
  }
  add_elementwise(out, "residual2", replicated * h, 3, e_B, o);
  add_fp8_casts(out, L, gpu);
  return out;
}

LayerKernels embedding_kernels(const TransformerSpec& m, const LlmLayout& L) {
  const LlmTypes types = llm_types(L);
  const double tokens = L.micro_batch * double(L.seq_len) / L.cp / (L.sp ? L.tp : 1);
  LayerKernels out;
  // A gather: read a row of the table and write it per token.
  add_elementwise(out, "embedding", tokens * m.hidden, 2, types.activation_B, types.other_dtype);
  return out;
}

LayerKernels head_kernels(const TransformerSpec& m, const LlmLayout& L) {
  const LlmTypes types = llm_types(L);
  const double tokens = L.micro_batch * double(L.seq_len) / L.cp;
  const double v = double(m.vocab) / L.tp;
  LayerKernels out;
  add_elementwise(out, "final_norm", tokens / (L.sp ? L.tp : 1) * m.hidden, 2, types.activation_B, types.other_dtype);
  // Megatron keeps the LM head in 16-bit under fp8: a tensor_parallel.ColumnParallelLinear, not a
  // Transformer Engine module, unless fp8_output_proj (default False) under mxfp8
  // (models/gpt/gpt_model.py:272-277, transformer_config.py:635, fp8_utils.py:730-745@Megatron-LM@d98e8a64ddf3).
  add_gemm(out, "lm_head", tokens, v, m.hidden, types.other_dtype);
  // Vocab-parallel cross-entropy in fp32: read the 16-bit logits, write and read them as fp32.
  const double fp32_B = dtype_size_B("fp32");
  out.forward.push_back(memory("cross_entropy", tokens * v * (types.activation_B + 2 * fp32_B), "fp32"));
  out.backward.push_back(memory("cross_entropy.bwd", tokens * v * (fp32_B + types.activation_B), "fp32"));
  return out;
}

LayerComm layer_comm(const TransformerSpec& m, const LlmLayout& L, int layer) {
  const LlmTypes types = llm_types(L);
  const double tokens = L.micro_batch * double(L.seq_len) / L.cp;
  LayerComm c;
  if (L.tp > 1) {
    c.tp_ops = L.sp ? 4 : 2;
    c.tp_B = tokens * m.hidden * types.activation_B;
  }
  c.pp_B = tokens * m.hidden * types.activation_B / (L.sp ? L.tp : 1);
  if (L.cp > 1) {
    c.cp_steps = L.cp - 1;
    c.cp_B = 2 * tokens * double(m.kv_heads) * m.head_dim / L.tp * types.activation_B;
  }
  if (m.is_moe_layer(layer)) {
    // Dispatch (and combine) all-to-all over ep: each rank sends its T tokens' top_k copies,
    // dropless (T = its tokens, split by tp under sp); as nccl-tests counts an alltoall, the
    // size is the rank's whole buffer, (ep - 1) / ep of it to other ranks.
    const double routed_B = tokens / (L.sp ? L.tp : 1) * m.moe->top_k * m.hidden * types.activation_B;
    if (L.ep > 1) c.ep_B = routed_B;
    // With etp > 1 the received copies are all-gathered over etp after dispatch and
    // reduce-scattered before combine (token_dispatcher.py:742-752, 823-870): size as gathered.
    if (expert_tp(L) > 1) c.etp_B = routed_B * expert_tp(L);
    // Under sp the attention's all-gather and reduce-scatter stay; the MLP's pair runs only for
    // shared experts (a dense MLP split by tp), the routed experts' being the etp pair above.
    if (L.tp > 1 && L.sp && m.moe->shared_experts == 0) c.tp_ops = 2;
  }
  return c;
}

double RankParams::held(const LlmLayout& L, bool sharded) const {
  if (!sharded) return total();
  // Dense parameters are replicated over dp x cp, experts over the expert data-parallel ranks.
  const double dense_shards = double(L.dp) * L.cp;
  return dense / dense_shards + experts / expert_dp(L);
}

namespace {
// One layer's parameters on one rank: its tp share of attention and dense FFN, both norms whole;
// of an MoE layer, its ep share of the routed experts split by etp, its tp share of the shared
// experts, the router whole.
RankParams layer_rank_params(const TransformerSpec& m, const LlmLayout& L, int layer) {
  RankParams p;
  p.dense = attention_params(m) / L.tp + 2.0 * m.hidden;
  if (m.is_moe_layer(layer)) {
    const MoeSpec& e = *m.moe;
    p.experts = double(e.experts) / L.ep * ffn_params(m, e.expert_ffn_hidden) / expert_tp(L);
    p.dense += e.shared_experts * ffn_params(m, e.expert_ffn_hidden) / L.tp + double(m.hidden) * e.experts;
  } else {
    p.dense += ffn_params(m, m.ffn_hidden) / L.tp;
  }
  return p;
}
}  // namespace

RankParams rank_params(const TransformerSpec& m, const LlmLayout& L, int stage) {
  // The rank's chunks: virtual stages chunk x pp + stage (the embedding on the first, the head on
  // the last).
  RankParams p;
  for (int chunk = 0; chunk < L.vp; ++chunk) {
    const StageParams v = virtual_stage_params(m, L, chunk * L.pp + stage);
    p.dense += v.dense();
    p.experts += v.experts;
  }
  return p;
}

StageParams virtual_stage_params(const TransformerSpec& m, const LlmLayout& L, int virtual_stage) {
  StageParams p;
  for (int layer : virtual_stage_layers(m, L, virtual_stage)) {
    const RankParams l = layer_rank_params(m, L, layer);
    p.layers += l.dense;
    p.experts += l.experts;
  }
  // The embedding on the first virtual stage; the LM head and the final norm on the last. Tied,
  // with pp > 1 the last stage holds a copy of the embedding (Megatron syncs the two copies'
  // gradients), so the count is the same; with pp 1 the head is the embedding's own weight
  // (Megatron-Core allocates no output weight then).
  const double table = double(m.vocab) * m.hidden / L.tp;
  if (virtual_stage == 0) p.embedding = table;
  const bool head_is_embedding = m.tied_embeddings && L.pp == 1;
  if (virtual_stage == L.pp * L.vp - 1) p.head = (head_is_embedding ? 0 : table) + m.hidden;
  return p;
}

double largest_gathered_layer_B(const TransformerSpec& m, const LlmLayout& L) {
  const LlmTypes types = llm_types(L);
  double largest = 0;  // parameters of one layer on one rank
  for (int layer = 0; layer < m.layers; ++layer) largest = std::max(largest, layer_rank_params(m, L, layer).total());
  return largest * (dtype_size_B(types.other_dtype) + types.gradient_B);
}

double layer_activation_B(const TransformerSpec& m, const LlmLayout& L, int layer) {
  const LlmTypes types = llm_types(L);
  const double e_B = types.activation_B;
  const double tokens = L.micro_batch * double(L.seq_len) / L.cp;
  const double t = L.tp;
  const double h = m.hidden;
  const double replicated = L.sp ? tokens / t : tokens;
  // Layer input under full recomputation: everything else is made again in backward.
  if (L.recompute == Recompute::full) return replicated * h * e_B;
  const double mask_B = 1;  // dropout masks: one byte per element
  // Kept whole on every tp rank unless sp: both norms' inputs and outputs, two dropout masks.
  double bytes = replicated * h * (4 * e_B + 2 * mask_B);
  // Unfused attention without selective recomputation keeps the softmax output, the dropout
  // mask and the dropout output: 2 e_B + 1 bytes per score element (Korthikanti's 5as/h term).
  if (L.attention == Attention::unfused && L.recompute == Recompute::none)
    bytes += L.micro_batch * double(m.heads) / t * (double(L.seq_len) / L.cp) * L.seq_len * (2 * e_B + mask_B);
  // Split by tp: Q, K, V and the attention output (flash attention keeps no score matrix).
  const double q = double(m.heads) * m.head_dim / t, kv = double(m.kv_heads) * m.head_dim / t;
  bytes += tokens * (2 * q + 2 * kv) * e_B;
  const double gate = m.ffn == TransformerSpec::Ffn::swiglu ? 2 : 1;
  if (m.is_moe_layer(layer)) {
    // fc1 outputs and activation outputs of the token-expert pairs this rank runs.
    const MoeSpec& e = *m.moe;
    const double pairs = replicated * (e.top_k + e.shared_experts);
    bytes += pairs * (gate + 1) * e.expert_ffn_hidden * e_B + replicated * h * e_B;
  } else {
    bytes += tokens * (gate + 1) * (m.ffn_hidden / t) * e_B;
  }
  return bytes;
}

LlmMemory stage_memory(const TransformerSpec& m, const LlmLayout& L, int stage, double layers_in_flight,
                       double optimizer_state_B) {
  const LlmTypes types = llm_types(L);
  const RankParams p = rank_params(m, L, stage);
  const double weight_B = dtype_size_B(types.other_dtype);
  const double master_B = dtype_size_B("fp32");
  LlmMemory mem;
  mem.weights_B = p.held(L, L.shards_parameters()) * weight_B;
  mem.gradients_B = p.held(L, L.zero >= 2 || L.fsdp) * types.gradient_B;
  mem.optimizer_B = p.held(L, L.zero >= 1 || L.fsdp) * (master_B + optimizer_state_B);
  // Sharded parameters are gathered a layer at a time: the layer running and its gradient.
  if (L.shards_parameters()) mem.weights_B += largest_gathered_layer_B(m, L);
  // Activations: the stage's average layer times the layers in flight; the last stage also
  // keeps its fp32 logits for the loss's backward.
  std::vector<int> layers = stage_layers(m, L, stage);
  double per_layer = 0;
  for (int layer : layers) per_layer += layer_activation_B(m, L, layer);
  per_layer /= std::max<std::size_t>(1, layers.size());
  mem.activations_B = per_layer * layers_in_flight;
  if (stage == L.pp - 1)
    mem.activations_B += L.micro_batch * double(L.seq_len) / L.cp * (double(m.vocab) / L.tp) * dtype_size_B("fp32");
  return mem;
}

}  // namespace topsim
