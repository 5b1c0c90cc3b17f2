// The fused-attention model (compute/attention_model): prefill waves and decode KV reads derived
// by hand on made-up GPUs with round numbers, the exact port of the Python prototype the
// constants were fitted with, the errors, and the floor invariant.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "compute/attention_model.hpp"

using namespace topsim;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

/// A made-up GPU: 100 SMs, 1 TB/s, 1 PFLOP/s dense bf16 (2 PFLOP/s fp8), no L2 unless given.
GpuModel attn_round_gpu(double l2_B = 0) {
  GpuModel gpu;
  gpu.name = "round";
  gpu.sms = 100;
  gpu.memory_Bps = 1e12;
  gpu.l2_B = l2_B;
  gpu.math["bf16_tensor"].dense_flops_per_s = 1e15;
  gpu.math["fp16_tensor"].dense_flops_per_s = 1e15;
  gpu.math["fp8_tensor"].dense_flops_per_s = 2e15;
  return gpu;
}

/// The datasheet figures the Python prototype used (models/gpus.json; L2 from NVIDIA's
/// architecture whitepapers: A100 40 MiB, H100 SXM 50 MiB, B200 126 MiB, L40S 96 MiB).
GpuModel attn_table_gpu(int sms, double memory_Bps, double bf16, double fp8, double l2_B) {
  GpuModel gpu;
  gpu.name = "table";
  gpu.sms = sms;
  gpu.memory_Bps = memory_Bps;
  gpu.l2_B = l2_B;
  gpu.math["bf16_tensor"].dense_flops_per_s = bf16;
  if (fp8 > 0) gpu.math["fp8_tensor"].dense_flops_per_s = fp8;
  return gpu;
}

AttentionShape prefill_shape(double b, double s, double n, double kv, double h, const std::string& dtype = "bf16",
                       const std::string& kv_dtype = "bf16") {
  AttentionShape shape;
  shape.phase = KernelFamily::prefill;
  shape.batch = b;
  shape.q_len = s;
  shape.kv_len = s;
  shape.heads = n;
  shape.kv_heads = kv;
  shape.head_dim = h;
  shape.dtype = dtype;
  shape.kv_dtype = kv_dtype;
  return shape;
}

AttentionShape decode_shape(double b, double cached, double n, double kv, double h, const std::string& kv_dtype = "bf16") {
  AttentionShape shape;
  shape.phase = KernelFamily::decode;
  shape.batch = b;
  shape.q_len = 1;
  shape.kv_len = cached;
  shape.heads = n;
  shape.kv_heads = kv;
  shape.head_dim = h;
  shape.kv_dtype = kv_dtype;
  return shape;
}

