#include "compute/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

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

/// The key of GpuModel::math whose rate `dtype` runs at on `gpu`: the tensor-core rate where the
/// GPU has one, else the vector rate (fp16 and fp64 have both); "" when it has neither.
std::string math_key(const GpuModel& gpu, const std::string& dtype) {
  std::vector<std::string> candidates;
  if (dtype == "fp16") candidates = {"fp16_tensor", "fp16"};
  if (dtype == "bf16") candidates = {"bf16_tensor"};
  if (dtype == "tf32") candidates = {"tf32_tensor"};
  if (dtype == "fp32") candidates = {"fp32"};
  if (dtype == "fp64") candidates = {"fp64_tensor", "fp64"};
  if (dtype == "fp8") candidates = {"fp8_tensor"};
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

/// Padding waste of partial tiles along one dimension: `extent` over the tiles covering it.
double tile_fill(double extent, int tile) { return extent / (std::ceil(extent / tile) * tile); }

}  // namespace

double dtype_size_B(const std::string& dtype) {
  for (const auto& [name, size] : dtype_sizes())
    if (name == dtype) return size;
  throw std::invalid_argument(unknown_name_message("dtype", dtype, dtype_names()));
}

std::string kernel_unavailable(const GpuModel& gpu, const Kernel& kernel) {
  const std::vector<std::string> names = dtype_names();
  if (std::find(names.begin(), names.end(), kernel.dtype) == names.end())
    return unknown_name_message("dtype", kernel.dtype, names) + " (" + gpu.name +
           " runs dense: " + supported(gpu, false) + ")";
  if (kernel.kind == Kernel::Kind::memory) return "";  // streaming needs no math rate
  std::string key = math_key(gpu, kernel.dtype);
  if (key.empty())
    return gpu.name + " has no math for " + kernel.dtype + " (dense: " + supported(gpu, false) +
           "; 2:4 sparse math: " + supported(gpu, true) + ")";
  if (kernel.sparse && gpu.math.at(key).sparse_flops_per_s <= 0)
    return gpu.name + " has no 2:4 sparse math for " + kernel.dtype + " (2:4 sparse math: " + supported(gpu, true) +
           "; dense: " + supported(gpu, false) + ")";
  return "";
}

