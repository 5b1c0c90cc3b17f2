// FP8 training as Transformer Engine runs it (src/llm/fp8_kernels.cpp): which GEMMs run in fp8,
// the cast kernels of one layer per recipe with their bytes derived by hand, delayed scaling's
// amax reduction, the recipe refusals, and an fp8 iteration never faster than its model FLOPs at
// the fp8 peak.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "compute/kernel.hpp"
#include "helpers.hpp"
#include "llm/fp8_kernels.hpp"
#include "llm/iteration.hpp"
#include "llm/layout.hpp"
#include "llm/transformer_math.hpp"
#include "llm_helpers.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

// h 64, a 8 (d 8), kv 2, f 256 GELU; tp 2, b 2, s 16: 32 rows per GEMM; global batch 8 over
// micro-batch 2 x dp 1: 4 micro-batches, so a weight cast costs a quarter per micro-batch.
// The GEMMs (m x n x k) and their operands in elements, X = m k, W = k n, dY = m n:
//   qkv  32 x  48 x  64: X 2048, W 3072, dY 1536
//   proj 32 x  64 x  32: X 1024, W 2048, dY 2048
//   fc1  32 x 128 x  64: X 2048, W 8192, dY 4096
//   fc2  32 x  64 x 128: X 4096, W 8192, dY 2048
LlmLayout fp8_layout(const std::string& recipe) {
  LlmLayout L;
  L.tp = 2;
  L.dp = 1;
  L.micro_batch = 2;
  L.seq_len = 16;
  L.global_batch = 8;
  L.precision = "fp8";
  L.fp8_recipe = recipe;
  return L;
}

std::map<std::string, double> bytes_by_name(const std::vector<NamedKernel>& kernels) {
  std::map<std::string, double> out;
  for (const NamedKernel& k : kernels)
    if (k.kernel.kind == Kernel::Kind::memory) out[k.name] = k.kernel.bytes_B;
  return out;
}

std::map<std::string, std::string> dtype_by_name(const LayerKernels& k) {
  std::map<std::string, std::string> out;
  for (const auto* list : {&k.forward, &k.backward})
    for (const NamedKernel& n : *list) out[n.name] = n.kernel.dtype;
  return out;
}

}  // namespace

TEST_CASE("fp8: the transformer's GEMMs run at the recipe's fp8 type, the rest in bf16", "[llm][fp8]") {
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  for (auto [recipe, gemm] : {std::pair{"delayed", "fp8"}, {"tensorwise", "fp8"}, {"blockwise", "fp8_block"}, {"mxfp8", "mxfp8"}}) {
    INFO(recipe);
    const LlmLayout L = fp8_layout(recipe);
    const auto types = dtype_by_name(layer_kernels(m, L, 0));
    for (const char* name : {"qkv", "proj", "fc1", "fc2", "qkv.dgrad", "qkv.wgrad", "fc2.dgrad", "fc2.wgrad"})
      CHECK(types.at(name) == gemm);
    CHECK(types.at("attention") == "bf16");  // fp8_dot_product_attention False
    CHECK(types.at("norm1") == "bf16");
    CHECK(types.at("act") == "bf16");
    // The LM head is Megatron's own ColumnParallelLinear: bf16.
    CHECK(dtype_by_name(head_kernels(m, L)).at("lm_head") == "bf16");
  }
  // bf16 training has no cast kernels.
  LlmLayout bf16 = fp8_layout("delayed");
  bf16.precision = "bf16";
  for (const auto& [name, bytes] : bytes_by_name(layer_kernels(m, bf16, 0).forward)) CHECK(name.find("cast") == std::string::npos);
}

