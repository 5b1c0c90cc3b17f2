// Inference: a MIG instance's share of a GPU, a decode step's time as the bytes it reads over the
// bandwidth, a 2:4 sparse GEMM's gain at a large and a small shape, and serving errors. Models
// are built here, not read from models/, so each expected number follows from the numbers below.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "compute/mig.hpp"
#include "helpers.hpp"
#include "infer/inference.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

/// An A100 40GB as the datasheet and the MIG User Guide give it: 108 SMs, 312 TFLOPS fp16 dense
/// and 624 sparse, 624 TOPS int8 dense, 1555 GB/s, 40 GB; eight memory slices; 1g.5gb is 14 SMs
/// and one memory slice, up to 7 instances.
GpuModel a100() {
  GpuModel g;
  g.name = "a100";
  g.architecture = "ampere";
  g.sms = 108;
  g.memory_B = 40e9;
  g.memory_Bps = 1555e9;
  g.math["fp16_tensor"] = MathRate{312e12, 624e12};
  g.math["int8_tensor"] = MathRate{624e12, 1248e12};
  g.tdp_W = 400;
  g.mig_memory_slices = 8;
  g.mig_profiles.push_back(MigProfile{"1g.5gb", 14, 5e9, 1, 7});
  g.mig_profiles.push_back(MigProfile{"7g.40gb", 98, 40e9, 8, 1});
  return g;
}

ComputeModel ampere() {
  ComputeModel c;
  c.name = "ampere";
  c.gemm_efficiency = 0.806;
  c.sparse_gemm_efficiency = 0.56;
  c.attention_efficiency = 0.6;
  c.tile_m = 128;
  c.tile_n = 256;
  c.k_half = 64;
  c.memory_efficiency = 0.9;
  c.launch_s = 4e-6;
  return c;
}

InferenceFrameworkModel engine() {
  InferenceFrameworkModel f;
  f.name = "engine";
  f.fuses_epilogues = true;
  f.fused_attention = true;
  return f;
}

}  // namespace

TEST_CASE("a MIG 1g instance has its SM share of the math and its memory-slice share of the bandwidth", "[infer]") {
  GpuModel one = mig_instance(a100(), parse_mig("1g.5gb"));
  CHECK(one.name == "a100/1g.5gb");
  CHECK(one.sms == 14);
  // 312e12 x 14 / 108 = 40.444e12 FLOP/s dense fp16; 624e12 x 14 / 108 = 80.889e12 sparse.
  CHECK(one.math.at("fp16_tensor").dense_flops_per_s == Approx(40.4444e12).epsilon(1e-5));
  CHECK(one.math.at("fp16_tensor").sparse_flops_per_s == Approx(80.8889e12).epsilon(1e-5));
  // One of eight memory slices: 1555e9 / 8 = 194.375e9 B/s; 5 GB of memory.
  CHECK(one.memory_Bps == Approx(194.375e9));
  CHECK(one.memory_B == Approx(5e9));
  CHECK(one.nvlink_count == 0);
  CHECK_FALSE(one.peer_over_pcie);

  MigRequest seven = parse_mig("1g.5gbx7");
  CHECK(seven.profile == "1g.5gb");
  CHECK(seven.instances == 7);
  CHECK_NOTHROW(mig_instance(a100(), seven));
  CHECK_THROWS_WITH(mig_instance(a100(), parse_mig("1g.5gbx8")), Catch::Contains("at most 7"));
  CHECK_THROWS_WITH(mig_instance(a100(), parse_mig("2g.10gb")),
                    Catch::Contains("1g.5gb") && Catch::Contains("7g.40gb"));
}

