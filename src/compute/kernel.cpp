#include "compute/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "compute/attention_model.hpp"
#include "compute/gemm_model.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

/// The math types a kernel may ask for, with their element size in bytes.
const std::vector<std::pair<std::string, double>>& dtype_sizes() {
  static const std::vector<std::pair<std::string, double>> sizes = {
      {"fp64", 8}, {"fp32", 4}, {"tf32", 4}, {"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}};
  return sizes;
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (const auto& entry : dtype_sizes()) names.push_back(entry.first);
  return names;
}

/// Block-scaled fp8 GEMMs of training (Transformer Engine's recipes): fp8 math at the fp8 tensor
/// rate, each with the lowest compute capability Transformer Engine runs it on and its reason
/// otherwise (transformer_engine/pytorch/quantization.py:162-185@TE@d0067d0da6cb). Not listed
/// among the math types a GPU runs: they are recipes of fp8.
struct ScaledFp8 {
  const char* dtype;
  double min_cc;             ///< lowest compute capability (major.minor as a number)
  const char* below_reason;  ///< Transformer Engine's words under min_cc
  double max_cc;             ///< first compute capability it stops at (0: none)
  const char* above_reason;  ///< its words from max_cc on
};
const std::vector<ScaledFp8>& scaled_fp8() {
  static const std::vector<ScaledFp8> types = {
      {"fp8_block", 9.0, "FP8 block scaled GEMM requires compute capability 9.0 or higher and CUDA >= 12.9.", 0, ""},
      {"mxfp8", 10.0, "Device compute capability 10.0 or higher required for MXFP8 execution.", 12.0,
       "MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet."},
  };
  return types;
}
const ScaledFp8* find_scaled_fp8(const std::string& dtype) {
  for (const ScaledFp8& t : scaled_fp8())
    if (dtype == t.dtype) return &t;
  return nullptr;
}

/// Why `gpu` cannot run a block-scaled fp8 GEMM, "" when it can (or its compute capability is
/// not known).
std::string scaled_fp8_unavailable(const GpuModel& gpu, const ScaledFp8& t) {
  if (gpu.compute_capability.empty()) return "";
  const double cc = std::stod(gpu.compute_capability);
  if (cc >= t.min_cc && (t.max_cc == 0 || cc < t.max_cc)) return "";
  return gpu.name + " (compute capability " + gpu.compute_capability + ") has no " + t.dtype +
         " GEMMs: Transformer Engine: \"" + (cc < t.min_cc ? t.below_reason : t.above_reason) + "\"";
}

/// The key of GpuModel::math whose rate `dtype` runs at on `gpu`: the tensor-core rate where the
/// GPU has one, else the vector rate (fp16 and fp64 have both); "" when it has neither.
std::string math_key(const GpuModel& gpu, const std::string& dtype) {
  std::vector<std::string> candidates;
  if (dtype == "fp16") candidates = {"fp16_tensor", "fp16"};
  if (dtype == "bf16") candidates = {"bf16_tensor"};
  if (dtype == "tf32") candidates = {"tf32_tensor"};
  if (dtype == "fp32") candidates = {"fp32"};
  if (dtype == "fp64") candidates = {"fp64_tensor", "fp64"};
  if (dtype == "fp8" || find_scaled_fp8(dtype)) candidates = {"fp8_tensor"};
  if (dtype == "int8") candidates = {"int8_tensor"};
  for (const std::string& key : candidates) {
    auto it = gpu.math.find(key);
    if (it != gpu.math.end() && it->second.dense_flops_per_s > 0) return key;
  }
  return "";
}

/// Math types `gpu` runs, alphabetically; with `sparse`, only those with a 2:4 sparse rate.
std::string supported(const GpuModel& gpu, bool sparse) {
  std::vector<std::string> names;
  for (const std::string& dtype : dtype_names()) {
    std::string key = math_key(gpu, dtype);
    if (!key.empty() && (!sparse || gpu.math.at(key).sparse_flops_per_s > 0)) names.push_back(dtype);
  }
  std::sort(names.begin(), names.end());
  return names.empty() ? "none" : join(names, ", ");
}

/// The fitted GEMM constants a kernel of `dtype` runs with: its own group where the kernel tables
/// timed that recipe on this architecture, else the architecture's bf16 group (the same tiles,
/// pipeline and clock behaviour, at the dtype's own datasheet peak: an assumption docs/validation.md
/// lists), else none.
/// MXFP8, which no table timed, runs with the per-tensor fp8 group: the same fp8 tensor-core
/// main loop, its block scales applied by the MMA (an assumption docs/llm.md states).
const KernelConstants& family_constants(const ComputeModel& model, KernelFamily family, const std::string& dtype) {
  const std::string stand_in = dtype == "mxfp8" ? "fp8" : "bf16";
  for (const std::string& group :
       {kernel_group_key(family, dtype), kernel_group_key(family, stand_in), kernel_group_key(family, "bf16")}) {
    auto it = model.kernels.find(group);
    if (it != model.kernels.end()) return it->second;
  }
  throw std::invalid_argument("the " + model.name + " compute model has no fitted " + family_name(family) +
                              " constants (no " + kernel_group_key(family, dtype) + " or " +
                              kernel_group_key(family, "bf16") +
                              " group in models/compute.json; topsim calibrate --kernels solves them)");
}

/// A fused attention kernel of a workload as the attention model's shape. One query per head
/// (m = 1) is a decode step over n cached keys, its heads in groups of `group` per KV head.
/// Otherwise a prefill of m queries attending to n keys each on average: a causal square of
/// q = sqrt(2 m n) tokens has the same query-key pairs (q = s for a causal s x s, n = s / 2),
/// the form the prefill model times; a bidirectional encoder's s x s becomes q = sqrt(2) s.
AttentionShape attention_shape(const Kernel& kernel) {
  AttentionShape a;
  a.head_dim = kernel.k;
  a.dtype = kernel.dtype;
  a.kv_dtype = kernel.dtype;
  if (kernel.m == 1) {
    a.phase = KernelFamily::decode;
    a.batch = kernel.batch / kernel.group;
    a.heads = kernel.group;
    a.kv_heads = 1;
    a.q_len = 1;
    a.kv_len = kernel.n;
    // decode math stays 16-bit over an 8-bit cache
    a.dtype = kernel.dtype == "fp16" ? "fp16" : "bf16";
  } else {
    a.phase = KernelFamily::prefill;
    a.batch = kernel.batch;
    a.q_len = a.kv_len = std::sqrt(2 * kernel.m * kernel.n);
  }
  return a;
}

}  // namespace

double dtype_size_B(const std::string& dtype) {
  for (const auto& [name, size] : dtype_sizes())
    if (name == dtype) return size;
  if (find_scaled_fp8(dtype)) return 1;
  throw std::invalid_argument(unknown_name_message("dtype", dtype, dtype_names()));
}

std::string kernel_unavailable(const GpuModel& gpu, const Kernel& kernel) {
  const std::vector<std::string> names = dtype_names();
  const ScaledFp8* scaled = find_scaled_fp8(kernel.dtype);
  if (!scaled && std::find(names.begin(), names.end(), kernel.dtype) == names.end())
    return unknown_name_message("dtype", kernel.dtype, names) + " (" + gpu.name +
           " runs dense: " + supported(gpu, false) + ")";
  if (kernel.kind == Kernel::Kind::memory) return "";  // streaming needs no math rate
  if (scaled && kernel.kind != Kernel::Kind::gemm)
    return std::string(scaled->dtype) + " is a GEMM recipe, not a convolution or attention type";
  if (scaled && kernel.sparse) return std::string(scaled->dtype) + " GEMMs have no 2:4 sparse path";
  std::string key = math_key(gpu, kernel.dtype);
  if (key.empty())
    return gpu.name + " has no math for " + kernel.dtype + " (dense: " + supported(gpu, false) +
           "; 2:4 sparse math: " + supported(gpu, true) + ")";
  if (scaled) return scaled_fp8_unavailable(gpu, *scaled);
  if (kernel.sparse && gpu.math.at(key).sparse_flops_per_s <= 0)
    return gpu.name + " has no 2:4 sparse math for " + kernel.dtype + " (2:4 sparse math: " + supported(gpu, true) +
           "; dense: " + supported(gpu, false) + ")";
  return "";
}

KernelCost kernel_cost(const GpuModel& gpu, const ComputeModel& model, const Kernel& kernel) {
  std::string why = kernel_unavailable(gpu, kernel);
  if (!why.empty()) throw std::invalid_argument(why);
  KernelCost cost;
  std::string gemm_bound;  // what binds inside the GEMM model's time
  const double bandwidth_Bps = gpu.memory_Bps * model.memory_efficiency;

  if (kernel.kind == Kernel::Kind::memory) {
    if (!(kernel.bytes_B > 0)) throw std::invalid_argument("a memory kernel needs bytes_B > 0");
    if (kernel.sparse) throw std::invalid_argument("2:4 sparsity applies to gemm and conv kernels, not memory kernels");
    cost.bytes_B = kernel.bytes_B;
    cost.memory_s = cost.bytes_B / bandwidth_Bps;
    cost.floor_s = cost.bytes_B / gpu.memory_Bps;
  } else if (kernel.kind == Kernel::Kind::attention) {
    if (!(kernel.m > 0 && kernel.n > 0 && kernel.k > 0 && kernel.batch > 0))
      throw std::invalid_argument("attention needs m, n, k and batch > 0");
    if (kernel.sparse) throw std::invalid_argument("2:4 sparsity applies to gemm and conv kernels, not attention");
    const AttentionShape shape = attention_shape(kernel);
    const AttentionCost a = attention_cost(gpu, family_constants(model, shape.phase, shape.dtype), shape);
    cost.flops = a.flops;
    cost.math_s = a.time_s;
    cost.bytes_B = kernel.bytes_B > 0 ? kernel.bytes_B : a.bytes_B;
    cost.memory_s = kernel.bytes_B > 0 ? kernel.bytes_B / bandwidth_Bps : a.memory_s;
    cost.floor_s = kernel.bytes_B > 0 ? std::max(a.floor_s, kernel.bytes_B / gpu.memory_Bps) : a.floor_s;
    cost.efficiency = cost.flops / (gpu.math.at(math_key(gpu, kernel.dtype)).dense_flops_per_s * cost.math_s);
    gemm_bound = a.bound == "overhead" ? "launch" : a.bound;
  } else {
    if (!(kernel.m > 0 && kernel.n > 0 && kernel.k > 0 && kernel.batch > 0))
      throw std::invalid_argument("a GEMM needs m, n, k and batch > 0");
    if (kernel.bytes_B < 0) throw std::invalid_argument("bytes_B may not be negative");
    if (kernel.sparse && !(model.sparse_speedup > 1))
      throw std::invalid_argument("the " + model.name + " compute model has no sparse_speedup (no 2:4 sparse path)");
    const KernelConstants& constants = family_constants(model, KernelFamily::gemm, kernel.dtype);
    // Each math type is its own GEMM recipe (gemm_dtypes()), run at the rate kernel_unavailable checked.
    const MathRate& rate = gpu.math.at(math_key(gpu, kernel.dtype));
    GemmShape shape{kernel.m, kernel.n, kernel.k, kernel.dtype, kernel.batch};
    const GemmCost g = gemm_cost(gpu, constants, shape, kernel.sparse ? model.sparse_speedup : 1, &rate);
    // A convolution is the implicit GEMM of its shape, its math at conv_efficiency of that.
    const double conv = kernel.kind == Kernel::Kind::conv ? model.conv_efficiency : 1;
    cost.flops = g.flops;
    cost.math_s = g.time_s / conv;
    cost.bytes_B = kernel.bytes_B > 0 ? kernel.bytes_B : g.bytes_B;
    cost.memory_s = cost.bytes_B / bandwidth_Bps;
    cost.floor_s = std::max(g.floor_s, cost.bytes_B / gpu.memory_Bps);
    cost.efficiency = cost.flops / ((kernel.sparse ? rate.sparse_flops_per_s : rate.dense_flops_per_s) * cost.math_s);
    gemm_bound = g.bound == "overhead" ? "launch" : g.bound;
  }

  cost.time_s = std::max({cost.math_s, cost.memory_s, model.launch_s});
  cost.bound = cost.math_s >= cost.memory_s && cost.math_s >= model.launch_s ? "math"
               : cost.memory_s >= model.launch_s                             ? "memory"
                                                                             : "launch";
  if (!gemm_bound.empty() && cost.bound == "math") cost.bound = gemm_bound;
#ifdef TOPSIM_INVARIANTS
  if (kernel.sparse) {
    Kernel dense = kernel;
    dense.sparse = false;
    const double dense_s = kernel_cost(gpu, model, dense).time_s;
    if (!(cost.time_s >= dense_s / 2 * (1 - 1e-12)))
      throw std::logic_error("kernel_cost: invariant violated: a 2:4 sparse kernel " + std::to_string(cost.time_s) +
                             " s is more than twice as fast as its dense twin " + std::to_string(dense_s) + " s");
  }
  if (!(cost.time_s >= cost.floor_s * (1 - 1e-12)))
    throw std::logic_error("kernel_cost: invariant violated: " + std::to_string(cost.time_s) +
                           " s beats the datasheet floor " + std::to_string(cost.floor_s) + " s on " + gpu.name +
                           " (an efficiency of " + model.name + " above 1)");
#endif
  return cost;
}

}  // namespace topsim