TEST_CASE("fp8: delayed scaling's casts of one layer, by hand", "[llm][fp8]") {
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  LayerKernels k = layer_kernels(m, fp8_layout("delayed"), 0);
  const auto f = bytes_by_name(k.forward), b = bytes_by_name(k.backward);
  // Two fp8 copies (row-wise and the transpose Hopper's TN-only GEMMs need), no scales, the
  // amax found by the cast itself. The norms before QKV and FC1 write fp8 for bf16: 32 x 64 x
  // (2 read + 1 written) = 6144 B (8192 in bf16); the transpose reads and writes 1 B: 2048 x 2 = 4096.
  CHECK(f.at("norm1") == 6144);
  CHECK(f.at("norm2") == 6144);
  CHECK(f.at("qkv.transpose") == 4096);
  CHECK(f.at("fc1.transpose") == 4096);
  CHECK(f.count("qkv.cast") == 0);
  // Inputs cast alone read 2 B and write 2 x 1 B: proj 1024 x 4, fc2 4096 x 4.
  CHECK(f.at("proj.cast") == 4096);
  CHECK(f.at("fc2.cast") == 16384);
  // Weights once per 4 micro-batches, 4 B per element: qkv 3072 x 4 / 4, fc1 8192 x 4 / 4.
  CHECK(f.at("qkv.weight_cast") == 3072);
  CHECK(f.at("proj.weight_cast") == 2048);
  CHECK(f.at("fc1.weight_cast") == 8192);
  // Output gradients, row- and column-wise: 4 B per element of dY: qkv 1536 x 4, fc1 4096 x 4.
  CHECK(b.at("qkv.grad_cast") == 6144);
  CHECK(b.at("proj.grad_cast") == 8192);
  CHECK(b.at("fc1.grad_cast") == 16384);
  CHECK(b.at("fc2.grad_cast") == 8192);
  CHECK(b.count("qkv.grad_amax") == 0);
  // Sequence parallelism: the norm runs on 32 / 2 = 16 rows: 16 x 64 x 3 = 3072 B.
  LlmLayout sp = fp8_layout("delayed");
  sp.sp = true;
  CHECK(bytes_by_name(layer_kernels(m, sp, 0).forward).at("norm1") == 3072);
}

TEST_CASE("fp8: per-tensor recipes write one copy where the GPU runs non-TN fp8 GEMMs", "[llm][fp8]") {
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  const GpuModel& b200 = test::catalog().gpu("b200", {});  // compute capability 10.0
  const GpuModel& h100 = test::catalog().gpu("h100", {});  // 9.0: TN-only, a transpose
  CHECK(fp8_storage("delayed", &b200).copies == 1);
  CHECK(fp8_storage("tensorwise", &b200).copies == 1);
  CHECK(fp8_storage("delayed", &h100).copies == 2);
  CHECK(fp8_storage("blockwise", &b200).copies == 2);  // block scaling keeps both
  CHECK(fp8_storage("mxfp8", &b200).copies == 2);
  const auto f = bytes_by_name(layer_kernels(m, fp8_layout("delayed"), 0, &b200).forward);
  // No transpose after the fused norm; proj's input: read 2, write 1: 1024 x 3 = 3072 B; the
  // qkv weight 3072 x 3 / 4 = 2304 B.
  CHECK(f.count("qkv.transpose") == 0);
  CHECK(f.at("norm1") == 6144);
  CHECK(f.at("proj.cast") == 3072);
  CHECK(f.at("qkv.weight_cast") == 2304);
}

TEST_CASE("fp8: current scaling adds an amax pass except where the norm finds it", "[llm][fp8]") {
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  LayerKernels k = layer_kernels(m, fp8_layout("tensorwise"), 0);
  const auto f = bytes_by_name(k.forward), b = bytes_by_name(k.backward);
  CHECK(f.at("norm1") == 8192);  // the norm writes bf16 (and the amax)
  CHECK(f.count("qkv.amax") == 0);
  CHECK(f.at("qkv.cast") == 8192);   // 2048 x (2 + 2)
  CHECK(f.at("proj.amax") == 2048);  // 1024 x 2 read
  CHECK(f.at("proj.cast") == 4096);
  CHECK(f.at("fc2.amax") == 8192);   // 4096 x 2: Megatron's activation writes bf16
  // Weights: amax 2 + cast 2 + 2 copies, 6 B: 3072 x 6 / 4 = 4608.
  CHECK(f.at("qkv.weight_cast") == 4608);
  CHECK(b.at("qkv.grad_amax") == 3072);  // 1536 x 2
  CHECK(b.at("qkv.grad_cast") == 6144);
}