KernelCost kernel_cost(const GpuModel& gpu, const ComputeModel& model, const Kernel& kernel) {
  std::string why = kernel_unavailable(gpu, kernel);
  if (!why.empty()) throw std::invalid_argument(why);
  KernelCost cost;
  const double size_B = dtype_size_B(kernel.dtype);
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
    if (!(model.attention_efficiency > 0))
      throw std::invalid_argument("the " + model.name + " compute model has no attention_efficiency (no fused attention model)");
    // Flash attention tiles over queries and keys; its rate is one fitted fraction of peak.
    cost.efficiency = model.attention_efficiency;
    cost.flops = 4 * kernel.m * kernel.n * kernel.k * kernel.batch;
    const double peak_flops_per_s = gpu.math.at(math_key(gpu, kernel.dtype)).dense_flops_per_s;
    cost.math_s = cost.flops / (peak_flops_per_s * cost.efficiency);
    cost.bytes_B = kernel.bytes_B > 0 ? kernel.bytes_B : 2 * (kernel.m + kernel.n) * kernel.k * kernel.batch * size_B;
    cost.memory_s = cost.bytes_B / bandwidth_Bps;
    cost.floor_s = std::max(cost.flops / peak_flops_per_s, cost.bytes_B / gpu.memory_Bps);
  } else {
    if (!(kernel.m > 0 && kernel.n > 0 && kernel.k > 0 && kernel.batch > 0))
      throw std::invalid_argument("a GEMM needs m, n, k and batch > 0");
    if (kernel.bytes_B < 0) throw std::invalid_argument("bytes_B may not be negative");
    if (gpu.sms < 1) throw std::invalid_argument(gpu.name + " has no SM count (sms), which GEMM waves need");
    if (kernel.sparse && !(model.sparse_gemm_efficiency > 0))
      throw std::invalid_argument("the " + model.name +
                                  " compute model has no sparse_gemm_efficiency (no 2:4 sparse path)");
    const MathRate& rate = gpu.math.at(math_key(gpu, kernel.dtype));
    const double peak_flops_per_s = kernel.sparse ? rate.sparse_flops_per_s : rate.dense_flops_per_s;

    // Shape utilisation, as a GEMM library picks its kernel: the library's largest tile
    // (tile_m x tile_n) or one halved in m or quartered in n, each smaller tile paying for its
    // lower data reuse in proportion to its arithmetic intensity tm tn / (tm + tn). Wave
    // quantisation: one thread block per output tile, `sms` blocks per wave, the last wave may
    // leave SMs idle. Tile padding: partial tiles compute their full size. Split-K: with fewer
    // tiles than SMs, k is split over more blocks as long as each slice keeps 90% of its depth
    // rate. Depth: a block's fixed prologue/epilogue costs as much as k_half elements of its loop.
    // A 2:4 sparse block's main loop consumes k twice as fast while its prologue and epilogue
    // take as long as a dense block's: in elements of k they cost twice k_half.
    const double k_half = kernel.sparse ? 2 * model.k_half : model.k_half;
    const auto intensity = [](double tm, double tn) { return tm * tn / (tm + tn); };
    double shape_util = 0;
    for (double tm : {double(model.tile_m), model.tile_m / 2.0})
      for (double tn : {double(model.tile_n), model.tile_n / 2.0, model.tile_n / 4.0}) {
        double tiles = std::ceil(kernel.m / tm) * std::ceil(kernel.n / tn) * kernel.batch;
        double split = 1;
        if (tiles < gpu.sms)
          split = std::max(1.0, std::min(std::floor(gpu.sms / tiles), std::floor(kernel.k / (9 * k_half))));
        double blocks = tiles * split;
        double waves = std::ceil(blocks / gpu.sms);
        double wave_util = blocks / (waves * gpu.sms);
        double tile_util = tile_fill(kernel.m, tm) * tile_fill(kernel.n, tn);
        double depth = kernel.k / split;
        double depth_util = depth / (depth + k_half);
        double reuse = intensity(tm, tn) / intensity(model.tile_m, model.tile_n);
        shape_util = std::max(shape_util, wave_util * tile_util * depth_util * reuse);
      }
    double base = kernel.sparse                                            ? model.sparse_gemm_efficiency
                  : kernel.dtype == "fp8" && model.fp8_gemm_efficiency > 0   ? model.fp8_gemm_efficiency
                  : kernel.dtype == "int8" && model.int8_gemm_efficiency > 0 ? model.int8_gemm_efficiency
                                                                             : model.gemm_efficiency;
    if (kernel.kind == Kernel::Kind::conv) base *= model.conv_efficiency;
    cost.efficiency = base * shape_util;
    cost.flops = 2 * kernel.m * kernel.n * kernel.k * kernel.batch;
    cost.math_s = cost.flops / (peak_flops_per_s * cost.efficiency);

    // A and C once each, B once: compressed when sparse.
    const double b_fraction = kernel.sparse ? sparse_storage_fraction(size_B) : 1;
    cost.bytes_B = kernel.bytes_B > 0 ? kernel.bytes_B
                                      : (kernel.m * kernel.k + kernel.k * kernel.n * b_fraction + kernel.m * kernel.n) *
                                            kernel.batch * size_B;
    cost.memory_s = cost.bytes_B / bandwidth_Bps;
    cost.floor_s = std::max(cost.flops / peak_flops_per_s, cost.bytes_B / gpu.memory_Bps);
  }

  cost.time_s = std::max({cost.math_s, cost.memory_s, model.launch_s});
  cost.bound = cost.math_s >= cost.memory_s && cost.math_s >= model.launch_s ? "math"
               : cost.memory_s >= model.launch_s                             ? "memory"
                                                                             : "launch";
#ifdef TOPSIM_INVARIANTS
  if (!(cost.time_s >= cost.floor_s * (1 - 1e-12)))
    throw std::logic_error("kernel_cost: invariant violated: " + std::to_string(cost.time_s) +
                           " s beats the datasheet floor " + std::to_string(cost.floor_s) + " s on " + gpu.name +
                           " (an efficiency of " + model.name + " above 1)");
#endif
  return cost;
}

}  // namespace topsim
