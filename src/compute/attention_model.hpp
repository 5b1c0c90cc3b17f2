#pragma once
// Fused attention from the GPU's physics. Prefill: FlashAttention-style tiles of queries against
// keys, causal, GQA/MQA, by head dimension, quantized into waves over the SMs. Decode: one new
// token per sequence reading its whole (paged) KV cache, one CTA per (sequence, KV head) for
// groups of up to 32 query heads, in waves over the SMs. Constants per (architecture, phase, dtype) from models/compute.json
// "kernels" ("prefill/bf16", "decode/bf16").
#include <string>

#include "compute/kernel_fit.hpp"

namespace topsim {

struct AttentionCost {
  double time_s = 0;
  double math_s = 0;
  double memory_s = 0;
  double flops = 0;    ///< causal prefill: 2 b s^2 n h (QK^T and PV, half the square); decode: 4 b n kv_len h
  double bytes_B = 0;  ///< Q, K, V (or the KV cache) read and O written once
  double floor_s = 0;  ///< max(flops at the dense peak, bytes_B at the datasheet memory bandwidth)
  std::string bound;
};

/// The constants of prefill/<dtype> or decode/<dtype>.
const std::vector<KernelParameter>& attention_parameters(KernelFamily phase);

/// std::invalid_argument for shapes that are not positive, heads not a multiple of kv_heads,
/// an unknown dtype, or constants of the wrong length.
AttentionCost attention_cost(const GpuModel& gpu, const KernelConstants& constants, const AttentionShape& shape);

}  // namespace topsim
