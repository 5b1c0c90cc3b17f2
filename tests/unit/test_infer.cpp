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

/// Kernel-model constants that keep the arithmetic short: every GEMM and decode attention streams
/// its operands at the full datasheet bandwidth with no fixed cost (no launch, no overhead, no
/// pipeline fill, no CTA cost, no power sag, L2 no faster than memory); GEMM tiles run at 0.9 of
/// the peak, small tiles 0.3 slower per unit of extra edge, split-K slices cost 1 us; prefill
/// attention at 0.6 of the per-SM peak with no softmax or tile cost. Streaming kernels at
/// memory_efficiency 0.9, 4 us launches, 2:4 sparse math 1.38x.
ComputeModel ampere() {
  ComputeModel c;
  c.name = "ampere";
  c.memory_efficiency = 0.9;
  c.launch_s = 4e-6;
  c.sparse_speedup = 1.38;
  // tile_rate_fraction, overhead_s, pipeline_fill_k, memory_fraction, small_tile_cost,
  // sm_load_factor, power_limited_fraction, power_time_constant_s, split_cost_s, l2_bandwidth_factor
  c.kernels["gemm/bf16"] = KernelConstants{{0.9, 0, 0, 1, 0.3, 100, 1, 1e-3, 1e-6, 1}};
  // overhead_s, math_fraction, softmax_flops, tile_overhead_s, memory_fraction
  c.kernels["prefill/bf16"] = KernelConstants{{0, 0.6, 0, 0, 1}};
  // overhead_s, memory_fraction, l2_speedup, l2_fraction, cta_overhead_s, gqa16_cta_s, fp8_cta_s
  c.kernels["decode/bf16"] = KernelConstants{{0, 1, 1, 0.5, 0, 0, 0}};
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
  // Math so fast and launches so short that every kernel is memory-bound; streaming at 100%: the
  // GEMMs (GEMVs here) at gemm/bf16's memory_fraction 1 with no overhead, the decode attention at
  // decode/bf16's memory_fraction 1 with no fixed or per-CTA cost and no L2 (l2_B 0), the norms at
  // memory_efficiency 1.
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
  // at half the bandwidth it takes twice as long and the floor stays where the datasheet puts it:
  // kernel_cost takes the larger of the kernel model's time (at its fitted fractions, 1 here)
  // and the bytes at memory_efficiency.
  CHECK(t.floor_s == Approx(116.859392e-6).epsilon(1e-9));
  c.memory_efficiency = 0.5;
  PassTime slow = time_pass(gpu, c, engine(), step, {});
  CHECK(slow.total_s() == Approx(2 * 116.859392e-6).epsilon(1e-9));
  CHECK(slow.floor_s == Approx(116.859392e-6).epsilon(1e-9));
  // The KV cache of 100 tokens: 2 x 2 layers x 8 x 128 x 100 x 2 B = 819,200 B.
  CHECK(kv_cache_B(m, shape, 100) == Approx(819200));
}

TEST_CASE("a 2:4 sparse GEMM gains near its main loop's speedup at a large shape and nothing at a tiny one", "[infer]") {
  // The bundled A100 40GB and ampere model (gemm/bf16 for fp16: tile_rate_fraction 0.9284,
  // overhead 2.688 us, pipeline_fill_k 173.9, memory_fraction 0.6936; sparse_speedup 1.211; launch
  // 4 us at the time of writing), constants read from the catalog.
  const GpuModel& gpu = test::catalog().gpu("a100", {});
  const ComputeModel& c = test::catalog().compute("ampere", {});
  auto constant = [&](std::size_t index) { return c.kernels.at("gemm/bf16").values.at(index); };
  const double overhead_s = constant(1), fill_k = constant(2), memory_fraction = constant(3);
  Kernel k;
  k.dtype = "fp16";
  // Large: the PyTorch tutorial's Linear, m = n = 3072, k = 10240, math-bound: 288 tiles of
  // 256x128 in 3 waves on 108 SMs, each (10240 + 173.9) x 256 x 128 x 2 FLOP at
  // 312e12 x 0.9284 / 108 FLOP/s (254.5 us; 2:4 at sparse_speedup x that rate), plus the 2.688 us
  // overhead either way: the gain stays just under sparse_speedup.
  k.m = 3072;
  k.n = 3072;
  k.k = 10240;
  const double dense_s = kernel_cost(gpu, c, k).time_s;
  k.sparse = true;
  const double sparse_s = kernel_cost(gpu, c, k).time_s;
  const double wave_s = (10240 + fill_k) * 256 * 128 * 2 / (312e12 * constant(0) / 108);
  CHECK(dense_s == Approx(overhead_s + 3 * wave_s));
  CHECK(sparse_s == Approx(overhead_s + 3 * wave_s / c.sparse_speedup));
  CHECK(dense_s / sparse_s < c.sparse_speedup);
  CHECK(dense_s / sparse_s > 1);
  // BERT-large's QKV at batch 1, sequence 128: m = 128, n = 3072, k = 1024. Dense it is
  // memory-bound in the GEMM model: (128 x 1024 + 1024 x 3072 + 128 x 3072) x 2 = 7,340,032 B at
  // 1555e9 x 0.6936 B/s = 6.805 us, plus 2.688 us = 9.49 us. 2:4 stores W at 0.5625:
  // 4,587,520 B (4.25 us), and the math at the sparse rate binds: the sparse kernel gains from its
  // smaller weights as well as its faster math, never more than 2x.
  k.m = 128;
  k.n = 3072;
  k.k = 1024;
  k.sparse = false;
  const KernelCost mid_dense = kernel_cost(gpu, c, k);
  k.sparse = true;
  const KernelCost mid_sparse = kernel_cost(gpu, c, k);
  CHECK(mid_dense.bound == "memory");
  CHECK(mid_dense.time_s == Approx(overhead_s + 7340032 / (1555e9 * memory_fraction)));
  CHECK(mid_sparse.bytes_B == 4587520);
  CHECK(mid_sparse.bound == "math");
  CHECK(mid_dense.time_s / mid_sparse.time_s > 1);
  CHECK(mid_dense.time_s / mid_sparse.time_s <= 2);
  // A tiny GEMM (m = 1, n = k = 64: 8,192 FLOP, 8 KB of weights) runs at the 4 us launch floor
  // either way: no gain at all.
  k.m = 1;
  k.n = 64;
  k.k = 64;
  k.sparse = false;
  const double tiny_dense_s = kernel_cost(gpu, c, k).time_s;
  k.sparse = true;
  const double tiny_sparse_s = kernel_cost(gpu, c, k).time_s;
  CHECK(tiny_dense_s == Approx(c.launch_s));
  CHECK(tiny_sparse_s == Approx(c.launch_s));
}

