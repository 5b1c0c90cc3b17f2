#include "infer/inference_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "llm/transformer_math.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

/// Builds a pass in order, applying the shape's precision and sparsity and the framework's
/// sparse layout changes to each kernel it adds.
class PassBuilder {
 public:
  PassBuilder(const InferenceFrameworkModel& framework, const InferenceShape& shape)
      : framework_(framework), shape_(shape), dtype_(math_dtype(shape.precision)),
        act_B_(activation_size_B(shape.precision)) {}

  double act_B() const { return act_B_; }

  /// C[m x n] = A[m x k] W[k x n], `batch` of them; `prunable`: W may be 2:4 sparse.
  void gemm(const std::string& name, double m, double n, double k, double count, bool prunable = false,
            double batch = 1, Kernel::Kind kind = Kernel::Kind::gemm) {
    Kernel kernel;
    kernel.kind = kind;
    kernel.m = m;
    kernel.n = n;
    kernel.k = k;
    kernel.batch = batch;
    kernel.dtype = dtype_;
    kernel.sparse = prunable && shape_.sparse;
    pass_.kernels.push_back({name, kernel, count});
    if (!kernel.sparse) return;
    // Layout changes the framework's sparse GEMM needs: the input, then the output, each read
    // and written once more.
    const double passes[2] = {m * k, m * n};
    for (int i = 0; i < 2 && i < framework_.sparse_transposes; ++i)
      memory(name + (i == 0 ? ".transpose_in" : ".transpose_out"), passes[i] * batch, 2, count);
  }

  /// Streaming over `elements` elements `accesses` times (reads plus writes).
  void memory(const std::string& name, double elements, double accesses, double count) {
    Kernel kernel;
    kernel.kind = Kernel::Kind::memory;
    kernel.dtype = dtype_;
    kernel.bytes_B = elements * accesses * act_B_;
    pass_.kernels.push_back({name, kernel, count});
  }

  /// Fused attention: `batch` heads of m queries against n keys of depth k; bytes_B 0 means Q,
  /// K, V and O once each.
  void attention(const std::string& name, double m, double n, double k, double batch, double bytes_B,
                 double count, double group = 1) {
    Kernel kernel;
    kernel.kind = Kernel::Kind::attention;
    kernel.group = group;
    kernel.m = m;
    kernel.n = n;
    kernel.k = k;
    kernel.batch = batch;
    kernel.dtype = dtype_;
    kernel.bytes_B = bytes_B;
    pass_.kernels.push_back({name, kernel, count});
  }

  InferencePass& pass() { return pass_; }

 private:
  const InferenceFrameworkModel& framework_;
  const InferenceShape& shape_;
  std::string dtype_;
  double act_B_;
  InferencePass pass_;
};

void check_transformer(const TransformerSpec& model, const InferenceShape& shape) {
  if (model.moe)
    throw std::invalid_argument(model.name + " is a mixture of experts: infer does not model expert routing at "
                                             "inference yet (dense transformers and encoders only)");
  if (shape.tp < 1 || model.heads % shape.tp != 0 || model.kv_heads % shape.tp != 0)
    throw std::invalid_argument("--tp " + std::to_string(shape.tp) + " must divide " + model.name + "'s " +
                                std::to_string(model.heads) + " heads and " + std::to_string(model.kv_heads) +
                                " key-value heads");
  if (!(shape.batch >= 1)) throw std::invalid_argument("the batch must be at least 1");
}

