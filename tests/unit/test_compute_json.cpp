// models/compute.json as a file: every constant keyed by architecture and kernel group (never
// by GPU model), and the reader's refusals, each with its exact message.
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "compute/kernel_fit.hpp"
#include "helpers.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("compute: no constant of models/compute.json is keyed by GPU model") {
  // Read the file itself, not the catalog, so that nothing the reader drops goes unseen: every
  // key under compute_models is an architecture, never a GPU, and every "kernels" group is
  // FAMILY/DTYPE with a family and dtype the kernel model knows.
  const Json doc = parse_json_text(read_text(data_path("models/compute.json")), "compute.json");
  const std::vector<std::string>& architectures = known_architectures();
  std::set<std::string> gpu_names;
  for (const auto& [name, gpu] : catalog().gpus()) gpu_names.insert(name);
  REQUIRE(doc.at("compute_models").size() >= 4);
  std::size_t groups = 0;
  for (const auto& model : doc.at("compute_models").items()) {
    INFO(model.key());
    CHECK(std::find(architectures.begin(), architectures.end(), model.key()) != architectures.end());
    CHECK(gpu_names.count(model.key()) == 0);
    for (const auto& field : model.value().items()) CHECK(gpu_names.count(field.key()) == 0);
    if (!model.value().contains("kernels")) continue;
    for (const auto& group : model.value().at("kernels").items()) {
      INFO(group.key());
      ++groups;
      const std::string key = group.key();
      const std::size_t slash = key.find('/');
      REQUIRE(slash != std::string::npos);
      const std::string family = key.substr(0, slash), dtype = key.substr(slash + 1);
      CHECK((family == "gemm" || family == "prefill" || family == "decode"));
      const std::vector<std::string>& dtypes = family == "gemm" ? gemm_dtypes() : attention_dtypes();
      CHECK(std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end());
      CHECK(gpu_names.count(dtype) == 0);
      // Inside a group: the family's parameters and their sources, nothing keyed by anything else.
      const KernelFamily f = family == "gemm" ? KernelFamily::gemm : family == "decode" ? KernelFamily::decode
                                                                                         : KernelFamily::prefill;
      std::set<std::string> allowed = {"sources"};
      for (const KernelParameter& p : kernel_parameters(f)) allowed.insert(p.name);
      for (const auto& entry : group.value().items()) CHECK(allowed.count(entry.key()) == 1);
    }
  }
  CHECK(groups >= 20);  // 25 groups at the time of writing: 6 ampere, 6 ada, 6 hopper, 7 blackwell
}

namespace {

/// One compute model file in a models directory of its own; returns the directory.
std::string compute_dir_with(const std::string& name, const std::string& json) {
  return std::filesystem::path(write_temp("compute-" + name + "/compute.json", json)).parent_path().string();
}

/// A gemm/bf16 group at the family's priors, with the sources calibrate --kernels writes.
std::string prior_gemm_group() {
  std::string out = "{";
  for (const KernelParameter& p : kernel_parameters(KernelFamily::gemm))
    out += "\"" + p.name + "\": " + std::to_string(p.prior) + ", ";
  return out + R"("sources": {"fitted": "f", "files": ["gemm.csv"], "rows": 3, "residual": 0.05}})";
}

/// Ampere with its own constants and a 2:4 path; volta borrowing ampere's constants.
std::string good_compute() {
  return R"({"compute_models": {"ampere": {
  "description": "test", "conv_efficiency": 1, "memory_efficiency": 0.9, "launch": "4us", "sparse_speedup": 1.5,
  "kernels": {"gemm/bf16": )" +
         prior_gemm_group() + R"(},
  "sources": {"conv_efficiency": "c", "memory_efficiency": "m", "launch": "l", "sparse_speedup": "s"}},
 "volta": {"description": "test", "conv_efficiency": 1, "memory_efficiency": 0.9, "launch": "4us",
  "kernels_from": "ampere",
  "sources": {"conv_efficiency": "c", "memory_efficiency": "m", "launch": "l", "kernels_from": "k"}}}})";
}

std::string good_with(const std::string& from, const std::string& to) {
  std::string text = good_compute();
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("compute: compute.json is checked like every model file") {
  Catalog good = load_catalog(compute_dir_with("good", good_compute()));
  CHECK(good.compute("ampere", {}).sparse_speedup == 1.5);
  CHECK(good.compute("volta", {}).sparse_speedup == 0);
  CHECK(good.compute("volta", {}).kernels.at("gemm/bf16").values == good.compute("ampere", {}).kernels.at("gemm/bf16").values);

  // The removed constants of the old model are unknown keys now.
  std::string dir = compute_dir_with("unknown-key", good_with(R"("launch": "4us", "sparse_speedup")",
                                                              R"("launch": "4us", "gemm_efficiency": 0.8, "sparse_speedup")"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/gemm_efficiency: unknown key 'gemm_efficiency' (did you mean "
              "'conv_efficiency'?); valid keys here: "
              "conv_efficiency, description, kernels, kernels_from, launch, memory_efficiency, sources, sparse_speedup");

  dir = compute_dir_with("no-source", good_with(R"("launch": "l", "sparse_speedup": "s")", R"("sparse_speedup": "s")"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sources: no source for parameter 'launch'; every number in models/ "
              "says where it came from");

  dir = compute_dir_with("sparse-no-source", good_with(R"(, "sparse_speedup": "s")", ""));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sources: no source for parameter 'sparse_speedup'; every number "
              "in models/ says where it came from");

  // 2:4 sparsity does at most half the math: the speedup lies in (1, 2].
  dir = compute_dir_with("sparse-one", good_with(R"("sparse_speedup": 1.5)", R"("sparse_speedup": 1)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sparse_speedup: must be in (1, 2], got 1");
  dir = compute_dir_with("sparse-above-two", good_with(R"("sparse_speedup": 1.5)", R"("sparse_speedup": 2.5)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sparse_speedup: must be in [1, 2], got 2.5");

  // kernels_from must name an architecture whose own constants a table timed.
  dir = compute_dir_with("from-nothing", good_with(R"("kernels_from": "ampere")", R"("kernels_from": "hopper")"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/volta/kernels_from: 'hopper' has no kernel constants of its own to lend "
              "(name an architecture whose \"kernels\" a table timed)");
  dir = compute_dir_with("from-self", good_with(R"("kernels_from": "ampere")", R"("kernels_from": "volta")"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/volta/kernels_from: 'volta' has no kernel constants of its own to lend "
              "(name an architecture whose \"kernels\" a table timed)");

  // Keyed by architecture, never by GPU model.
  dir = compute_dir_with("gpu-key", good_with(R"("ampere": {)", R"("a100": {)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/a100: unknown architecture 'a100'; known: ada, ampere, blackwell, hopper, "
              "pascal, turing, volta (compute_models are keyed by architecture)");

  dir = compute_dir_with("launch-unit", good_with(R"("launch": "4us", "sparse)", R"("launch": 4, "sparse)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/launch: expected a string with a unit (e.g. \"1.9us\"), got the "
              "number 4");
}