TEST_CASE("fp8: block and MX scales add their bytes per copy", "[llm][fp8]") {
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  // Blockwise: an fp32 scale per 128 activation elements: 4 / 128 = 1/32 B per element per copy,
  // two copies: written 2 x (1 + 1/32) = 2.0625 B; qkv's input 2048 x (2 + 2.0625) = 8320 B.
  // Weights: an fp32 scale per 128 x 128: 3072 x (2 + 2 x (1 + 4 / 16384)) / 4 = 3072.375 B.
  const auto block = bytes_by_name(layer_kernels(m, fp8_layout("blockwise"), 0).forward);
  CHECK(block.at("norm1") == 8192);  // not fused
  CHECK(block.at("qkv.cast") == 8320);
  CHECK(block.at("qkv.weight_cast") == Approx(3072.375));
  CHECK(bytes_by_name(layer_kernels(m, fp8_layout("blockwise"), 0).backward).at("qkv.grad_cast") == 6240);  // 1536 x 4.0625
  // MXFP8: one E8M0 byte per 32 elements of every operand, 1/32 B: activations as blockwise;
  // weights 3072 x (2 + 2.0625) / 4 = 3120 B.
  const auto mx = bytes_by_name(layer_kernels(m, fp8_layout("mxfp8"), 0).forward);
  CHECK(mx.at("qkv.cast") == 8320);
  CHECK(mx.at("fc2.cast") == 16640);  // 4096 x 4.0625
  CHECK(mx.at("qkv.weight_cast") == 3120);
}

TEST_CASE("fp8: every fp8 GEMM of an MoE layer gets its casts, the router none", "[llm][fp8]") {
  // Layer 1 is MoE: 4 experts, top 2, expert FFN 16, one shared expert. TE's GroupedLinear runs
  // the experts in fp8 like Linear; the router is Megatron's own GEMM in 16-bit.
  TransformerSpec m = test::make_model(2, 64, 8, 2, 256, 128);
  m.moe = MoeSpec{4, 2, 16, 1, {false, true}};
  for (const char* recipe : {"delayed", "tensorwise", "blockwise", "mxfp8"}) {
    INFO(recipe);
    LayerKernels k = layer_kernels(m, fp8_layout(recipe), 1);
    const auto f = bytes_by_name(k.forward), b = bytes_by_name(k.backward);
    int fp8_gemms = 0;
    for (const NamedKernel& g : k.forward) {
      if (!g.gemm) continue;
      const bool fp8 = g.kernel.dtype != "bf16";
      fp8_gemms += fp8 ? 1 : 0;
      INFO(g.name);
      CHECK(f.count(g.name + ".weight_cast") == (fp8 ? 1u : 0u));
      CHECK(b.count(g.name + ".grad_cast") == (fp8 ? 1u : 0u));
      CHECK(f.count(g.name + ".cast") + f.count(g.name + ".transpose") == (fp8 ? 1u : 0u));
    }
    CHECK(fp8_gemms >= 4);  // qkv, proj and the experts' fc1 and fc2 at least
    CHECK(f.count("router.weight_cast") == 0);
  }
}