std::string attention_error(const GpuModel& gpu, const KernelConstants& c, const AttentionShape& shape) {
  try {
    attention_cost(gpu, c, shape);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("attention parameters: five for prefill, seven for decode, priors inside their bounds") {
  CHECK(attention_parameters(KernelFamily::prefill).size() == 5);
  CHECK(attention_parameters(KernelFamily::decode).size() == 7);
  for (auto phase : {KernelFamily::prefill, KernelFamily::decode})
    for (const KernelParameter& p : attention_parameters(phase)) {
      CHECK(p.lower <= p.prior);
      CHECK(p.prior <= p.upper);
      CHECK_FALSE(p.description.empty());
    }
  CHECK_THROWS_AS(attention_parameters(KernelFamily::gemm), std::invalid_argument);
}

TEST_CASE("decode: the KV-cache read at the bandwidth fraction dominates") {
  // overhead 5 us, memory_fraction 0.5, l2_speedup 1, l2_fraction 0.5, cta 1 us, gqa16_cta 0, fp8_cta 0.
  const KernelConstants c{{5e-6, 0.5, 1, 0.5, 1e-6, 0, 0}};
  // b 8, kv_heads 8, heads 8, 16384 cached, head_dim 128, bf16:
  // cache = 2 x 8 x 8 x 16384 x 128 x 2 B = 536,870,912 B; Q + O = 2 x 8 x 8 x 128 x 2 = 32,768 B.
  // No L2: all from HBM at 0.5 x 1e12 = 5e11 B/s.
  // memory = 536,903,680 / 5e11 = 1.0738073600e-3 s; FLOPs = 4 x 8 x 8 x 16384 x 128 = 536,870,912 (0.54 us).
  // CTAs = 8 sequences x 8 KV heads = 64 <= 100 SMs: one wave of 1 us. time = 5 + 1 + 1073.80736 us.
  const AttentionCost cost = attention_cost(attn_round_gpu(), c, decode_shape(8, 16384, 8, 8, 128));
  CHECK(cost.bytes_B == Approx(536903680.0));
  CHECK(cost.flops == Approx(536870912.0));
  CHECK(cost.memory_s == Approx(1.07380736e-3));
  CHECK(cost.time_s == Approx(1.07980736e-3));
  CHECK(cost.bound == "memory");
  // Floor with no L2: 536,903,680 B / 1e12 = 536.9 us.
  CHECK(cost.floor_s == Approx(5.3690368e-4));

  SECTION("fp8 KV halves the cache bytes") {
    // cache = 268,435,456 B + 32,768 B (Q, O stay 16-bit) = 268,468,224 B / 5e11 = 536.936448 us.
    CHECK(attention_cost(attn_round_gpu(), c, decode_shape(8, 16384, 8, 8, 128, "fp8")).memory_s == Approx(5.36936448e-4));
  }
  SECTION("a cache that fits in L2 moves at l2_speedup and breaks the HBM floor") {
    // L2 1 GiB, l2_fraction 1: hit = min(1, 2^30 / 536,870,912) = 1; L2 at 4 x 1e12 B/s.
    // memory = 536,870,912 / 4e12 + 32,768 / 5e11 = 134.217728 + 0.065536 us = 134.283264 us.
    const KernelConstants l2{{5e-6, 0.5, 4, 1, 1e-6, 0, 0}};
    const AttentionCost in_l2 = attention_cost(attn_round_gpu(1024 * MiB), l2, decode_shape(8, 16384, 8, 8, 128));
    CHECK(in_l2.memory_s == Approx(1.34283264e-4));
    // No byte must come from HBM: the floor is the FLOPs at the dense peak, 536,870,912 / 1e15.
    CHECK(in_l2.floor_s == Approx(5.36870912e-7));
    CHECK(in_l2.time_s >= in_l2.floor_s);
  }
  SECTION("more than 32 query heads per KV head re-read the cache from L2") {
    // b 1, 1024 cached, 64 heads on 1 KV head, l2_speedup 4, no L2 capacity known (hit 0):
    // cache = 2 x 1024 x 128 x 2 = 524,288 B; 63 re-reads = 33,030,144 B at 4e12 = 8.257536 us;
    // cache + Q, O (2 x 64 x 128 x 2 = 32,768 B) from HBM: 557,056 / 5e11 = 1.114112 us.
    const KernelConstants reread{{5e-6, 0.5, 4, 0.5, 1e-6, 0, 0}};
    CHECK(attention_cost(attn_round_gpu(), reread, decode_shape(1, 1024, 64, 1, 128)).memory_s == Approx(9.371648e-6));
    // 32 heads share one read: (524,288 + 16,384) / 5e11 = 1.081344 us.
    CHECK(attention_cost(attn_round_gpu(), reread, decode_shape(1, 1024, 32, 1, 128)).memory_s == Approx(1.081344e-6));
  }
  SECTION("CTA waves, with the fp8-cache surcharge") {
    // b 256, 16 cached, 8 heads on 8 KV heads, fp8: CTAs = 256 x 8 = 2048: ceil(2048 / 100) = 21
    // waves of 1 + 2 us = 63 us. cache = 2 x 256 x 8 x 16 x 128 x 1 = 8,388,608 B; Q, O = 2 x 256 x 8
    // x 128 x 2 = 1,048,576 B: 9,437,184 / 5e11 = 18.874368 us. time = 5 + 63 + 18.874368 us.
    const KernelConstants fp8{{5e-6, 0.5, 1, 0.5, 1e-6, 3e-6, 2e-6}};
    const AttentionCost waves = attention_cost(attn_round_gpu(), fp8, decode_shape(256, 16, 8, 8, 128, "fp8"));
    CHECK(waves.time_s == Approx(8.6874368e-5));
    CHECK(waves.bound == "overhead");
  }
  SECTION("a group shares one CTA per KV head; a 16-bit cache read by a group pays gqa16_cta") {
    // b 256, 16 cached, 32 heads on 8 KV heads (group 4), bf16: CTAs = 256 x 8 = 2048 (not one per
    // query head): 21 waves of 1 + 3 us = 84 us. cache = 2 x 256 x 8 x 16 x 128 x 2 = 16,777,216 B;
    // Q, O = 2 x 256 x 32 x 128 x 2 = 4,194,304 B: 20,971,520 / 5e11 = 41.94304 us.
    // time = 5 + 84 + 41.94304 us.
    const KernelConstants gqa{{5e-6, 0.5, 1, 0.5, 1e-6, 3e-6, 2e-6}};
    CHECK(attention_cost(attn_round_gpu(), gqa, decode_shape(256, 16, 32, 8, 128)).time_s == Approx(1.3094304e-4));
    // The same group on an fp8 cache pays fp8_cta instead: 21 x (1 + 2) = 63 us; cache 8,388,608 B
    // + Q, O 4,194,304 B = 12,582,912 / 5e11 = 25.165824 us. time = 5 + 63 + 25.165824 us.
    CHECK(attention_cost(attn_round_gpu(), gqa, decode_shape(256, 16, 32, 8, 128, "fp8")).time_s ==
          Approx(9.3165824e-5));
  }
  SECTION("a K-only cache halves the bytes of a grouped read, not of one head per KV head") {
    // b 8, 16384 cached, 16 heads on 8 KV heads, K only: cache = 8 x 8 x 16384 x 128 x 2 =
    // 268,435,456 B; Q, O = 2 x 8 x 16 x 128 x 2 = 65,536 B: 268,500,992 / 5e11 = 537.001984 us.
    AttentionShape k_only = decode_shape(8, 16384, 16, 8, 128);
    k_only.k_only_cache = true;
    CHECK(attention_cost(attn_round_gpu(), c, k_only).memory_s == Approx(5.37001984e-4));
    // K and V: (536,870,912 + 65,536) / 5e11 = 1073.872896 us.
    k_only.k_only_cache = false;
    CHECK(attention_cost(attn_round_gpu(), c, k_only).memory_s == Approx(1.073872896e-3));
    // One query head per KV head reads K and V even from a K-only cache: the 1073.80736 us above.
    AttentionShape mha = decode_shape(8, 16384, 8, 8, 128);
    mha.k_only_cache = true;
    CHECK(attention_cost(attn_round_gpu(), c, mha).memory_s == Approx(1.07380736e-3));
  }
}

TEST_CASE("prefill: causal tiles in waves over the SMs") {
  // overhead 10 us, math_fraction 0.5, softmax_flops 0, tile 1 us, memory_fraction 1.
  const KernelConstants c{{10e-6, 0.5, 0, 1e-6, 1}};
  // b 2, s 1024, heads 64, kv_heads 8, head_dim 128, bf16 on 100 SMs of 1e15 / 100 x 0.5 = 5e12 FLOP/s.
  // Query tiles per head = 1024 / 128 = 8; CTAs = 2 x 64 x 8 = 1024: ceil(1024 / 100) = 11 waves.
  // Score elements per head (causal, tile i sees 128 (i + 1) keys) = 128^2 x (1 + ... + 8) = 589,824;
  // mean per tile 73,728; an element costs 4 x 128 / 5e12 = 1.024e-10 s:
  // mean tile = 1 us + 7.5497472 us; math = 11 x 8.5497472 us = 94.0472192 us (the longest tile,
  // 1 + 131,072 x 1.024e-10 = 14.42 us, is shorter).
  const AttentionCost cost = attention_cost(attn_round_gpu(), c, prefill_shape(2, 1024, 64, 8, 128));
  CHECK(cost.math_s == Approx(9.40472192e-5));
  // bytes = 2 x 1024 x 128 x (2 x 64 x 2 + 2 x 8 x 2 + 2 x 8 x 2) = 262,144 x 320 = 83,886,080 B at 1e12.
  CHECK(cost.bytes_B == Approx(83886080.0));
  CHECK(cost.memory_s == Approx(8.388608e-5));
  CHECK(cost.time_s == Approx(10e-6 + 9.40472192e-5 + 8.388608e-5));
  // FLOPs = 2 x 2 x 1024^2 x 64 x 128 = 34,359,738,368: floor 34.36 us at 1e15; bytes 83.9 us.
  CHECK(cost.flops == Approx(34359738368.0));
  CHECK(cost.floor_s == Approx(8.388608e-5));
  CHECK(cost.bound == "math");

  SECTION("fp8 math runs on the fp8 peak") {
    // Per-SM rate doubles: element 5.12e-11 s; mean tile = 1 + 3.7748736 us; 11 waves = 52.5236096 us.
    CHECK(attention_cost(attn_round_gpu(), c, prefill_shape(2, 1024, 64, 8, 128, "fp8", "fp8")).math_s == Approx(5.25236096e-5));
  }
  SECTION("a short prompt pads its one tile to 16 rows and keys") {
    // s 20: one tile of pad(20) = 32 rows x 32 keys = 1024 elements; CTAs = 1 x 1 x 1: one wave.
    // math = 1 us + 1024 x 1.024e-10 = 1.1048576 us.
    CHECK(attention_cost(attn_round_gpu(), c, prefill_shape(1, 20, 1, 1, 128)).math_s == Approx(1.1048576e-6));
  }
}

TEST_CASE("attention: the C++ port reproduces the Python prototype's predictions") {
  // Constants fitted by the prototype (soft-L1 least squares on log(pred/measured)) and its
  // predictions, printed with repr(): the port must agree to 1e-9 relative.
  const GpuModel a100 = attn_table_gpu(108, 2039e9, 312e12, 0, 40 * MiB);
  const GpuModel h100 = attn_table_gpu(132, 3350e9, 989.5e12, 1979e12, 50 * MiB);
  const GpuModel b200 = attn_table_gpu(148, 8e12, 2250e12, 4500e12, 126 * MiB);
  const GpuModel l40s = attn_table_gpu(142, 864e9, 362.05e12, 733e12, 96 * MiB);
  const KernelConstants prefill_a100{
      {1.0696834162475492e-05, 0.6626657140413366, 187.1010203134593, 2.5039087112796613e-06, 0.6573727993303001}};
  const KernelConstants prefill_h100{
      {1.3115797200692228e-05, 0.8686167238571153, 159.19286751765148, 3.374325699210392e-06, 0.6287536723995845}};
  const KernelConstants prefill_l40s_fp8{
      {7.181326221558691e-06, 0.1763313374368106, 1.595394418505197e-14, 4.1896140100262515e-06, 0.9999999999999999}};
  const KernelConstants decode_a100{{9.136260102396303e-06, 0.786147359368506, 1.000000000006688,
                                     0.010000000000010138, 1.5864867571119442e-06, 3.698814150726304e-06, 1e-07}};
  const KernelConstants decode_b200{{9.81260177478756e-06, 0.9153501801480233, 1.0000000009488237,
                                     0.25347236561492503, 1.3162141211437994e-06, 1.9763580124404796e-07,
                                     7.773162607328033e-12}};
  const KernelConstants decode_h100{{6.715675664160591e-06, 0.8325524856458487, 1.5889406449022812,
                                     0.010000000000000002, 1.1481673025345666e-06, 2.191250834238185e-06,
                                     1.0330121427672446e-07}};
  const KernelConstants decode_l40s{{6.983439902372453e-06, 0.7677538451160872, 2.5768886706259244,
                                     0.43406092224490894, 6.258900771278756e-07, 1.0159325480982486e-06,
                                     2.9818165727760664e-06}};
  const double eps = 1e-9;
  CHECK(attention_cost(h100, prefill_h100, prefill_shape(32, 512, 4, 1, 192)).time_s ==
        Approx(8.578660500804138e-05).epsilon(eps));
  CHECK(attention_cost(h100, prefill_h100, prefill_shape(2, 4096, 2, 1, 128, "bf16", "fp8")).time_s ==
        Approx(7.750360273850393e-05).epsilon(eps));
  CHECK(attention_cost(l40s, prefill_l40s_fp8, prefill_shape(2, 6144, 32, 2, 192, "fp8", "fp8")).time_s ==
        Approx(0.007932821669447464).epsilon(eps));
  CHECK(attention_cost(a100, prefill_a100, prefill_shape(3, 1000, 40, 8, 128)).time_s ==
        Approx(0.0003322575439294139).epsilon(eps));
  CHECK(attention_cost(b200, decode_b200, decode_shape(512, 1023, 16, 2, 512, "fp8")).time_s ==
        Approx(0.00016741685524461188).epsilon(eps));
  CHECK(attention_cost(l40s, decode_l40s, decode_shape(128, 7, 128, 8, 256, "fp8")).time_s ==
        Approx(6.2785534821636e-05).epsilon(eps));
  CHECK(attention_cost(l40s, decode_l40s, decode_shape(64, 16383, 32, 8, 128)).time_s ==
        Approx(0.006443258271554287).epsilon(eps));
  CHECK(attention_cost(h100, decode_h100, decode_shape(2, 65535, 8, 1, 128)).time_s ==
        Approx(3.4029720929547135e-05).epsilon(eps));
  CHECK(attention_cost(h100, decode_h100, decode_shape(4, 8191, 96, 1, 128)).time_s ==
        Approx(0.00031554632726575496).epsilon(eps));
  CHECK(attention_cost(l40s, decode_l40s, decode_shape(8, 2047, 64, 1, 64, "fp8")).time_s ==
        Approx(8.186620637869054e-05).epsilon(eps));
  // The A100 table's K-only cache (collector 1.0.0): a grouped read and one head per KV head.
  AttentionShape a100_group = decode_shape(128, 8191, 16, 8, 128);
  a100_group.k_only_cache = true;
  CHECK(attention_cost(a100, decode_a100, a100_group).time_s == Approx(0.0014021273888828241).epsilon(eps));
  AttentionShape a100_mha = decode_shape(16, 4095, 8, 8, 128);
  a100_mha.k_only_cache = true;
  CHECK(attention_cost(a100, decode_a100, a100_mha).time_s == Approx(0.00017971620956926666).epsilon(eps));
}

TEST_CASE("attention: bad shapes, dtypes and constants are refused") {
  const GpuModel gpu = attn_round_gpu();
  const KernelConstants p{{10e-6, 0.5, 0, 1e-6, 1}};
  const KernelConstants d{{5e-6, 0.5, 1, 0.5, 1e-6, 1e-6, 1e-6}};
  CHECK_THAT(attention_error(gpu, p, prefill_shape(1, 128, 12, 8, 128)), Catch::Contains("multiple of kv_heads"));
  CHECK_THAT(attention_error(gpu, d, decode_shape(1, 128, 12, 5, 128)), Catch::Contains("multiple of kv_heads"));
  CHECK_THAT(attention_error(gpu, p, prefill_shape(0, 128, 8, 8, 128)), Catch::Contains("positive"));
  CHECK_THAT(attention_error(gpu, p, prefill_shape(1, 128, 8, 8, -64)), Catch::Contains("positive"));
  CHECK_THAT(attention_error(gpu, d, decode_shape(1, 0, 8, 8, 128)), Catch::Contains("kv_len"));
  CHECK_THAT(attention_error(gpu, p, prefill_shape(1, 128, 8, 8, 128, "int4")), Catch::Contains("unknown math dtype 'int4'"));
  CHECK_THAT(attention_error(gpu, p, prefill_shape(1, 128, 8, 8, 128, "bf16", "fp4")), Catch::Contains("unknown kv_dtype"));
  AttentionShape fp8_decode = decode_shape(1, 128, 8, 8, 128);
  fp8_decode.dtype = "fp8";
  CHECK_THAT(attention_error(gpu, d, fp8_decode), Catch::Contains("unknown math dtype 'fp8'"));
  CHECK_THAT(attention_error(gpu, d, prefill_shape(1, 128, 8, 8, 128)), Catch::Contains("7 constants given, the model takes 5"));
  CHECK_THAT(attention_error(gpu, p, decode_shape(1, 128, 8, 8, 128)), Catch::Contains("5 constants given, the model takes 7"));
  AttentionShape cached_prefill = prefill_shape(1, 128, 8, 8, 128);
  cached_prefill.kv_len = 256;
  CHECK_THAT(attention_error(gpu, p, cached_prefill), Catch::Contains("kv_len must equal q_len"));
  GpuModel no_fp8 = attn_round_gpu();
  no_fp8.math.erase("fp8_tensor");
  CHECK_THAT(attention_error(no_fp8, p, prefill_shape(1, 128, 8, 8, 128, "fp8", "fp8")), Catch::Contains("fp8_tensor"));
  AttentionShape gemm = prefill_shape(1, 128, 8, 8, 128);
  gemm.phase = KernelFamily::gemm;
  CHECK_THAT(attention_error(gpu, p, gemm), Catch::Contains("prefill or decode"));
}

TEST_CASE("attention: time never below the floor over a grid of shapes and constants") {
  // Every constant at its lower bound, prior and upper bound, on GPUs with and without L2.
  for (auto phase : {KernelFamily::prefill, KernelFamily::decode}) {
    const auto& params = attention_parameters(phase);
    for (int corner = 0; corner < 3; ++corner) {
      KernelConstants c;
      for (const KernelParameter& p : params) c.values.push_back(corner == 0 ? p.lower : corner == 1 ? p.prior : p.upper);
      for (double l2_B : {0.0, 50 * MiB, 1024 * MiB})
        for (double b : {1.0, 7.0, 256.0})
          for (double len : {1.0, 17.0, 1000.0, 16384.0})
            for (double kv : {1.0, 8.0})
              for (double h : {64.0, 128.0, 256.0})
                for (const std::string kv_dtype : {"bf16", "fp8"})
                  // Groups: one head per KV head, a shared group, the fallback past 32; K and V or K only.
                  for (double group : {1.0, 8.0, 48.0})
                    for (bool k_only : {false, true}) {
                      AttentionShape shape =
                          phase == KernelFamily::prefill ? prefill_shape(b, len, kv * group, kv, h, "bf16", kv_dtype)
                                                         : decode_shape(b, len, kv * group, kv, h, kv_dtype);
                      shape.k_only_cache = k_only && phase == KernelFamily::decode;
                      const AttentionCost cost = attention_cost(attn_round_gpu(l2_B), c, shape);
                      CHECK(cost.floor_s > 0);
                      CHECK(cost.time_s >= cost.floor_s);
                    }
    }
  }
}
