// models/compute.json: per GPU architecture, the fraction of peak its kernels reach.
#include "io/model_reader.hpp"

namespace topsim {

ComputeModel read_compute(const std::string& name, const Json& value, const SourceRef& where) {
  const std::vector<std::string>& architectures = known_architectures();
  if (std::find(architectures.begin(), architectures.end(), name) == architectures.end())
    fail(where, unknown_name_message("architecture", name, architectures) + " (compute_models are keyed by architecture)");
  return read_model<ComputeModel>(name, value, where, [](ObjectReader& r, ComputeModel& m, SourcedParameters& params) {
    m.gemm_efficiency = r.number("gemm_efficiency", 0, 1, true);
    params.add("gemm_efficiency");
    // Absent or 0: the architecture has no 2:4 sparse path (kernels asking for one fail).
    if (auto sparse = r.optional_number("sparse_gemm_efficiency", 0, 1, false)) {
      m.sparse_gemm_efficiency = *sparse;
      params.add("sparse_gemm_efficiency");
    }
    // Absent: fp8 GEMMs reach gemm_efficiency of the fp8 peak (architectures without fp8 math
    // never use it; those with it state it).
    if (auto fp8 = r.optional_number("fp8_gemm_efficiency", 0, 1, true)) {
      m.fp8_gemm_efficiency = *fp8;
      params.add("fp8_gemm_efficiency");
    }
    // Absent: int8 GEMMs (inference engines) reach gemm_efficiency of the int8 peak.
    if (auto int8 = r.optional_number("int8_gemm_efficiency", 0, 1, true)) {
      m.int8_gemm_efficiency = *int8;
      params.add("int8_gemm_efficiency");
    }
    // Absent: the architecture has no fused (flash) attention model; LLM workloads refuse it.
    if (auto attention = r.optional_number("attention_efficiency", 0, 1, true)) {
      m.attention_efficiency = *attention;
      params.add("attention_efficiency");
    }
    m.conv_efficiency = r.number("conv_efficiency", 0, 1, true);
    params.add("conv_efficiency");
    m.tile_m = params.integer(r, "tile_m", 1, 4096);
    m.tile_n = params.integer(r, "tile_n", 1, 4096);
    m.k_half = r.number("k_half", 0, 1e9, false);  // GEMM depth in elements, not a quantity
    params.add("k_half");
    m.memory_efficiency = r.number("memory_efficiency", 0, 1, true);
    params.add("memory_efficiency");
    m.launch_s = params.quantity(r, "launch", Quantity::time);
  });
}

}  // namespace topsim
