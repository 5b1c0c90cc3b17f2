// The compute model of one kernel on one GPU: calibration against the one published kernel
// figure, the shape terms (waves, tiles, depth), memory and launch bounds, and its errors. Every
// expected number is derived by hand in the comment next to it, from models/gpus.json and
// models/compute.json (ampere: gemm 0.8060, sparse 0.56, tile 128x256, k_half 64, memory 0.9,
// launch 6.395 us).
#include <catch2/catch.hpp>
#include <stdexcept>

#include "compute/kernel.hpp"
#include "helpers.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

Kernel gemm(double m, double n, double k, const std::string& dtype = "fp16", bool sparse = false) {
  Kernel kernel;
  kernel.m = m;
  kernel.n = n;
  kernel.k = k;
  kernel.dtype = dtype;
  kernel.sparse = sparse;
  return kernel;
}

KernelCost cost(const std::string& gpu_name, const Kernel& kernel) {
  const GpuModel& gpu = catalog().gpu(gpu_name, {});
  return kernel_cost(gpu, catalog().compute(gpu.architecture, {}), kernel);
}

/// The message of the std::invalid_argument that `action` throws, "" if none.
template <typename Action>
std::string invalid_argument(Action&& action) {
  try {
    action();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// One compute model in a models directory of its own; returns the directory.
std::string compute_dir_with(const std::string& name, const std::string& json) {
  return std::filesystem::path(write_temp("compute-" + name + "/compute.json", json)).parent_path().string();
}

const char* kGoodCompute = R"({"compute_models": {"ampere": {
  "description": "test", "gemm_efficiency": 0.8, "conv_efficiency": 1, "tile_m": 128, "tile_n": 256,
  "k_half": 64, "memory_efficiency": 0.9, "launch": "4us",
  "sources": {"gemm_efficiency": "g", "conv_efficiency": "c", "tile_m": "t", "tile_n": "t", "k_half": "k",
              "memory_efficiency": "m", "launch": "l"}}}})";

