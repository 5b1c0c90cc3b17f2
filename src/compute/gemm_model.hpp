#pragma once
// One GEMM from the GPU's physics: CTA tiles (small-M ones for a few tokens) quantized into waves
// over the SMs, the K loop with its pipeline fill, split-K for skinny shapes (not where the
// library has none: Hopper's block-scaled fp8), operand traffic through L2 and HBM, the
// quantization passes of a recipe, and a clock that sags to its power-limited value on long
// kernels. Constants per (architecture, dtype) from models/compute.json "kernels".
#include <string>

#include "compute/kernel_fit.hpp"

namespace topsim {

struct GemmCost {
  double time_s = 0;    ///< the prediction
  double math_s = 0;    ///< tensor-core time of the chosen tiling (waves x tile time)
  double memory_s = 0;  ///< operand and result traffic at the achieved memory bandwidth
  double flops = 0;     ///< 2 m n k
  double bytes_B = 0;   ///< A, W and C once each plus the recipe's quantization passes
  /// max(flops at the dense peak of the dtype's math, the bytes that must come from DRAM at the
  /// datasheet memory bandwidth): time_s >= floor_s always (sparse: flops at the 2:4 sparse peak).
  double floor_s = 0;
  int tile_m = 0, tile_n = 0, split_k = 1;
  double waves = 0;
  std::string bound;  ///< "math", "memory" or "overhead"
};

/// The constants of gemm/<dtype> (kernel_parameters(KernelFamily::gemm)).
const std::vector<KernelParameter>& gemm_parameters();

/// The datasheet math key whose dense peak a GEMM of `dtype` runs at ("bf16_tensor",
/// "fp8_tensor", ...; weight-only recipes run their math at 16-bit), "" for unknown dtypes.
std::string gemm_math_key(const std::string& dtype);

/// Cost of one GEMM. `sparse_speedup` > 1 (at most 2): W is 2:4 sparse, the main loop's math
/// runs that much faster and W is stored compressed. std::invalid_argument for shapes that are
/// not positive, a dtype the GPU has no peak for, or constants of the wrong length.
/// `rate`, when given, is the math rate to run at instead of the recipe's datasheet key (a GPU
/// whose fp16 runs on vector units, P100).
GemmCost gemm_cost(const GpuModel& gpu, const KernelConstants& constants, const GemmShape& shape,
                   double sparse_speedup = 1, const MathRate* rate = nullptr);

}  // namespace topsim
