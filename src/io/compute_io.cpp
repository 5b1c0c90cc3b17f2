// models/compute.json: per GPU architecture, the fraction of peak its kernels reach, and the
// kernel model's fitted constants ("kernels", by group "gemm/bf16").
#include "compute/kernel_fit.hpp"
#include "io/model_reader.hpp"

namespace topsim {

namespace {

// The family and dtype a group key names ("gemm/bf16"); InputError at `where` listing what is valid.
KernelFamily group_family(const std::string& key, const SourceRef& where) {
  std::vector<std::string> families;
  std::size_t slash = key.find('/');
  std::string family_text = key.substr(0, slash);
  std::string dtype = slash == std::string::npos ? "" : key.substr(slash + 1);
  for (KernelFamily family : {KernelFamily::gemm, KernelFamily::prefill, KernelFamily::decode}) {
    families.push_back(family_name(family));
    if (family_name(family) != family_text) continue;
    const std::vector<std::string>& dtypes = family == KernelFamily::gemm ? gemm_dtypes() : attention_dtypes();
    if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end())
      fail(where, "unknown dtype '" + dtype + "' in group '" + key + "'; " + family_text + " groups are " +
                      family_text + "/DTYPE with DTYPE one of " + join(dtypes, ", "));
    return family;
  }
  fail(where, "unknown kernel group '" + key + "'; keys are FAMILY/DTYPE with FAMILY one of " + join(families, ", ") +
                  " (e.g. gemm/bf16, prefill/fp8, decode/bf16)");
}

KernelConstantSources read_kernel_sources(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  KernelConstantSources sources;
  sources.fitted = r.string("fitted");
  sources.files = read_array(r, "files", read_string);
  sources.rows = r.integer("rows", 1, 1 << 30);
  sources.residual = r.number("residual", 0, 1e9, false);
  r.finish();
  return sources;
}

// One group: every parameter of its family by name, within its bounds, and where they came from.
void read_kernel_group(ComputeModel& m, const std::string& key, const Json& value, const SourceRef& where) {
  KernelFamily family = group_family(key, where);
  ObjectReader r(value, where);
  KernelConstants constants;
  for (const KernelParameter& p : kernel_parameters(family))
    constants.values.push_back(r.number(p.name, p.lower, p.upper, false));
  m.kernel_sources[key] = read_kernel_sources(r.required("sources"), r.at("sources"));
  m.kernels[key] = constants;
  r.finish();
}

}  // namespace

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
    // Absent: no fitted kernel constants for this architecture (its kernels use the priors).
    // Each group carries its own "sources" (calibrate --kernels writes them with the values).
    if (const Json* kernels = r.optional("kernels")) {
      expect_object(*kernels, r.at("kernels"));
      for (const auto& group : kernels->items())
        read_kernel_group(m, group.key(), group.value(), r.at("kernels").at(group.key()));
    }
  });
}

}  // namespace topsim