std::string good_with(const std::string& from, const std::string& to) {
  std::string text = kGoodCompute;
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("compute: the bundled models give every GPU an SM count and a compute model") {
  CHECK(catalog().gpu("a100-80gb", {}).sms == 108);
  CHECK(catalog().gpu("h100", {}).sms == 132);
  for (const auto& [name, gpu] : catalog().gpus()) {
    CHECK(gpu.sms > 0);
    CHECK(catalog().compute_models().count(gpu.architecture) == 1);
  }
  const ComputeModel& ampere = catalog().compute("ampere", {});
  CHECK(ampere.gemm_efficiency == 0.806);
  CHECK(ampere.sparse_gemm_efficiency == 0.56);
  CHECK(ampere.launch_s == Approx(6.395e-6));  // solved on TensorRT's BERT demo (docs/inference.md)
  CHECK(catalog().compute("volta", {}).sparse_gemm_efficiency == 0);  // absent: no sparse path
}

TEST_CASE("compute: A100 80GB fp16 Linear 10240->3072 matches the PyTorch sparsity tutorial") {
  // GEMM m = 3072 (input rows), n = 3072 (out features), k = 10240; flops 2mnk = 1.93274e11.
  // Tiles ceil(3072/128) * ceil(3072/256) = 24 * 12 = 288 on 108 SMs: 3 waves, 288/324 = 0.88889;
  // no padding; depth 10240/10304 = 0.99379. Dense: 0.8060 * 0.88337 = 0.71200 of 312 TFLOPS,
  // 1.93274e11 / 2.22145e14 = 0.8700 ms (measured 0.870). Sparse: depth 10240/10368 = 0.98765
  // (the sparse loop runs twice as fast, its prologue does not), 0.56 * 0.88889 * 0.98765 =
  // 0.49163 of 624 TFLOPS, 1.93274e11 / 3.06777e14 = 0.6300 ms (measured 0.630).
  KernelCost dense = cost("a100-80gb", gemm(3072, 3072, 10240));
  KernelCost sparse = cost("a100-80gb", gemm(3072, 3072, 10240, "fp16", true));
  CHECK(dense.flops == 2.0 * 3072 * 3072 * 10240);
  CHECK(dense.time_s == Approx(0.870e-3).epsilon(0.005));
  CHECK(sparse.time_s == Approx(0.630e-3).epsilon(0.005));
  CHECK(dense.efficiency == Approx(0.806 * 288.0 / 324 * 10240 / 10304));
  CHECK(dense.bound == "math");
  CHECK(sparse.bound == "math");
  CHECK(dense.time_s / sparse.time_s == Approx(1.38).epsilon(0.01));
}

TEST_CASE("compute: a tiny GEMM is launch-bound") {
  // 64x64x64 on A100: the best tile is 64x64 (all of its outputs useful; reuse 32 / 85.33 =
  // 0.375 of the 128x256 tile's, whose outputs would be 1/8 useful), one block on one of 108 SMs
  // (k = 64 is too shallow to split), depth 64/(64+64): efficiency 0.806 / 108 * 0.375 * 0.5 =
  // 1.3993e-3; math 524288 flops / (312e12 * 1.3993e-3) = 1.2009 us; memory
  // 3 * 4096 * 2 B / (1555e9 * 0.9) = 0.018 us; both under the 6.395 us launch.
  KernelCost c = cost("a100", gemm(64, 64, 64));
  CHECK(c.math_s == Approx(1.2009e-6).epsilon(1e-3));
  CHECK(c.efficiency == Approx(0.806 / 108 * 0.375 * 0.5));
  CHECK(c.time_s == Approx(6.395e-6));
  CHECK(c.bound == "launch");
}

TEST_CASE("compute: a GEMM of depth 1 and a streaming kernel are memory-bound") {
  // 8192x8192x1 fp16 on A100 40GB: bytes (8192*1 + 1*8192 + 8192*8192) * 2 = 134250496 B at
  // 1555 GB/s * 0.9 = 1.3995e12 B/s: 95.927 us. Math: 2048 tiles in 19 waves (0.99805), depth
  // 1/65: efficiency 0.012376, 1.34218e8 flops / (312e12 * 0.012376) = 34.76 us.
  KernelCost thin = cost("a100", gemm(8192, 8192, 1));
  CHECK(thin.bytes_B == 134250496);
  CHECK(thin.memory_s == Approx(134250496 / (1555e9 * 0.9)));
  CHECK(thin.memory_s == Approx(95.927e-6).epsilon(1e-4));
  CHECK(thin.math_s == Approx(34.76e-6).epsilon(1e-3));
  CHECK(thin.time_s == thin.memory_s);
  CHECK(thin.bound == "memory");

  // 1 GiB streamed on A100 40GB: 1073741824 / 1.3995e12 = 767.23 us, no flops.
  Kernel copy;
  copy.kind = Kernel::Kind::memory;
  copy.bytes_B = 1073741824;
  KernelCost c = cost("a100", copy);
  CHECK(c.time_s == Approx(1073741824 / (1555e9 * 0.9)));
  CHECK(c.time_s == Approx(767.23e-6).epsilon(1e-4));
  CHECK(c.flops == 0);
  CHECK(c.efficiency == 0);
  CHECK(c.bound == "memory");
}

TEST_CASE("compute: one tile more than the SMs takes a second wave") {
  // m = 128*108 = 13824, n = 256: 108 tiles, one full wave. m = 128*109 = 13952: 109 tiles, two
  // waves of 108 SMs, utilisation 109/216 = 0.50463. Math time is proportional to tiles over
  // utilisation, i.e. to waves: the 109-tile GEMM takes exactly twice the 108-tile one.
  KernelCost full = cost("a100", gemm(128 * 108, 256, 8192));
  KernelCost spill = cost("a100", gemm(128 * 109, 256, 8192));
  CHECK(full.efficiency == Approx(0.806 * 8192 / 8256));
  CHECK(spill.efficiency == Approx(0.806 * 109.0 / 216 * 8192 / 8256));
  CHECK(spill.math_s / full.math_s == Approx(2));
  // batch multiplies tiles: 108 tiles of 128x256 as 108 GEMMs of one tile each is one wave.
  Kernel batched = gemm(128, 256, 8192);
  batched.batch = 108;
  CHECK(cost("a100", batched).math_s == Approx(full.math_s));
  // padding and split-K: 129 x 256 x 8192. 64x128 tiles: 3 x 2 = 6 tiles, 129/192 of their rows
  // useful, reuse 42.67 / 85.33 = 0.5; with 6 tiles for 108 SMs, k splits into
  // min(108 / 6, 8192 / (9 * 64)) = 14 slices of depth 585.14: 84 blocks in one wave.
  // 0.806 * 84/108 * 129/192 * 585.14/649.14 * 0.5 = 0.18983, just ahead of 64x64 tiles
  // (12 tiles split 9 ways, 108 blocks: 0.806 * 129/192 * 910.2/974.2 * 0.375 = 0.18973) and well
  // ahead of 128x256 (2 tiles, 28 blocks: 0.806 * 28/108 * 129/256 * 585.14/649.14 = 0.09492).
  const double depth = 8192.0 / 14;
  CHECK(cost("a100", gemm(129, 256, 8192)).efficiency ==
        Approx(0.806 * 84.0 / 108 * 129.0 / 192 * depth / (depth + 64) * 0.5));
}

TEST_CASE("compute: 2:4 sparse weights are stored as 0.5625 of their fp16 bytes") {
  // fp16: half the values plus a 2-bit index per kept value, 0.5 + 0.5 * 2/16 = 0.5625 of B.
  // 4096^3: dense (3 * 4096^2) * 2 = 100663296 B; sparse (2 + 0.5625) * 4096^2 * 2 = 85983232 B.
  CHECK(cost("a100", gemm(4096, 4096, 4096)).bytes_B == 100663296);
  CHECK(cost("a100", gemm(4096, 4096, 4096, "fp16", true)).bytes_B == 85983232);
  // int8: 0.5 + 0.5 * 2/8 = 0.625 of B's 4096^2 bytes: (2 + 0.625) * 4096^2 = 44040192 B.
  CHECK(cost("a100", gemm(4096, 4096, 4096, "int8", true)).bytes_B == 44040192);
  // bytes_B given by the caller replaces the estimate.
  Kernel given = gemm(4096, 4096, 4096);
  given.bytes_B = 1e9;
  CHECK(cost("a100", given).bytes_B == 1e9);
}

TEST_CASE("compute: each dtype runs at its tensor rate where the GPU has one") {
  // peak = flops / (math_s * efficiency): fp64 on A100 uses fp64_tensor (19.5 TFLOPS), fp16 on
  // P100 (no tensor cores) its fp16 vector rate (21.2 TFLOPS), fp16 on V100 fp16_tensor (125).
  auto peak = [](const std::string& gpu, const std::string& dtype) {
    KernelCost c = cost(gpu, gemm(4096, 4096, 4096, dtype));
    return c.flops / (c.math_s * c.efficiency);
  };
  CHECK(peak("a100", "fp64") == Approx(19.5e12));
  CHECK(peak("a100", "fp32") == Approx(19.5e12));
  CHECK(peak("a100", "tf32") == Approx(156e12));
  CHECK(peak("p100", "fp16") == Approx(21.2e12));
  CHECK(peak("v100", "fp16") == Approx(125e12));
  CHECK(peak("h100", "fp8") == Approx(1979e12));
  CHECK(dtype_size_B("fp64") == 8);
  CHECK(dtype_size_B("tf32") == 4);
  CHECK(dtype_size_B("bf16") == 2);
  CHECK(dtype_size_B("int8") == 1);
}

TEST_CASE("compute: a convolution runs at conv_efficiency of its GEMM") {
  const GpuModel& a100 = catalog().gpu("a100", {});
  ComputeModel model = catalog().compute("ampere", {});
  model.conv_efficiency = 0.5;
  Kernel conv = gemm(4096, 4096, 4096);
  conv.kind = Kernel::Kind::conv;
  CHECK(kernel_cost(a100, model, conv).math_s == Approx(2 * kernel_cost(a100, model, gemm(4096, 4096, 4096)).math_s));
}

TEST_CASE("compute: kernels a GPU cannot run name what it can") {
  const GpuModel& v100 = catalog().gpu("v100", {});
  const std::string no_sparse = "v100 has no 2:4 sparse math for fp16 (2:4 sparse math: none; dense: fp16, fp32, fp64)";
  CHECK(kernel_unavailable(v100, gemm(64, 64, 64, "fp16", true)) == no_sparse);
  CHECK(invalid_argument([] { cost("v100", gemm(64, 64, 64, "fp16", true)); }) == no_sparse);
  CHECK(kernel_unavailable(v100, gemm(64, 64, 64, "bf16")) ==
        "v100 has no math for bf16 (dense: fp16, fp32, fp64; 2:4 sparse math: none)");
  CHECK(kernel_unavailable(v100, gemm(64, 64, 64, "fp17")) ==
        "unknown dtype 'fp17' (did you mean 'fp16'?); known: bf16, fp16, fp32, fp64, fp8, int8, tf32 (v100 runs "
        "dense: fp16, fp32, fp64)");
  CHECK(kernel_unavailable(catalog().gpu("a100", {}), gemm(64, 64, 64, "fp8")) ==
        "a100 has no math for fp8 (dense: bf16, fp16, fp32, fp64, int8, tf32; 2:4 sparse math: bf16, fp16, int8, tf32)");
  CHECK(kernel_unavailable(v100, gemm(64, 64, 64)) == "");
  CHECK(invalid_argument([] { dtype_size_B("complex64"); }) ==
        "unknown dtype 'complex64'; known: bf16, fp16, fp32, fp64, fp8, int8, tf32");
  CHECK(invalid_argument([] { cost("a100", gemm(0, 64, 64)); }) == "a GEMM needs m, n, k and batch > 0");
  // A GPU whose rate allows 2:4 under a compute model without a sparse efficiency.
  ComputeModel no_sparse_model = catalog().compute("ampere", {});
  no_sparse_model.sparse_gemm_efficiency = 0;
  const GpuModel& a100 = catalog().gpu("a100", {});
  CHECK(invalid_argument([&] { kernel_cost(a100, no_sparse_model, gemm(64, 64, 64, "fp16", true)); }) ==
        "the ampere compute model has no sparse_gemm_efficiency (no 2:4 sparse path)");
}

TEST_CASE("compute: compute.json is checked like every model file") {
  Catalog good = load_catalog(compute_dir_with("good", kGoodCompute));
  CHECK(good.compute("ampere", {}).tile_n == 256);
  CHECK(good.compute("ampere", {}).sparse_gemm_efficiency == 0);

  std::string dir = compute_dir_with("unknown-key", good_with(R"("k_half": 64)", R"("k_half": 64, "tile_k": 32)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/tile_k: unknown key 'tile_k' (did you mean 'tile_m'?); valid keys "
              "here: attention_efficiency, conv_efficiency, description, fp8_gemm_efficiency, gemm_efficiency, "
              "int8_gemm_efficiency, k_half, launch, memory_efficiency, sources, sparse_gemm_efficiency, tile_m, tile_n");

  dir = compute_dir_with("no-source", good_with(R"(, "launch": "l")", ""));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sources: no source for parameter 'launch'; every number in models/ "
              "says where it came from");

  dir = compute_dir_with("sparse-no-source",
                         good_with(R"("conv_efficiency": 1,)", R"("conv_efficiency": 1, "sparse_gemm_efficiency": 0.5,)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/sources: no source for parameter 'sparse_gemm_efficiency'; every "
              "number in models/ says where it came from");

  dir = compute_dir_with("too-efficient", good_with(R"("gemm_efficiency": 0.8)", R"("gemm_efficiency": 1.2)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/gemm_efficiency: must be in (0, 1], got 1.2");

  dir = compute_dir_with("arch", good_with(R"("ampere")", R"("amper")"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/amper: unknown architecture 'amper' (did you mean 'ampere'?); known: "
              "ada, ampere, blackwell, hopper, pascal, turing, volta (compute_models are keyed by architecture)");

  dir = compute_dir_with("launch-unit", good_with(R"("launch": "4us")", R"("launch": 4)"));
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/compute.json:/compute_models/ampere/launch: expected a string with a unit (e.g. \"1.9us\"), got the "
              "number 4");
}

TEST_CASE("compute: fused attention at attention_efficiency, fp8 GEMMs at fp8_gemm_efficiency", "[compute]") {
  const GpuModel& h100 = catalog().gpu("h100", {});
  const ComputeModel& hopper = catalog().compute("hopper", {});
  Kernel attention;
  attention.kind = Kernel::Kind::attention;
  attention.m = 4096;  // queries
  attention.n = 2048;  // keys (a causal half of 4096)
  attention.k = 128;   // head dimension
  attention.batch = 32;
  attention.dtype = "bf16";
  KernelCost c = kernel_cost(h100, hopper, attention);
  // 4 m n k batch = 4 x 4096 x 2048 x 128 x 32 = 1.37438953472e11 FLOP (scores and context).
  CHECK(c.flops == Approx(1.37438953472e11));
  // At the bf16 dense peak, 989.5 TFLOP/s, times the architecture's attention efficiency.
  CHECK(c.math_s == Approx(1.37438953472e11 / (989.5e12 * hopper.attention_efficiency)));
  // Q, K, V and O once: 2 (m + n) k batch x 2 B = 2 x 6144 x 128 x 32 x 2 = 100,663,296 B.
  CHECK(c.bytes_B == Approx(100663296.0));
  CHECK(c.bound == "math");

  // The same GEMM in fp8 and bf16 differ in peak (1979 against 989.5 TFLOP/s) and in the fitted
  // fraction of it; the shape utilisation is the same.
  Kernel gemm;
  gemm.m = gemm.n = gemm.k = 8192;
  gemm.dtype = "bf16";
  KernelCost bf16 = kernel_cost(h100, hopper, gemm);
  gemm.dtype = "fp8";
  KernelCost fp8 = kernel_cost(h100, hopper, gemm);
  CHECK(fp8.efficiency / bf16.efficiency == Approx(hopper.fp8_gemm_efficiency / hopper.gemm_efficiency));
  CHECK(bf16.math_s / fp8.math_s == Approx(1979.0 / 989.5 * hopper.fp8_gemm_efficiency / hopper.gemm_efficiency));

  // An architecture without the fused-attention model refuses attention kernels.
  ComputeModel none = hopper;
  none.attention_efficiency = 0;
  CHECK_THROWS_AS(kernel_cost(h100, none, attention), std::invalid_argument);
}