TEST_CASE("a decode step of a small model on a bandwidth-bound GPU takes its bytes over the bandwidth", "[infer]") {
  // Math so fast and launches so short that every kernel is memory-bound; streaming at 100%.
  GpuModel gpu = a100();
  gpu.math["fp16_tensor"] = MathRate{1e21, 0};
  gpu.memory_Bps = 1e12;
  ComputeModel c = ampere();
  c.memory_efficiency = 1;
  c.launch_s = 0;
  TransformerSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 100;
  InferenceShape shape;
  shape.precision = "fp16";  // 2 bytes an element
  shape.batch = 1;
  InferencePass step = transformer_decode_step(m, engine(), shape, 100);
  // Bytes, batch 1 (one token), context 100:
  //   embedding 1 x 1024 x 2 accesses x 2 B                        =      4,096
  //   per layer: qkv   (1x1024 + 1024x3072 + 1x3072) x 2           =  6,299,648
  //              attention K,V 100 x 2 x 8 x 128 x 2 + Q,O 2x8x128x2 =   413,696
  //              proj  (1024 + 1024x1024 + 1024) x 2               =  2,101,248
  //              two skip-layernorms 1024 x 3 x 2 each             =     12,288
  //              fc1   (1024 + 1024x4096 + 4096) x 2               =  8,398,848
  //              fc2   (4096 + 4096x1024 + 1024) x 2               =  8,398,848
  //              layer total                                       = 25,624,576
  //   final norm 1024 x 2 x 2                                      =      4,096
  //   LM head (1024 + 1024x32000 + 32000) x 2                      = 65,602,048
  //   sum = 4,096 + 2 x 25,624,576 + 4,096 + 65,602,048            = 116,859,392 B
  // at 1e12 B/s: 116.859392 us.
  PassTime t = time_pass(gpu, c, engine(), step, {});
  CHECK(t.math_s == Approx(0).margin(1e-12));
  CHECK(t.memory_s == Approx(116.859392e-6).epsilon(1e-9));
  CHECK(t.total_s() == Approx(116.859392e-6).epsilon(1e-9));
  // Streaming at the datasheet bandwidth, the pass sits on its floor (the same bytes at 1e12 B/s);
  // at half the bandwidth it takes twice as long and the floor stays where the datasheet puts it.
  CHECK(t.floor_s == Approx(116.859392e-6).epsilon(1e-9));
  c.memory_efficiency = 0.5;
  PassTime slow = time_pass(gpu, c, engine(), step, {});
  CHECK(slow.total_s() == Approx(2 * 116.859392e-6).epsilon(1e-9));
  CHECK(slow.floor_s == Approx(116.859392e-6).epsilon(1e-9));
  // The KV cache of 100 tokens: 2 x 2 layers x 8 x 128 x 100 x 2 B = 819,200 B.
  CHECK(kv_cache_B(m, shape, 100) == Approx(819200));
}

TEST_CASE("a 2:4 sparse GEMM gains near the ceiling at a large shape and nothing at a small one", "[infer]") {
  const GpuModel gpu = a100();
  const ComputeModel c = ampere();
  Kernel k;
  k.dtype = "fp16";
  // Large: m = n = 3072, k = 10240 (the PyTorch tutorial's Linear). 288 tiles of 128x256 on 108
  // SMs in 3 waves (0.88889) either way; depth 10240 / (10240 + 64) = 0.993789 dense and
  // 10240 / (10240 + 128) = 0.987654 sparse (the sparse loop runs twice as fast, its prologue
  // does not). Gain = (624 x 0.56 x 0.987654) / (312 x 0.806 x 0.993789) = 1.381007.
  k.m = 3072;
  k.n = 3072;
  k.k = 10240;
  const double dense_s = kernel_cost(gpu, c, k).time_s;
  k.sparse = true;
  const double sparse_s = kernel_cost(gpu, c, k).time_s;
  CHECK(dense_s / sparse_s == Approx(1.381007).epsilon(1e-5));
  // BERT-large's QKV at batch 1, sequence 128: m = 128, n = 3072, k = 1024. Of the six tiles the
  // best is 64x64: 96 tiles on 108 SMs (0.888889), reuse (64x64/128) / (128x256/384) = 0.375,
  // depth 1024 / 1088 = 0.941176 dense and 1024 / 1152 = 0.888889 sparse (no split-K: k is under
  // 9 k_half). Math 2 x 128 x 3072 x 1024 = 8.053e8 FLOP: dense at 312e12 x 0.806 x 0.313725 =
  // 10.21 us, sparse at 624e12 x 0.56 x 0.296296 = 7.78 us, both above their memory times (7.34 MB
  // dense, 4.59 MB sparse at 1.3995e12 B/s: 5.24 and 3.28 us) and the 4 us launch. Gain =
  // (624 x 0.56 x 0.888889) / (312 x 0.806 x 0.941176) = 1.312377: the depth term costs the
  // sparse kernel more at a shallow k.
  k.m = 128;
  k.n = 3072;
  k.k = 1024;
  k.sparse = false;
  const KernelCost mid_dense = kernel_cost(gpu, c, k);
  k.sparse = true;
  const KernelCost mid_sparse = kernel_cost(gpu, c, k);
  CHECK(mid_dense.bound == "math");
  CHECK(mid_sparse.bound == "math");
  CHECK(mid_dense.time_s / mid_sparse.time_s == Approx(1.312377).epsilon(1e-5));
  // A tiny GEMM (m = 1, n = k = 64: 8,192 FLOP, 16 KB) runs at the 4 us launch floor either way:
  // no gain at all.
  k.m = 1;
  k.n = 64;
  k.k = 64;
  k.sparse = false;
  const double tiny_dense_s = kernel_cost(gpu, c, k).time_s;
  k.sparse = true;
  const double tiny_sparse_s = kernel_cost(gpu, c, k).time_s;
  CHECK(tiny_dense_s == Approx(4e-6));
  CHECK(tiny_sparse_s == Approx(4e-6));
}

