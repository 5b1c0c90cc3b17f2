#pragma once
// Kernels as NVIDIA's kernel tables time them (shared/reference/kernels): one GEMM, one prefill
// (context) attention, one decode (generation) attention step. Each family's time is a model of
// the GPU's physics (gemm_model.hpp, attention_model.hpp) with a few constants per
// (architecture, family, dtype), solved by `topsim calibrate --kernels` from the tables and
// stored in models/compute.json ("kernels"). No constant is keyed by GPU model.
#include <string>
#include <vector>

#include "model/catalog.hpp"

namespace topsim {

enum class KernelFamily { gemm, prefill, decode };

/// "gemm", "prefill", "decode": the family's name in models/compute.json keys ("gemm/bf16").
std::string family_name(KernelFamily family);

/// One GEMM as the tables time it: C[m x n] = A[m x k] W^T, W stored [n x k]: A is the
/// activation (m tokens), W the weight, the operand a quantization recipe compresses.
/// dtype (topsim's names of the tables' recipes): bf16, fp16, fp8 (per-tensor scale, the
/// activation quantized on the fly), fp8_block (128-element block scales), nvfp4 (fp4 with an
/// fp8 scale per 16 elements), sq (TensorRT-LLM's SmoothQuant W8A8 plugin: int8 math, per-token
/// scales), int8_wo and int4_wo (weight-only, 16-bit activations); int8 is a plain int8 GEMM
/// (a TensorRT engine's int8 layers), which no table times.
struct GemmShape {
  double m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  double batch = 1;  ///< independent GEMMs of this shape in one kernel (a batched GEMM's tiles share the waves)
  /// How the weight reaches the SMs between calls. 0: from DRAM every call (a workload reads each
  /// layer's weights once per step). > 0: a benchmark replaying the call that rotates this many
  /// weight copies, so weight, activation and output stay in L2 when they fit together.
  /// kReplayWeightCopies: the kernel tables' rc20 collector rule, max(1, min(5, ceil(L2 / weight))).
  /// The A100 1.0.0 table's older collector rotated 5 copies always (collect_gemm.py@e46d9089f:61-118
  /// as shared/reference/kernels/README.md reads it): weight_copies = 5 for its rows.
  double weight_copies = 0;
};

/// GemmShape::weight_copies of the rc20 GEMM collector (collect_gemm.py:176-179 as
/// shared/reference/kernels/README.md reads it): copies = max(1, min(5, ceil(L2 B / weight B))).
constexpr double kReplayWeightCopies = -1;

/// One fused attention call of one layer.
struct AttentionShape {
  KernelFamily phase = KernelFamily::prefill;  ///< prefill or decode
  double batch = 1;     ///< sequences
  double q_len = 1;     ///< prefill: prompt tokens per sequence (isl); decode: 1 (one new token)
  double kv_len = 0;    ///< prefill: q_len (causal, nothing cached); decode: tokens cached (step)
  double heads = 1;     ///< query heads
  double kv_heads = 1;  ///< key/value heads (GQA/MQA: fewer than heads)
  double head_dim = 128;
  std::string dtype = "bf16";     ///< math: bf16, or fp8 (FP8 context FMHA, prefill only)
  std::string kv_dtype = "bf16";  ///< KV cache: bf16 or fp8
  /// Decode: the cache holds K only (TensorRT-LLM's CacheType.SELFKONLY, which the 1.0.0 attention
  /// collector allocated: shared/reference/kernels/README.md, the A100 table). The grouped kernel
  /// then reads K alone; one query head per KV head still reads K and V (the A100 table's rates).
  bool k_only_cache = false;
};

/// One constant a family fits: its key in models/compute.json, what it is, and the range a fit
/// may take it over (bounds are physical: a fraction of a peak stays in (0, 1]).
struct KernelParameter {
  std::string name;         ///< e.g. "sustained_fraction", "overhead_s"
  std::string description;  ///< unit and meaning
  double lower = 0;
  double upper = 0;
  double prior = 0;         ///< starting value of a fit, and the value used when nothing pins it
};

// KernelConstants (the constants of one (architecture, family, dtype), in the order of the
// family's parameters) lives in model/catalog.hpp: ComputeModel holds them.

/// The fitted constants of a family, in order.
const std::vector<KernelParameter>& kernel_parameters(KernelFamily family);

/// "gemm/bf16", "prefill/fp8", "decode/bf16": the key of a constant group in models/compute.json.
std::string kernel_group_key(KernelFamily family, const std::string& dtype);

/// GEMM dtypes in topsim's names (GemmShape::dtype), the one list: the tables' recipes, then the
/// math types kernels of workloads may also ask for (tf32, fp32, fp64).
const std::vector<std::string>& gemm_dtypes();

/// A dtype name as the kernel tables write it (gemm_dtype, attn_dtype, kv_cache_dtype) in topsim's
/// vocabulary: bfloat16 -> bf16, float16 -> fp16; fp8, fp8_block, nvfp4, sq, int8_wo, int4_wo as
/// written; "" for a name neither vocabulary knows. topsim's own names are accepted as well.
std::string dtype_from_table(const std::string& table_name);

/// One kernel of a table: its shape, and its measured time when the table has one.
struct KernelRow {
  KernelFamily family = KernelFamily::gemm;
  GemmShape gemm;            ///< family gemm
  AttentionShape attention;  ///< family prefill or decode
  double measured_s = 0;     ///< 0: not measured
};

/// The dtype that names the row's constant group: the GEMM's dtype, the attention's math dtype.
std::string kernel_row_dtype(const KernelRow& row);

/// The model's time of one row with the constants of its group (gemm_cost or attention_cost).
double predict_kernel_s(const GpuModel& gpu, const KernelConstants& constants, const KernelRow& row);

}  // namespace topsim
