// models/compute.json: per GPU architecture, the kernel model's fitted constants ("kernels", by
// group "gemm/bf16"), the 2:4 sparse speedup, and what streaming and convolutions reach.
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
    // Absent: the architecture has no 2:4 sparse path (kernels asking for one fail). A sparse main
    // loop does at most half the math: (1, 2].
    if (auto sparse = r.optional_number("sparse_speedup", 1, 2, false)) {
      if (!(*sparse > 1)) fail(r.at("sparse_speedup"), "must be in (1, 2], got " + shortest(*sparse));
      m.sparse_speedup = *sparse;
      params.add("sparse_speedup");
    }
    // An architecture no kernel table timed runs with another's kernel constants, as its source
    // says (carried with check rows, or assumed); resolved when the catalog is complete.
    if (auto from = r.optional_string("kernels_from")) {
      m.kernels_from = *from;
      params.add("kernels_from");
    }
    m.conv_efficiency = r.number("conv_efficiency", 0, 1, true);
    params.add("conv_efficiency");
    m.memory_efficiency = r.number("memory_efficiency", 0, 1, true);
    params.add("memory_efficiency");
    m.launch_s = params.quantity(r, "launch", Quantity::time);
    // Absent: no fitted kernel constants of this architecture's own (kernels_from lends them, else
    // its GEMM and attention kernels are refused, naming the missing group).
    // Each group carries its own "sources" (calibrate --kernels writes them with the values).
    if (const Json* kernels = r.optional("kernels")) {
      expect_object(*kernels, r.at("kernels"));
      for (const auto& group : kernels->items())
        read_kernel_group(m, group.key(), group.value(), r.at("kernels").at(group.key()));
    }
  });
}

}  // namespace topsim
