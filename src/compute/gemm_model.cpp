#include "compute/gemm_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "compute/kernel.hpp"

namespace topsim {

namespace {

/// How a recipe stores its operands and what it adds around the GEMM, bytes per element.
struct Recipe {
  const char* dtype;
  const char* math_key;  ///< datasheet peak the main loop runs at
  double activation_B;   ///< A as the main loop reads it
  double weight_B;       ///< W as stored (scales included)
  double output_B;       ///< C (16-bit for every recipe of the tables)
  /// Bytes per activation element moved by the quantization passes before the GEMM (read at
  /// 16 bits, written quantized): fp8 per-tensor takes an amax pass (read 2) and a cast pass
  /// (read 2, write 1) since its scale is computed on the fly (collect_gemm.py:198-201 as the
  /// kernel README reads it); fp8_block and nvfp4 quantize in one pass that also writes the
  /// block scales (fp8_block: 4 B per 128 elements; nvfp4: one fp8 scale per 16).
  double quantize_B;
};

// Element sizes: bf16/fp16 2 B, fp8 and int8 1 B, fp4 and int4 half a byte; nvfp4 adds an fp8
// scale per 16 elements (1/16 B), fp8_block an fp32 scale per 128x128 weight block (negligible)
// and per 128 activation elements (4/128 B).
constexpr std::array<Recipe, 13> kRecipes = {{
    {"bf16", "bf16_tensor", 2, 2, 2, 0},
    {"fp16", "fp16_tensor", 2, 2, 2, 0},
    {"fp8", "fp8_tensor", 1, 1, 2, 5},
    {"fp8_block", "fp8_tensor", 1 + 4.0 / 128, 1, 2, 3 + 4.0 / 128},
    // MXFP8 (Transformer Engine's MXFP8BlockScaling): one E8M0 byte per 32 elements of both
    // operands, quantized in one pass like fp8_block (no table timed it; the per-tensor fp8
    // constants stand in, compute/kernel.cpp).
    {"mxfp8", "fp8_tensor", 1 + 1.0 / 32, 1 + 1.0 / 32, 2, 3 + 1.0 / 32},
    {"nvfp4", "fp4_tensor", 0.5 + 1.0 / 16, 0.5 + 1.0 / 16, 2, 2.5 + 1.0 / 16},
    {"sq", "int8_tensor", 1, 1, 2, 0},
    {"int8", "int8_tensor", 1, 1, 2, 0},
    {"int8_wo", "fp16_tensor", 2, 1, 2, 0},
    {"int4_wo", "fp16_tensor", 2, 0.5, 2, 0},
    {"tf32", "tf32_tensor", 4, 4, 4, 0},
    {"fp32", "fp32", 4, 4, 4, 0},
    {"fp64", "fp64_tensor", 8, 8, 8, 0},
}};

const Recipe* find_recipe(const std::string& dtype) {
  for (const Recipe& r : kRecipes)
    if (dtype == r.dtype) return &r;
  return nullptr;
}

/// CTA tiles cuBLAS picks among for tensor-core GEMMs, most efficient first (NVIDIA's Matrix
/// Multiplication Background guide as quoted in shared/reference/specs/kernels-mig-datasets.md
/// section 4.1: 256x128 and 128x256, 128x128, 256x64 and 64x256, 128x64 and 64x128, 64x64),
/// then the small-M tiles of skinny shapes (m of a few tokens): Ampere's mma.m16n8k16 lets a CTA
/// cover 16 or 32 rows, and Hopper/Blackwell kernels swap A and B so that m lies on the wgmma N
/// side, which can be as small as 8-16. Without them a 1-token GEMM pays 64 rows of math.
/// Prototype cross-validation (tables of shared/reference/kernels, 5-fold by shape, with the
/// Hopper fp8_block rule below): A100 int4_wo 12.0% -> 9.4%, sq 13.8% -> 12.7%, H100 fp8_block
/// 11.5% -> 9.1%, L40S fp8_block 11.3% -> 8.9%, B200 nvfp4 9.1% -> 7.4%.
constexpr std::array<std::array<int, 2>, 13> kTiles = {{{256, 128},
                                                        {128, 256},
                                                        {128, 128},
                                                        {256, 64},
                                                        {64, 256},
                                                        {128, 64},
                                                        {64, 128},
                                                        {64, 64},
                                                        {32, 128},
                                                        {16, 128},
                                                        {16, 256},
                                                        {32, 64},
                                                        {16, 64}}};

/// Split-K factors tried for skinny shapes; a slice keeps at least kMinSliceK of the depth.
constexpr std::array<int, 7> kSplits = {1, 2, 4, 8, 16, 32, 64};

/// A library heuristic, stated as one: the block-scaled fp8 GEMM TensorRT-LLM runs on Hopper (a
/// CUTLASS-style warp-specialized kernel that promotes its fp32 accumulators once per 128-deep
/// scale block; cf. cutlass include/cutlass/gemm/collective/
/// sm90_mma_tma_gmma_ss_warpspecialized_fp8_blockwise_scaling.hpp@7107b055) has no split-K: the
/// tables' H100 fp8_block rows of small m, n and deep k take the whole K loop in one CTA (e.g.
/// 14x128x65536 in 75 us, 2.5x what a split would take).
bool has_split_k(const GpuModel& gpu, const std::string& dtype) {
  return !(gpu.architecture == "hopper" && dtype == "fp8_block");
}
constexpr double kMinSliceK = 32;
/// Partial sums of split-K: fp32, written by each slice and read back by the reduction.
constexpr double kPartialSumB = 4 * 2;

enum Index { kRate, kOverhead, kFill, kMemory, kSmall, kSmLoad, kPower, kPowerTau, kSplitCost, kL2, kCount };

/// Most weight copies the collector rotates (collect_gemm.py:176-179, README "Measurement").
constexpr double kMaxReplayCopies = 5;

/// Operand and result traffic: activation-side bytes (A, its quantization passes, C) and weight
/// bytes, each served from L2 at `l2_factor` x `bandwidth` when it stays there between calls,
/// from memory at `bandwidth` otherwise. A workload's weights come from memory; a benchmark's
/// replays keep the activation side in L2 when it fits, and everything when its weight copies
/// fit beside it.
struct Traffic {
  double time_s = 0;
  double bytes_B = 0;  ///< activation side and weight, once each
  double dram_B = 0;   ///< bytes that must come from memory (the floor's share)
};

Traffic memory_traffic(const GpuModel& gpu, const GemmShape& s, const Recipe& r, double weight_B, double bandwidth,
                       double l2_factor) {
  const double activation = (s.m * s.k * (r.activation_B + r.quantize_B) + s.m * s.n * r.output_B) * s.batch;
  const double weight = s.k * s.n * weight_B * s.batch;
  const double l2 = gpu.l2_B;
  const double bytes = activation + weight;
  if (s.weight_copies == 0 || !(l2 > 0)) return {bytes / bandwidth, bytes, bytes};
  const double copies = s.weight_copies > 0 ? s.weight_copies
                                            : std::max(1.0, std::min(kMaxReplayCopies, std::ceil(l2 / weight)));
  if (copies * weight + activation <= l2) return {bytes / (bandwidth * l2_factor), bytes, 0};
  if (activation <= l2) return {activation / (bandwidth * l2_factor) + weight / bandwidth, bytes, weight};
  return {bytes / bandwidth, bytes, bytes};
}

}  // namespace

const std::vector<KernelParameter>& gemm_parameters() {
  static const std::vector<KernelParameter> parameters = {
      {"tile_rate_fraction", "fraction of the dtype's dense peak a 256x128 tile's main loop reaches at boost clock", 0.05, 1, 0.7},
      {"overhead_s", "fixed time of one call: launch, prologue, epilogue and the recipe's extra launches, seconds", 0, 1e-4, 5e-6},
      {"pipeline_fill_k", "depth elements a tile's pipeline fill and epilogue cost, elements of k", 0, 4096, 64},
      {"memory_fraction", "fraction of the datasheet memory bandwidth streaming operands reach", 0.05, 1, 0.8},
      {"small_tile_cost", "rate lost by tiles smaller than 256x128 per unit of extra edge (128/tm + 128/tn - 1.5)", 0, 10, 0.3},
      {"sm_load_factor", "one SM's operand load rate in units of its share of memory bandwidth (L2 hits exceed it)", 0.5, 100, 5},
      {"power_limited_fraction", "clock a long math-bound kernel sags to under the power limit, fraction of boost", 0.3, 1, 0.9},
      {"power_time_constant_s", "kernel time at which the clock is halfway to its power-limited value, seconds", 1e-5, 1, 1e-3},
      {"split_cost_s", "time each extra split-K slice costs (reduction launch and sync), seconds", 0, 1e-3, 1e-6},
      {"l2_bandwidth_factor", "bandwidth of traffic served from L2, in units of the achieved memory bandwidth", 1, 20, 2},
  };
  return parameters;
}

std::string gemm_math_key(const std::string& dtype) {
  const Recipe* r = find_recipe(dtype);
  return r ? r->math_key : "";
}

GemmCost gemm_cost(const GpuModel& gpu, const KernelConstants& constants, const GemmShape& shape,
                   double sparse_speedup, const MathRate* rate) {
  if (constants.values.size() != kCount)
    throw std::invalid_argument("gemm constants: " + std::to_string(constants.values.size()) + " values, expected " +
                                std::to_string(kCount));
  if (!(shape.m > 0 && shape.n > 0 && shape.k > 0 && shape.batch > 0))
    throw std::invalid_argument("a GEMM needs m, n, k and batch > 0");
  if (!(sparse_speedup >= 1 && sparse_speedup <= 2))
    throw std::invalid_argument("a 2:4 sparse speedup lies in [1, 2] (half the math at most)");
  const Recipe* recipe = find_recipe(shape.dtype);
  if (!recipe) throw std::invalid_argument("no GEMM recipe for dtype " + shape.dtype);
  auto math = gpu.math.find(recipe->math_key);
  if (!rate && (math == gpu.math.end() || !(math->second.dense_flops_per_s > 0)))
    throw std::invalid_argument(gpu.name + " has no " + recipe->math_key + " peak for " + shape.dtype + " GEMMs");
  const MathRate& peaks = rate ? *rate : math->second;
  if (!(peaks.dense_flops_per_s > 0)) throw std::invalid_argument(gpu.name + ": no dense peak for " + shape.dtype);
  if (sparse_speedup > 1 && !(peaks.sparse_flops_per_s > 0))
    throw std::invalid_argument(gpu.name + " has no 2:4 sparse " + recipe->math_key + " math");
  if (gpu.sms < 1 || !(gpu.memory_Bps > 0))
    throw std::invalid_argument(gpu.name + " needs sms and memory bandwidth for GEMM waves");
  const std::vector<double>& c = constants.values;
  const bool sparse = sparse_speedup > 1;
  const double m = shape.m, n = shape.n, k = shape.k, batch = shape.batch, sms = gpu.sms;
  const double peak = peaks.dense_flops_per_s;
  const double sm_rate = peak * c[kRate] * sparse_speedup / sms;  // FLOP/s of one SM's main loop
  const double bandwidth = gpu.memory_Bps * c[kMemory];
  const double sm_load = c[kSmLoad] * gpu.memory_Bps / sms;      // B/s one SM pulls into its tile
  const double weight_B = recipe->weight_B * (sparse ? sparse_storage_fraction(recipe->weight_B) : 1);

  const bool split_k = has_split_k(gpu, shape.dtype);

  GemmCost cost;
  cost.flops = 2 * m * n * k * batch;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [tm, tn] : kTiles) {
    const double tiles = std::ceil(m / tm) * std::ceil(n / tn) * batch;
    const double edge = 128.0 / tm + 128.0 / tn - 1.5;  // 0 for 256x128, 2.5 for 64x64, 7.5 for 16x128
    const double tile_rate = sm_rate / (1 + c[kSmall] * edge);
    const double rows = std::min(m, double(tm)), cols = std::min(n, double(tn));
    for (int split : kSplits) {
      const double slice = std::ceil(k / split);
      if (split > 1 && (slice < kMinSliceK || !split_k)) break;
      const double waves = std::ceil(tiles * split / sms);
      const double tile_math_s = (slice + c[kFill]) * tm * tn * 2 / tile_rate;
      const double tile_load_s = (rows * recipe->activation_B + cols * weight_B) * slice / sm_load;
      double t = waves * std::max(tile_math_s, tile_load_s);
      if (split > 1) t += m * n * batch * kPartialSumB * split / bandwidth + (split - 1) * c[kSplitCost];
      if (t < best) {
        best = t;
        cost.tile_m = tm;
        cost.tile_n = tn;
        cost.split_k = split;
        cost.waves = waves;
      }
    }
  }
  cost.math_s = best;
  const Traffic traffic = memory_traffic(gpu, shape, *recipe, weight_B, bandwidth, c[kL2]);
  cost.memory_s = traffic.time_s;
  cost.bytes_B = traffic.bytes_B;
  // At boost clock the kernel takes `core`; the longer it runs, the closer its clock sags to the
  // power-limited value, halfway at power_time_constant_s.
  double core = std::max(cost.math_s, cost.memory_s);
  core *= 1 + (1 / c[kPower] - 1) * core / (core + c[kPowerTau]);
  cost.time_s = c[kOverhead] + core;
  cost.bound = c[kOverhead] > core ? "overhead" : cost.math_s >= cost.memory_s ? "math" : "memory";
  const double floor_peak = sparse ? std::max(peaks.sparse_flops_per_s, peak) : peak;
  cost.floor_s = std::max(cost.flops / floor_peak, traffic.dram_B / gpu.memory_Bps);
#ifdef TOPSIM_INVARIANTS
  // Every factor above slows the kernel: a fraction <= 1 of the peak, whole waves, a clock that
  // only sags, a sparse speedup <= 2 against a datasheet sparse peak of twice the dense one.
  if (!(cost.time_s >= cost.floor_s * (1 - 1e-12)))
    throw std::logic_error("gemm_cost: invariant violated: " + std::to_string(cost.time_s) +
                           " s beats the datasheet floor " + std::to_string(cost.floor_s) + " s on " + gpu.name);
#endif
  return cost;
}

}  // namespace topsim
