#include "compute/attention_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace topsim {

namespace {

// Structure of the kernels, not fitted: FlashAttention-2/3 and TensorRT-LLM's context FMHA tile
// queries and keys in blocks of 128 rows (Dao 2023, "FlashAttention-2", sec. 3.1, Br = Bc = 128
// for head dims up to 128), padded to the tensor-core fragment of 16 rows (mma.m16n8k16).
constexpr double kQueryTileRows = 128;
constexpr double kFragmentRows = 16;
// Decode: the grouped kernel shares one read of the cache across at most 32 query heads of one
// KV head: in all four tables the achieved rate holds up to 32 query heads per KV head and
// collapses at 48 and beyond.
constexpr double kDecodeSharedGroupMax = 32;

enum PrefillConstant { p_overhead, p_math_fraction, p_softmax_flops, p_tile_overhead, p_memory_fraction };
enum DecodeConstant { d_overhead, d_memory_fraction, d_l2_speedup, d_l2_fraction, d_cta_overhead, d_gqa16_cta, d_fp8_cta };

std::string phase_label(KernelFamily phase) { return phase == KernelFamily::decode ? "decode" : "prefill"; }

/// Bytes of one element of a KV cache or attention input in `dtype`; 0 for an unknown name.
double element_B(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8" || dtype == "int8") return 1;
  if (dtype == "tf32" || dtype == "fp32") return 4;
  return 0;
}

/// The GPU's dense tensor peak for the attention's math dtype.
double dense_peak_flops_per_s(const GpuModel& gpu, const std::string& dtype) {
  // Tensor cores where the GPU has them for the dtype, else its vector units (fp32 on Volta).
  auto it = gpu.math.find(dtype + "_tensor");
  if ((it == gpu.math.end() || it->second.dense_flops_per_s <= 0) && dtype == "fp32") it = gpu.math.find(dtype);
  if (it == gpu.math.end() || it->second.dense_flops_per_s <= 0)
    throw std::invalid_argument("attention: GPU '" + gpu.name + "' states no dense " + dtype +
                                " tensor rate (models/gpus.json math." + dtype + "_tensor)");
  return it->second.dense_flops_per_s;
}

void check_shape(const GpuModel& gpu, const KernelConstants& constants, const AttentionShape& shape) {
  const std::string label = phase_label(shape.phase);
  if (shape.phase != KernelFamily::prefill && shape.phase != KernelFamily::decode)
    throw std::invalid_argument("attention: phase must be prefill or decode, not gemm");
  if (!(shape.batch > 0) || !(shape.q_len > 0) || !(shape.heads > 0) || !(shape.kv_heads > 0) ||
      !(shape.head_dim > 0))
    throw std::invalid_argument(label + " attention: batch, q_len, heads, kv_heads and head_dim must be positive");
  if (std::fmod(shape.heads, shape.kv_heads) != 0)
    throw std::invalid_argument(label + " attention: heads must be a multiple of kv_heads (GQA/MQA groups)");
  if (shape.phase == KernelFamily::prefill && shape.kv_len != 0 && shape.kv_len != shape.q_len)
    throw std::invalid_argument("prefill attention: kv_len must equal q_len (causal, nothing cached)");
  if (shape.phase == KernelFamily::decode && (shape.q_len != 1 || !(shape.kv_len > 0)))
    throw std::invalid_argument("decode attention: q_len must be 1 and kv_len (tokens cached) positive");
  // int8: TensorRT's INT8 fused multi-head attention (prefill of an int8 engine) at the int8 peak;
  // tf32 and fp32: an fp32 encoder's attention at its own (slower) peak, with the same tiling.
  const bool prefill_only = shape.dtype == "fp8" || shape.dtype == "int8" || shape.dtype == "tf32" || shape.dtype == "fp32";
  const bool math_known = shape.dtype == "bf16" || shape.dtype == "fp16" ||
                          (prefill_only && shape.phase == KernelFamily::prefill);
  if (!math_known)
    throw std::invalid_argument(label + " attention: unknown math dtype '" + shape.dtype + "' (valid: bf16, fp16" +
                                (shape.phase == KernelFamily::prefill ? ", fp8, int8, tf32, fp32)" : ")"));
  if (element_B(shape.kv_dtype) <= 0)
    throw std::invalid_argument(label + " attention: unknown kv_dtype '" + shape.kv_dtype +
                                "' (valid: bf16, fp16, fp8, int8, tf32, fp32)");
  const std::size_t expected = attention_parameters(shape.phase).size();
  if (constants.values.size() != expected)
    throw std::invalid_argument(label + " attention: " + std::to_string(constants.values.size()) +
                                " constants given, the model takes " + std::to_string(expected));
  if (gpu.sms <= 0 || !(gpu.memory_Bps > 0))
    throw std::invalid_argument("attention: GPU '" + gpu.name + "' needs sms and memory bandwidth");
}

std::string bound_of(double overhead_s, double math_s, double memory_s) {
  if (overhead_s >= std::max(math_s, memory_s)) return "overhead";
  return math_s >= memory_s ? "math" : "memory";
}

/// Prefill (context FMHA), causal. Per (sequence, head) the queries are cut into T = ceil(s/128)
/// tiles, one CTA each; tile i sees the keys up to its last row (causal: the masked blocks are
/// skipped), so tiles before the last do 128 x 128 (i+1) score elements and the last
/// r x s, both padded to 16. A score element costs (4 h + softmax_flops) FLOPs at
/// math_fraction of the per-SM dense peak. The CTAs run in ceil(CTAs / sms) waves of the mean
/// tile, and never faster than the longest tile alone. Q, K, V read, O written and K, V written
/// to the cache move at memory_fraction of HBM, after the math (the op's pre/post kernels).
AttentionCost prefill_cost(const GpuModel& gpu, const std::vector<double>& c, const AttentionShape& shape) {
  const double b = shape.batch, s = shape.q_len, n = shape.heads, kv = shape.kv_heads, h = shape.head_dim;
  const double sms = gpu.sms;
  const double peak = dense_peak_flops_per_s(gpu, shape.dtype);
  auto pad = [](double x, double grain) { return std::ceil(x / grain) * grain; };
  const double tiles = std::ceil(s / kQueryTileRows);
  const double last_rows = pad(s - (tiles - 1) * kQueryTileRows, kFragmentRows);
  const double last_keys = pad(s, kFragmentRows);
  const double score_elements = kQueryTileRows * kQueryTileRows * (tiles - 1) * tiles / 2 + last_rows * last_keys;
  const double longest_elements = std::max(kQueryTileRows * kQueryTileRows * (tiles - 1), last_rows * last_keys);
  const double ctas = b * n * tiles;
  const double sm_flops_per_s = peak / sms * c[p_math_fraction];
  const double element_s = (4 * h + c[p_softmax_flops]) / sm_flops_per_s;
  const double mean_tile_s = c[p_tile_overhead] + score_elements / tiles * element_s;
  const double math_s = std::max(std::ceil(ctas / sms) * mean_tile_s, c[p_tile_overhead] + longest_elements * element_s);

  AttentionCost cost;
  // Q and O (16-bit), K and V in (16-bit) and written to the cache in kv_dtype.
  cost.bytes_B = b * s * h * (2 * n * 2 + 2 * kv * 2 + 2 * kv * element_B(shape.kv_dtype));
  cost.flops = 2 * b * s * s * n * h;
  cost.math_s = math_s;
  cost.memory_s = cost.bytes_B / (gpu.memory_Bps * c[p_memory_fraction]);
  cost.time_s = c[p_overhead] + cost.math_s + cost.memory_s;
  // Floor: the causal FLOPs at the dense peak, and the bytes that cannot be served by L2 (those
  // beyond its capacity; the tables do not flush L2 between replays) at the datasheet bandwidth.
  cost.floor_s = std::max(cost.flops / peak, std::max(0.0, cost.bytes_B - gpu.l2_B) / gpu.memory_Bps);
  cost.bound = bound_of(c[p_overhead], cost.math_s, cost.memory_s);
  return cost;
}

/// Decode (generation), one new token per sequence over kv_len cached tokens. The KV cache
/// (W = 2 b kv_heads kv_len h bytes-per-element; K only for a grouped read of a K-only cache, see
/// AttentionShape::k_only_cache) is read once per KV head: with L2 not flushed between replays,
/// the share min(1, l2_fraction L2 / W) comes from L2 at l2_speedup x HBM, the rest (and Q, O)
/// from HBM at memory_fraction. Groups of more than 32 query heads per KV head fall back to one
/// query head per CTA: every head re-reads the cache, the re-reads from L2. Never faster than the
/// FLOPs at the dense peak. CTAs run in waves over the SMs at cta_overhead_s each (Q load,
/// softmax merge, O store): one CTA per (sequence, KV head) serves the whole group (TensorRT-LLM's
/// XQA kernel as FlashInfer's port launches it, grid {splits, kv_heads, batch}: csrc/xqa/mha.cu:3036
/// of flashinfer-ai/flashinfer at fb28d7242), one per (sequence, query head) in the fallback. A
/// 16-bit cache read by a group costs gqa16_cta_s more per wave, an fp8 cache fp8_cta_s more
/// (scales, conversion).
AttentionCost decode_cost(const GpuModel& gpu, const std::vector<double>& c, const AttentionShape& shape) {
  const double b = shape.batch, n = shape.heads, kv = shape.kv_heads, h = shape.head_dim, len = shape.kv_len;
  const double bw = gpu.memory_Bps;
  const double peak = dense_peak_flops_per_s(gpu, shape.dtype);
  const double group = n / kv;
  const bool shared = group <= kDecodeSharedGroupMax;
  const double cache_tensors = shape.k_only_cache && group > 1 ? 1 : 2;  // K and V, or K alone
  const double cache_B = cache_tensors * b * kv * len * h * element_B(shape.kv_dtype);
  const double q_o_B = 2 * b * n * h * element_B(shape.dtype);
  const double l2_hit = gpu.l2_B > 0 ? std::min(1.0, c[d_l2_fraction] * gpu.l2_B / cache_B) : 0.0;
  const double reread_B = shared ? 0.0 : (group - 1) * cache_B;

  AttentionCost cost;
  cost.flops = 4 * b * n * len * h;
  cost.bytes_B = cache_B + q_o_B;
  cost.math_s = cost.flops / peak;
  cost.memory_s = (cache_B * l2_hit + reread_B) / (bw * c[d_l2_speedup]) +
                  (cache_B * (1 - l2_hit) + q_o_B) / (bw * c[d_memory_fraction]);
  const double ctas = shared ? b * kv : b * n;
  const bool fp8_cache = shape.kv_dtype == "fp8";
  const double cta_s = c[d_cta_overhead] + (fp8_cache ? c[d_fp8_cta] : 0.0) +
                       (!fp8_cache && shared && group > 1 ? c[d_gqa16_cta] : 0.0);
  const double fixed_s = c[d_overhead] + std::ceil(ctas / gpu.sms) * cta_s;
  cost.time_s = fixed_s + std::max(cost.memory_s, cost.math_s);
  // Floor: FLOPs at the dense peak, and the bytes beyond the L2 capacity at the datasheet HBM
  // bandwidth (bytes that fit in L2 may be served from it: the tables replay without a flush).
  cost.floor_s = std::max(cost.math_s, std::max(0.0, cost.bytes_B - gpu.l2_B) / bw);
  cost.bound = bound_of(fixed_s, cost.math_s, cost.memory_s);
  return cost;
}

}  // namespace