TEST_CASE("serving refuses what cannot run and says why", "[infer]") {
  const Catalog& catalog = test::catalog();
  InferenceRequest r;
  r.model = "bert-large";
  r.shape.precision = "int8";
  r.shape.batch = 1;
  r.shape.seq = 128;
  // A MIG profile the GPU does not have: the message lists the ones it has.
  r.mig = parse_mig("1g.5gb");
  CHECK_THROWS_WITH(serve(catalog, catalog.gpu("a100-80gb", {}), r, {}), Catch::Contains("1g.10gb"));
  // MIG instances have no peer access: no tensor parallelism across them.
  r.shape.tp = 2;
  CHECK_THROWS_WITH(serve(catalog, catalog.gpu("a100-80gb", {}), r, {}), Catch::Contains("peer-to-peer"));
  r.shape.tp = 1;
  r.mig = {};
  // V100 has no 2:4 sparse tensor cores (and no int8 tensor math).
  r.shape.precision = "fp16";
  r.shape.sparse = true;
  CHECK_THROWS_WITH(serve(catalog, catalog.gpu("v100", {}), r, {}), Catch::Contains("2:4"));
  // A model that does not fit is a result, not an error.
  r.model = "llama2-70b";
  r.shape.sparse = false;
  r.shape.seq = 2048;
  InferenceResult big = serve(catalog, catalog.gpu("a100", {}), r, {});
  CHECK_FALSE(big.fits);
  CHECK(big.weights_B > 40e9);
}

namespace {

/// A two-layer encoder (BERT-style: bidirectional attention, a QA head) of hidden 1024, 8 heads
/// of 128, FFN 4096, 512 learned positions.
TransformerSpec tiny_encoder() {
  TransformerSpec m;
  m.name = "tiny-encoder";
  m.encoder = true;
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 4096;
  m.vocab = 30522;
  m.seq_len = 512;
  return m;
}

const InferenceKernel& kernel_named(const InferencePass& pass, const std::string& name) {
  for (const InferenceKernel& k : pass.kernels)
    if (k.name == name) return k;
  throw std::logic_error("no kernel " + name);
}

}  // namespace

TEST_CASE("a packed batch runs its GEMMs over the sum of the lengths and attention at each length", "[infer]") {
  InferenceShape shape;
  shape.precision = "fp16";
  shape.batch = 2;
  shape.seq = 384;
  shape.lengths.where = SourceRef{"lengths.json", ""};
  shape.lengths.lengths = {{100, 1}, {200, 1}};  // E[s] = 150, E[s^2] = (100^2 + 200^2) / 2 = 25,000
  InferenceFrameworkModel packing = engine();
  packing.packs_sequences = true;
  const InferencePass packed = transformer_forward(tiny_encoder(), packing, shape);
  // A batch of lengths {100, 200} packed: GEMMs of 100 + 200 = 300 rows (batch 2 x E[s] 150).
  CHECK(kernel_named(packed, "qkv").kernel.m == Approx(300));
  CHECK(kernel_named(packed, "fc1").kernel.m == Approx(300));
  CHECK(kernel_named(packed, "qa_head").kernel.m == Approx(300));
  // Attention, per head: 100^2 + 200^2 = 50,000 query-key pairs, as one kernel of 2 sequences
  // at the root mean square length sqrt(25,000) = 158.114; flops 4 x 50,000 x 128 x 8 heads =
  // 204.8e6 per layer, the sum of the two sequences' own (4 x 100^2 x 128 x 8 = 40.96e6 and
  // 4 x 200^2 x 128 x 8 = 163.84e6); Q, K, V, O of the 300 tokens: 4 x 300 x 8 x 128 x 2 B =
  // 2,457,600 B.
  const Kernel& attention = kernel_named(packed, "attention").kernel;
  CHECK(attention.m == Approx(158.113883));
  CHECK(attention.n == Approx(158.113883));
  CHECK(4 * attention.m * attention.n * attention.k * attention.batch == Approx(204.8e6));
  CHECK(attention.bytes_B == Approx(2457600));

  // The same lengths without packing: every sequence padded to the 384 the engine takes, GEMMs
  // of 2 x 384 = 768 rows, attention 384 x 384 per head.
  const InferencePass padded = transformer_forward(tiny_encoder(), engine(), shape);
  CHECK(kernel_named(padded, "qkv").kernel.m == Approx(768));
  CHECK(kernel_named(padded, "attention").kernel.m == Approx(384));

  // Packed on a GPU whose fp16 runs at 100e12 FLOP/s, math-bound at 60% for attention: 2 layers
  // x 204.8e6 / (100e12 x 0.6) = 6.8267 us, against the padded 2 x (4 x 2 x 384^2 x 128 x 8) /
  // 60e12 = 2 x 1,207,959,552 / 60e12 = 40.265 us.
  GpuModel gpu = a100();
  gpu.math["fp16_tensor"] = MathRate{100e12, 0};
  gpu.memory_Bps = 1e18;  // no memory time
  ComputeModel c = ampere();
  c.launch_s = 0;
  const KernelCost packed_cost = kernel_cost(gpu, c, attention);
  CHECK(2 * packed_cost.time_s == Approx(6.826667e-6).epsilon(1e-6));
  const KernelCost padded_cost = kernel_cost(gpu, c, kernel_named(padded, "attention").kernel);
  CHECK(2 * padded_cost.time_s == Approx(40.265318e-6).epsilon(1e-6));

  // A sequence longer than the engine takes, and a distribution on a decoder, are refused.
  shape.lengths.lengths = {{400, 1}};
  CHECK_THROWS_AS(transformer_forward(tiny_encoder(), packing, shape), InputError);
  shape.lengths.lengths = {{100, 1}};
  TransformerSpec decoder = tiny_encoder();
  decoder.encoder = false;
  CHECK_THROWS_WITH(transformer_forward(decoder, packing, shape), Catch::Contains("encoders only"));
}