TEST_CASE("fp8: delayed scaling's amax all-reduce is a few bytes per chunk", "[llm][fp8]") {
  LlmLayout L = fp8_layout("delayed");
  L.dp = 4;
  // 10 layers x 4 GEMMs: forward 3 amaxes x 4 B each = 480 B, backward 2 x 4 B = 320 B, over
  // tp x dp x cp = 2 x 4 x 1 = 8 ranks.
  Fp8AmaxReduction r = fp8_amax_reduction(L, 10, 4);
  CHECK(r.forward_B == 480);
  CHECK(r.backward_B == 320);
  CHECK(r.group_ranks == 8);
  L.fp8_recipe = "tensorwise";
  CHECK(fp8_amax_reduction(L, 10, 4).forward_B == 0);
}

TEST_CASE("fp8: recipes refused where Transformer Engine refuses them", "[llm][fp8]") {
  const GpuModel& h100 = test::catalog().gpu("h100", {});
  const GpuModel& b200 = test::catalog().gpu("b200", {});
  const GpuModel& a100 = test::catalog().gpu("a100", {});
  Kernel gemm;
  gemm.m = gemm.n = gemm.k = 256;
  gemm.dtype = "mxfp8";
  CHECK_THAT(kernel_unavailable(h100, gemm), Catch::Contains("10.0 or higher required for MXFP8"));
  CHECK(kernel_unavailable(b200, gemm).empty());
  // Consumer Blackwell (12.0): TE runs no MXFP8 there yet.
  CHECK_THAT(kernel_unavailable(test::catalog().gpu("rtx5090", {}), gemm), Catch::Contains("not supported on 12.0+"));
  gemm.dtype = "fp8_block";
  CHECK(kernel_unavailable(h100, gemm).empty());
  CHECK_THAT(kernel_unavailable(a100, gemm), Catch::Contains("no math for fp8_block"));
  // A recipe without fp8 precision.
  TransformerSpec m = test::make_model(4, 64, 8, 2, 256, 128);
  LlmLayout L = fp8_layout("blockwise");
  L.precision = "bf16";
  CHECK_THROWS_WITH(resolve_layout(m, L, 2), Catch::Contains("needs precision fp8"));
}

TEST_CASE("fp8: an iteration is never faster than its FLOPs at the fp8 peak", "[llm][fp8]") {
  TransformerSpec m = test::make_model(8, 1024, 16, 16, 4096, 32000);
  m.seq_len = 1024;
  for (auto [topology, recipe] : {std::pair{"dgx-h100", "delayed"}, {"dgx-h100", "tensorwise"}, {"dgx-h100", "blockwise"},
                                  {"hgx-b200", "mxfp8"}}) {
    INFO(topology << " " << recipe);
    Topology t = test::bundled(topology);
    LlmLayout L = fp8_layout(recipe);
    L.seq_len = 1024;
    L.micro_batch = 1;
    L.global_batch = 16;
    L.dp = 0;
    L = resolve_layout(m, L, 8);
    LlmResult r = simulate_iteration(t, test::catalog(), m, L, {});
    const double peak = t.gpu_model(0).math.at("fp8_tensor").dense_flops_per_s;
    const double flops = iteration_flops(m, L.seq_len, L.global_batch, L.recompute).model;
    CHECK(r.iteration_s >= flops / 8 / peak);
    // And the layer carries cast kernels that the iteration times.
    LayerKernels k = layer_kernels(m, L, 0);
    double cast_B = 0;
    for (const NamedKernel& n : k.forward)
      if (n.name.find("cast") != std::string::npos || n.name.find("transpose") != std::string::npos) cast_B += n.kernel.bytes_B;
    CHECK(cast_B > 0);
  }
  // mxfp8 on Hopper: refused with Transformer Engine's reason.
  LlmLayout mx = fp8_layout("mxfp8");
  mx.seq_len = 1024;
  mx.micro_batch = 1;
  mx.global_batch = 16;
  mx.dp = 0;
  mx = resolve_layout(m, mx, 8);
  CHECK_THROWS_AS(simulate_iteration(test::bundled("dgx-h100"), test::catalog(), m, mx, {}), UsageError);
}