const std::vector<KernelParameter>& attention_parameters(KernelFamily phase) {
  // Priors are conservative stated values (a fit starts there; nothing is a 1.0 ceiling), bounds
  // physical. Fitted values per architecture are in the issue 48 report of the attention model.
  static const std::vector<KernelParameter> prefill = {
      {"overhead_s", "fixed time of one attention op (launch, pre/post kernels), s", 0, 1e-3, 12e-6},
      {"math_fraction", "share of the per-SM dense tensor peak of the math dtype the QK^T/PV loop sustains", 0.01, 1,
       0.5},
      {"softmax_flops", "tensor-FLOP equivalents the softmax (max, exp, rescale) costs per score element, FLOP", 0,
       4096, 256},
      {"tile_overhead_s", "fixed time of one query tile (CTA prologue, epilogue, O store), s", 0, 1e-4, 3e-6},
      {"memory_fraction", "share of HBM bandwidth Q, K, V, O and the KV-cache write move at", 0.01, 1, 0.5},
  };
  static const std::vector<KernelParameter> decode = {
      {"overhead_s", "fixed time of one decode attention op (launch, KV append), s", 0, 1e-3, 8e-6},
      {"memory_fraction", "share of HBM bandwidth the KV-cache read sustains with every SM busy", 0.05, 1, 0.7},
      {"l2_speedup", "bandwidth of L2-resident KV bytes and re-reads, in multiples of HBM bandwidth", 1, 20, 1},
      {"l2_fraction", "share of the L2 capacity a replayed KV cache keeps resident", 0.01, 1, 0.5},
      {"cta_overhead_s", "time of one wave of CTAs (sequence, KV head): Q load, softmax merge, O store, s", 0, 1e-4,
       1.5e-6},
      {"gqa16_cta_s", "extra time of one CTA wave when a group of query heads reads a 16-bit KV cache, s", 0, 1e-4,
       1e-6},
      {"fp8_cta_s", "extra time of one CTA wave with an fp8 KV cache (scales, conversion), s", 0, 1e-4, 5e-7},
  };
  if (phase == KernelFamily::decode) return decode;
  if (phase == KernelFamily::prefill) return prefill;
  throw std::invalid_argument("attention_parameters: phase must be prefill or decode, not gemm");
}

AttentionCost attention_cost(const GpuModel& gpu, const KernelConstants& constants, const AttentionShape& shape) {
  check_shape(gpu, constants, shape);
  return shape.phase == KernelFamily::decode ? decode_cost(gpu, constants.values, shape)
                                             : prefill_cost(gpu, constants.values, shape);
}

}  // namespace topsim