TEST_CASE("an fp32 model's convolutions run as tf32 where the framework's defaults say so", "[infer]") {
  // An A100's fp32 vector rate 19.5e12 and tf32 tensor rate 156e12 FLOP/s (datasheet).
  GpuModel gpu = a100();
  gpu.math["fp32"] = MathRate{19.5e12, 0};
  gpu.math["tf32_tensor"] = MathRate{156e12, 312e12};
  InferencePass pass;
  Kernel conv;
  conv.kind = Kernel::Kind::conv;
  conv.m = conv.n = conv.k = 4096;
  conv.dtype = "fp32";
  Kernel linear = conv;
  linear.kind = Kernel::Kind::gemm;
  Kernel norm;
  norm.kind = Kernel::Kind::memory;
  norm.dtype = "fp32";
  norm.bytes_B = 1e6;
  pass.kernels = {{"conv", conv, 1}, {"fc", linear, 1}, {"norm", norm, 1}};
  // PyTorch 1.12 and later: cudnn.allow_tf32 True, cuda.matmul.allow_tf32 False.
  InferenceFrameworkModel pytorch = engine();
  pytorch.tf32_convolutions = true;
  pytorch.tf32_matmuls = false;
  InferencePass eager = pass;
  apply_precision_defaults(eager, pytorch, gpu, true);
  CHECK(eager.kernels[0].kernel.dtype == "tf32");
  CHECK(eager.kernels[1].kernel.dtype == "fp32");
  CHECK(eager.kernels[2].kernel.dtype == "fp32");
  // The 4096^3 convolution is math-bound either way (1.37e11 FLOP; 201 MB at 1.4e12 B/s is 0.14
  // ms) and its shape utilisation does not depend on the dtype: tf32 makes it 156 / 19.5 = 8x
  // faster.
  const ComputeModel c = ampere();
  CHECK(kernel_cost(gpu, c, pass.kernels[0].kernel).time_s / kernel_cost(gpu, c, eager.kernels[0].kernel).time_s ==
        Approx(8));
  // TensorRT's kTF32 (on by default) covers matmuls too; --no-tf32, or a GPU without tf32 tensor
  // cores, keeps everything on the fp32 units.
  InferenceFrameworkModel trt = pytorch;
  trt.tf32_matmuls = true;
  InferencePass engine_pass = pass;
  apply_precision_defaults(engine_pass, trt, gpu, true);
  CHECK(engine_pass.kernels[1].kernel.dtype == "tf32");
  InferencePass overridden = pass;
  apply_precision_defaults(overridden, trt, gpu, false);
  CHECK(overridden.kernels[0].kernel.dtype == "fp32");
  GpuModel volta = gpu;
  volta.math.erase("tf32_tensor");
  InferencePass old = pass;
  apply_precision_defaults(old, trt, volta, true);
  CHECK(old.kernels[0].kernel.dtype == "fp32");
}
