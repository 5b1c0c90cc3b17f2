#include "compute/kernel_fit.hpp"

#include <stdexcept>

#include "compute/attention_model.hpp"
#include "compute/gemm_model.hpp"

namespace topsim {

std::string family_name(KernelFamily family) {
  switch (family) {
    case KernelFamily::gemm: return "gemm";
    case KernelFamily::prefill: return "prefill";
    case KernelFamily::decode: return "decode";
  }
  return "";
}

const std::vector<KernelParameter>& kernel_parameters(KernelFamily family) {
  return family == KernelFamily::gemm ? gemm_parameters() : attention_parameters(family);
}

std::string kernel_group_key(KernelFamily family, const std::string& dtype) { return family_name(family) + "/" + dtype; }

const std::vector<std::string>& gemm_dtypes() {
  static const std::vector<std::string> dtypes = {"bf16", "fp16", "fp8", "fp8_block", "nvfp4", "sq", "int8_wo", "int4_wo", "int8", "tf32", "fp32", "fp64"};
  return dtypes;
}

std::string dtype_from_table(const std::string& table_name) {
  // The tables' names (shared/reference/kernels/README.md, "dtype meanings").
  if (table_name == "bfloat16") return "bf16";
  if (table_name == "float16") return "fp16";
  for (const std::string& dtype : gemm_dtypes())
    if (dtype == table_name) return dtype;
  return "";
}

std::string kernel_row_dtype(const KernelRow& row) {
  return row.family == KernelFamily::gemm ? row.gemm.dtype : row.attention.dtype;
}

double predict_kernel_s(const GpuModel& gpu, const KernelConstants& constants, const KernelRow& row) {
  if (row.family == KernelFamily::gemm) return gemm_cost(gpu, constants, row.gemm).time_s;
  if (row.attention.phase != row.family)
    throw std::invalid_argument("an attention row's phase differs from its family");
  return attention_cost(gpu, constants, row.attention).time_s;
}

}  // namespace topsim