/// One layer's kernels over `tokens` rows, attention given by the caller (it differs between a
/// whole sequence and a decode step); `layers` repetitions.
template <typename Attention>
void add_layers(PassBuilder& b, const TransformerSpec& m, const InferenceFrameworkModel& fw, const InferenceShape& s,
                double tokens, Attention&& attention) {
  const double L = m.layers, t = s.tp, h = m.hidden;
  const double q = double(m.heads) * m.head_dim / t, kv = double(m.kv_heads) * m.head_dim / t;
  const double f = m.ffn_hidden / t;
  const double gate = m.ffn == TransformerSpec::Ffn::swiglu ? 2 : 1;
  if (fw.fused_attention) {
    b.gemm("qkv", tokens, q + 2 * kv, h, L, true);
  } else {
    b.gemm("query", tokens, q, h, L, true);
    b.gemm("key", tokens, kv, h, L, true);
    b.gemm("value", tokens, kv, h, L, true);
  }
  attention();
  b.gemm("proj", tokens, h, q, L, true);
  if (fw.fuses_epilogues) {
    b.memory("residual_norm1", tokens * h, 3, L);  // skip connection and LayerNorm in one kernel
  } else {
    b.memory("residual1", tokens * h, 3, L);
    b.memory("norm1", tokens * h, 2, L);
  }
  b.gemm("fc1", tokens, gate * f, h, L, true);
  if (!fw.fuses_epilogues) b.memory("act", tokens * f, gate == 2 ? 3 : 2, L);
  b.gemm("fc2", tokens, h, f, L, true);
  if (fw.fuses_epilogues) {
    b.memory("residual_norm2", tokens * h, 3, L);
  } else {
    b.memory("residual2", tokens * h, 3, L);
    b.memory("norm2", tokens * h, 2, L);
  }
}

/// Eager attention over a score matrix of `batch_heads` x m x n: scores GEMM, scale, mask,
/// softmax, context GEMM, and the copy that makes the heads contiguous again.
void add_eager_attention(PassBuilder& b, double batch_heads, double m, double n, double d, double tokens_h,
                         double L) {
  b.gemm("scores", m, n, d, L, false, batch_heads);
  b.memory("scale", batch_heads * m * n, 2, L);
  b.memory("mask", batch_heads * m * n, 2, L);
  b.memory("softmax", batch_heads * m * n, 2, L);
  b.gemm("context", m, d, n, L, false, batch_heads);
  b.memory("heads_contiguous", tokens_h, 2, L);
}

void add_embedding(PassBuilder& b, const TransformerSpec& m, const InferenceFrameworkModel& fw, double tokens) {
  const double h = m.hidden;
  // Encoders add word, position and token-type embeddings and normalise; decoders look up words.
  if (fw.fuses_epilogues) {
    b.memory("embedding", tokens * h, m.encoder ? 4 : 2, 1);
    return;
  }
  const int tables = m.encoder ? 3 : 1;
  for (int i = 0; i < tables; ++i) b.memory("embedding." + std::to_string(i), tokens * h, 2, 1);
  if (m.encoder) {
    b.memory("embedding.add", tokens * h, 3, 2);
    b.memory("embedding.norm", tokens * h, 2, 1);
  }
}

void set_allreduces(InferencePass& pass, const TransformerSpec& m, const InferenceShape& s, double tokens,
                    double act_B) {
  if (s.tp <= 1) return;
  // Megatron-style tensor parallelism: the attention output projection and fc2 are row-parallel,
  // each followed by an all-reduce of the layer's activation.
  pass.allreduces = 2.0 * m.layers;
  pass.allreduce_B = tokens * m.hidden * std::max(act_B, dtype_size_B("fp16"));  // reduced in 16 bits
}

}  // namespace

const std::vector<std::string>& inference_precisions() {
  static const std::vector<std::string> names = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"};
  return names;
}

std::string math_dtype(const std::string& precision) {
  const auto& names = inference_precisions();
  if (std::find(names.begin(), names.end(), precision) == names.end())
    throw std::invalid_argument(unknown_name_message("precision", precision, names));
  return precision;
}

double activation_size_B(const std::string& precision) { return dtype_size_B(math_dtype(precision)); }

