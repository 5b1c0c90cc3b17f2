#pragma once
// What one kernel costs on one GPU: the larger of its math time, at the fraction of peak its
// shape reaches, and its memory time, at the fraction of HBM bandwidth streaming reaches; never
// less than a launch. Parameters from models/gpus.json (peaks, SMs) and models/compute.json.
#include <string>

#include "model/catalog.hpp"

namespace topsim {

struct Kernel {
  enum class Kind {
    gemm,    ///< C[m x n] = A[m x k] B[k x n]; B is the weight operand (the one 2:4 sparsity prunes)
    conv,    ///< a convolution as an implicit GEMM of that shape (conv_efficiency applies)
    memory,  ///< streaming: bytes_B read plus written, no math worth counting
    /// fused (flash) attention: batch independent (sequence, head) pairs, m queries against n
    /// keys each on average, head dimension k; m = 1 is a decode step over n cached keys. Timed
    /// by the attention model (compute/attention_model.hpp).
    attention,
  };
  Kind kind = Kind::gemm;
  double m = 0, n = 0, k = 0;  ///< GEMM shape (gemm, conv)
  double batch = 1;            ///< independent GEMMs of that shape in one kernel (attention heads)
  double group = 1;            ///< attention: query heads sharing one KV head (GQA/MQA; 1 for MHA)
  std::string dtype = "fp16";  ///< math type: fp64, fp32, tf32, fp16, bf16, fp8, int8
  bool sparse = false;         ///< B is 2:4 structured sparse: sparse tensor cores, compressed B
  /// memory: bytes read plus written. gemm, conv: 0 means A and B read once and C written once
  /// (B compressed when sparse); more when the caller knows the traffic is larger.
  double bytes_B = 0;
};

struct KernelCost {
  double time_s = 0;       ///< max(math_s, memory_s, launch)
  double math_s = 0;       ///< flops at the achieved math rate of this shape
  double memory_s = 0;     ///< bytes at the achieved memory bandwidth
  double flops = 0;        ///< 2 m n k batch (gemm, conv), the attention model's count; 0 for memory kernels
  double bytes_B = 0;      ///< memory traffic assumed
  double efficiency = 0;   ///< fraction of the dtype's peak (dense or sparse) this shape's math reaches
  std::string bound;       ///< "math", "memory" or "launch"
  /// What no kernel of this work can beat: max(flops at the datasheet peak of its math, bytes_B at
  /// the datasheet HBM bandwidth). time_s >= floor_s is an invariant (efficiencies are <= 1).
  double floor_s = 0;
};

/// Bytes of one element of a math type: fp64 8, fp32 and tf32 4, fp16 and bf16 2, fp8 and int8 1.
/// std::invalid_argument for unknown names.
double dtype_size_B(const std::string& dtype);

/// Bytes of a 2:4-compressed tensor relative to dense, for elements of `element_B` bytes: the
/// kept half of the values plus a 2-bit index per kept value (fp16: 0.5625, fp32: 0.53125).
inline double sparse_storage_fraction(double element_B) { return 0.5 + 0.5 * 0.25 / element_B; }

/// Why `gpu` cannot run `kernel` (unknown dtype, no math rate for it, no 2:4 sparse rate), or ""
/// when it can. The message names what the GPU does support.
std::string kernel_unavailable(const GpuModel& gpu, const Kernel& kernel);

/// Cost of one kernel; std::invalid_argument when kernel_unavailable() is not empty or the shape
/// is not positive.
KernelCost kernel_cost(const GpuModel& gpu, const ComputeModel& model, const Kernel& kernel);

}  // namespace topsim