TEST_CASE("serving a 2:4 sparse model is never more than twice as fast as dense", "[infer]") {
  // The sparse speedup infer prints is dense latency / sparse latency of the same request: every
  // kernel of the sparse pass is at most 2x faster than its dense twin (kernel_cost) and the
  // framework's layout passes only add, so neither the latency nor the throughput gains more than
  // 2x. Encoders and a decoder, each dtype with 2:4 math, on every bundled GPU with a 2:4 path.
  const Catalog& catalog = test::catalog();
  int checked = 0;
  for (const auto& [gpu_name, gpu] : catalog.gpus()) {
    for (const std::string model : {"bert-large", "llama2-7b"})
      for (const std::string precision : {"fp16", "int8", "fp8"})
        for (double batch : {1.0, 8.0, 64.0}) {
          InferenceRequest r;
          r.model = model;
          r.shape.precision = precision;
          r.shape.batch = batch;
          r.shape.seq = 128;
          r.output_tokens = 32;
          InferenceResult dense;
          try {
            dense = serve(catalog, gpu, r, {});
          } catch (const std::invalid_argument&) {
            continue;  // the GPU has no math for this precision
          }
          r.shape.sparse = true;
          InferenceResult sparse;
          try {
            sparse = serve(catalog, gpu, r, {});
          } catch (const std::invalid_argument&) {
            continue;  // no 2:4 math for this precision
          }
          INFO(gpu_name << " " << model << " " << precision << " batch " << batch);
          CHECK(sparse.latency_s >= dense.latency_s / 2 * (1 - 1e-12));
          CHECK(sparse.throughput <= 2 * dense.throughput * (1 + 1e-12));
          ++checked;
        }
  }
  CHECK(checked >= 100);
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

  // Timed by the prefill attention model on a GPU of one SM whose fp16 runs at 100e12 FLOP/s
  // (prefill/bf16: math_fraction 0.6, no softmax, tile or fixed cost; memory free), so the
  // CTAs run one after another and the time is the score elements the tiles compute, padded,
  // x 4 h = 512 FLOP at 60e12 FLOP/s. kernel_cost's attention_shape() turns m queries against
  // n keys into the causal square of q = sqrt(2 m n) with the same query-key pairs.
  // Packed: q = sqrt(2 x 25,000) = 223.607, ceil(223.607 / 128) = 2 query tiles: the first
  // 128 x 128 scores, the last 96 x 224 (223.607 and its remainder 95.607 padded to 16):
  // 16,384 + 21,504 = 37,888 per (sequence, head), x 16 = 606,208 x 512 / 60e12 = 5.172975 us
  // a layer, 10.34595 us for 2 (the unpadded pairs would be 2 x 204.8e6 / 60e12 = 6.83 us).
  // Padded: q = sqrt(2) x 384 = 543.058, 5 tiles: 128 x 128 x (1 + 2 + 3 + 4) + 32 x 544 =
  // 181,248 per pair, x 16 = 2,899,968 x 512 / 60e12 = 24.74639 us a layer, 49.49279 us for 2.
  GpuModel gpu = a100();
  gpu.sms = 1;
  gpu.math["fp16_tensor"] = MathRate{100e12, 0};
  gpu.memory_Bps = 1e18;  // no memory time
  ComputeModel c = ampere();
  c.launch_s = 0;
  const KernelCost packed_cost = kernel_cost(gpu, c, attention);
  CHECK(2 * packed_cost.time_s == Approx(10.34595e-6).epsilon(1e-5));
  const KernelCost padded_cost = kernel_cost(gpu, c, kernel_named(padded, "attention").kernel);
  CHECK(2 * padded_cost.time_s == Approx(49.49279e-6).epsilon(1e-5));

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
  // The 4096^3 convolution is math-bound either way (1.37e11 FLOP: 0.98 ms at 0.9 of 156e12;
  // 201 MB at 1555e9 B/s is 0.13 ms) with no fixed cost; fp32 and tf32 run with the same
  // gemm/bf16 constants and move the same 4-byte operands. On a GPU of 128 SMs its 16 x 32 = 512
  // tiles of 256x128 fill 4 whole waves, so neither picks split-K (whose partial sums cost the
  // same bytes at either rate, and pay off only for the slower fp32 where a wave is partly
  // empty: on 108 SMs fp32 splits K 4 ways and the ratio is 7.94) and the ratio is the peaks':
  // 156 / 19.5 = 8x faster in tf32.
  GpuModel whole_waves = gpu;
  whole_waves.sms = 128;
  const ComputeModel c = ampere();
  CHECK(kernel_cost(whole_waves, c, pass.kernels[0].kernel).time_s /
            kernel_cost(whole_waves, c, eager.kernels[0].kernel).time_s ==
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