InferencePass network_forward(const Network& network, const InferenceFrameworkModel& framework,
                              const InferenceShape& shape) {
  if (shape.tp != 1)
    throw std::invalid_argument(network.name + " is a layer-list network: infer splits only transformers over "
                                               "tensor-parallel GPUs (--tp 1)");
  if (!(shape.batch >= 1)) throw std::invalid_argument("the batch must be at least 1");
  PassBuilder b(framework, shape);
  const double n = shape.batch;
  for (const Layer& layer : network.layers) {
    switch (layer.kind) {
      case Layer::Kind::conv:
        b.gemm(layer.name, layer.gemm_m * n, layer.gemm_n, layer.gemm_k, 1, layer.prunable, 1, Kernel::Kind::conv);
        break;
      case Layer::Kind::linear:
        b.gemm(layer.name, layer.gemm_m * n, layer.gemm_n, layer.gemm_k, 1, layer.prunable);
        break;
      case Layer::Kind::matmul:
        b.gemm(layer.name, layer.gemm_m, layer.gemm_n, layer.gemm_k, 1, false, layer.batch * n);
        break;
      case Layer::Kind::elementwise:
        // An engine runs pointwise layers (batch norm, activation, residual add) in the epilogue
        // of the convolution or GEMM before them; pooling reads a window and stays a kernel.
        if (framework.fuses_epilogues && layer.pointwise) break;
        b.memory(layer.name, layer.elements * n, layer.accesses, 1);
        break;
      case Layer::Kind::embedding:
        b.memory(layer.name, layer.elements * n, 2, 1);
        break;
    }
  }
  return std::move(b.pass());
}

void apply_precision_defaults(InferencePass& pass, const InferenceFrameworkModel& framework, const GpuModel& gpu,
                              bool allow_tf32) {
  auto tf32 = gpu.math.find("tf32_tensor");
  if (!allow_tf32 || tf32 == gpu.math.end() || !(tf32->second.dense_flops_per_s > 0)) return;
  for (InferenceKernel& k : pass.kernels) {
    Kernel& kernel = k.kernel;
    if (kernel.dtype != "fp32" || kernel.kind == Kernel::Kind::memory) continue;
    const bool as_tf32 = kernel.kind == Kernel::Kind::conv ? framework.tf32_convolutions : framework.tf32_matmuls;
    // tf32 keeps fp32's 4-byte elements: only the math rate changes.
    if (as_tf32) kernel.dtype = "tf32";
  }
}

InferencePass transformer_forward(const TransformerSpec& model, const InferenceFrameworkModel& framework,
                                  const InferenceShape& shape) {
  check_transformer(model, shape);
  if (shape.seq < 1) throw std::invalid_argument("the sequence length must be at least 1 token");
  if (!shape.lengths.empty() && !model.encoder)
    throw std::invalid_argument(model.name + " is a decoder: a sequence-length distribution applies to encoders only");
  for (std::size_t i = 0; i < shape.lengths.lengths.size(); ++i)
    if (shape.lengths.lengths[i].first > shape.seq)
      // An InputError at the file's element (exit 2), as for any other impossible value in it.
      fail(shape.lengths.where.at("lengths").at(i),
           "a sequence of " + std::to_string(shape.lengths.lengths[i].first) + " tokens is longer than the " +
               std::to_string(shape.seq) + " the engine takes (--seq, at most " + std::to_string(model.seq_len) +
               " for " + model.name + ")");
  PassBuilder b(framework, shape);
  const bool packed = !shape.lengths.empty() && framework.packs_sequences;
  // s: the query and key length attention runs at; tokens: the rows of every other kernel.
  // Packed: the rows are the sum of the lengths, batch E[s]; attention's math grows with each
  // sequence's length squared, so the one kernel that stands for every sequence has the root
  // mean square length (batch E[s^2] query-key pairs per head), its traffic batch E[s] tokens.
  double s = shape.seq, tokens = shape.batch * s;
  double rms = s, mean = s;
  if (packed) {
    double squares = 0;
    for (const auto& [length, count] : shape.lengths.lengths) squares += double(length) * length * count;
    mean = shape.lengths.mean();
    rms = std::sqrt(squares / shape.lengths.samples());
    s = rms;
    tokens = shape.batch * mean;
  }
  const double d = model.head_dim;
  const double heads = double(model.heads) / shape.tp;
  const double L = model.layers;
  add_embedding(b, model, framework, tokens);
  // A decoder's causal mask: query i attends to i + 1 keys, (s + 1) / 2 on average, and flash
  // attention skips the masked tiles.
  const double keys = model.encoder ? s : (s + 1) / 2;
  // Q, K, V and O of every token once (0: the attention kernel's own count from m and n).
  const double attention_B = packed ? 4 * tokens * heads * d * b.act_B() : 0;
  add_layers(b, model, framework, shape, tokens, [&] {
    if (framework.fused_attention)
      b.attention("attention", s, keys, d, shape.batch * heads, attention_B, L);
    else
      add_eager_attention(b, shape.batch * heads, s, s, d, tokens * heads * d, L);
  });
  if (model.encoder) {
    // SQuAD's task head: start and end logits per token.
    b.gemm("qa_head", tokens, 2, model.hidden, 1);
  } else {
    b.memory("final_norm", shape.batch * model.hidden, 2, 1);
    b.gemm("lm_head", shape.batch, double(model.vocab) / shape.tp, model.hidden, 1);
  }
  set_allreduces(b.pass(), model, shape, tokens, b.act_B());
  return std::move(b.pass());
}

InferencePass transformer_decode_step(const TransformerSpec& model, const InferenceFrameworkModel& framework,
                                      const InferenceShape& shape, double context) {
  check_transformer(model, shape);
  if (model.encoder)
    throw std::invalid_argument(model.name + " is an encoder: it runs one forward pass and generates no tokens");
  PassBuilder b(framework, shape);
  const double tokens = shape.batch, d = model.head_dim, L = model.layers;
  const double heads = double(model.heads) / shape.tp, kv_heads = double(model.kv_heads) / shape.tp;
  add_embedding(b, model, framework, tokens);
  add_layers(b, model, framework, shape, tokens, [&] {
    if (framework.fused_attention) {
      // One query per sequence: the step reads every cached K and V once (shared by the query
      // heads of a group) and the query and output.
      const double kv_read_B = shape.batch * context * 2 * kv_heads * d * b.act_B();
      const double qo_B = 2 * shape.batch * heads * d * b.act_B();
      b.attention("attention", 1, context, d, shape.batch * heads, kv_read_B + qo_B, L, heads / kv_heads);
    } else {
      add_eager_attention(b, shape.batch * heads, 1, context, d, tokens * heads * d, L);
    }
  });
  b.memory("final_norm", tokens * model.hidden, 2, 1);
  b.gemm("lm_head", tokens, double(model.vocab) / shape.tp, model.hidden, 1);
  set_allreduces(b.pass(), model, shape, tokens, b.act_B());
  return std::move(b.pass());
}

double network_weights_B(const Network& network, const InferenceShape& shape) {
  const double size_B = activation_size_B(shape.precision);
  double bytes = 0;
  for (const Layer& layer : network.layers)
    bytes += layer.params * size_B * (layer.prunable && shape.sparse ? sparse_storage_fraction(size_B) : 1);
  return bytes;
}

double transformer_weights_B(const TransformerSpec& model, const InferenceShape& shape) {
  const double size_B = activation_size_B(shape.precision);
  const ParamCounts p = count_params(model);
  const double prunable = (p.attention + p.mlp) / shape.tp;
  const double rest = (p.embedding + p.lm_head) / shape.tp + p.norms;
  return (prunable * (shape.sparse ? sparse_storage_fraction(size_B) : 1) + rest) * size_B;
}

double kv_cache_B(const TransformerSpec& model, const InferenceShape& shape, double tokens) {
  return 2.0 * model.layers * double(model.kv_heads) / shape.tp * model.head_dim * tokens *
         activation_size_B(shape.precision);
}

double pass_activation_B(const InferencePass& pass) {
  double largest = 0;
  for (const InferenceKernel& k : pass.kernels) {
    const Kernel& c = k.kernel;
    const double size_B = dtype_size_B(c.dtype);
    double bytes = c.kind == Kernel::Kind::memory ? c.bytes_B
                   : c.kind == Kernel::Kind::attention
                       ? (2 * c.m + 2 * c.n) * c.k * c.batch * size_B
                       : (c.m * c.k + c.m * c.n) * c.batch * size_B;  // input and output, not the weights
    largest = std::max(largest, bytes);
  }
  return largest;
}

}  // namespace topsim
