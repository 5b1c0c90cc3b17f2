// The GEMM model alone, on a made-up GPU whose numbers make the arithmetic short: 4 SMs, a bf16
// dense peak of 4e12 FLOP/s (1e12 per SM), 8e12 sparse, 1e12 B/s memory, 1 MiB of L2. Every
// expected time is derived by hand in the comment next to it.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "compute/gemm_model.hpp"

using namespace topsim;

namespace {

GpuModel toy_gpu() {
  GpuModel gpu;
  gpu.name = "toy";
  gpu.sms = 4;
  gpu.memory_Bps = 1e12;
  gpu.l2_B = 1 << 20;
  gpu.math["bf16_tensor"] = MathRate{4e12, 8e12};
  return gpu;
}

/// tile_rate_fraction 0.5 (500 GFLOP/s per SM), no overhead, no fill, all of memory bandwidth,
/// no small-tile penalty, an SM load rate far above need, no power sag, free split-K, L2 x 4.
KernelConstants plain() {
  return KernelConstants{{0.5, 0, 0, 1, 0, 1e2, 1, 1, 0, 4}};
}

}  // namespace

TEST_CASE("gemm model: whole waves of tiles at the tile rate", "[gemm_model]") {
  // 512x256x1024: 256x128 tiles, 2 x 2 = 4 tiles, one wave on 4 SMs; a tile is
  // 2 * 256 * 128 * 1024 = 67,108,864 FLOP at 5e11 FLOP/s = 134.217728 us. Every other tiling and
  // split does no better (64x64: 32 tiles in 8 waves of 16.777 us; split 2 adds partial sums).
  // Memory: (512*1024 + 1024*256 + 512*256) * 2 B = 1,835,008 B at 1e12 B/s = 1.835 us.
  GemmCost c = gemm_cost(toy_gpu(), plain(), GemmShape{512, 256, 1024, "bf16"});
  CHECK(c.time_s == Approx(134.217728e-6));
  CHECK(c.flops == 268435456.0);
  CHECK(c.memory_s == Approx(1.835008e-6));
  CHECK(c.waves == 1);
  CHECK(c.bound == "math");
  // floor: 268,435,456 FLOP at the 4e12 peak = 67.108864 us
  CHECK(c.floor_s == Approx(67.108864e-6));
  CHECK(c.time_s >= c.floor_s);
}

TEST_CASE("gemm model: a fifth tile costs a second wave", "[gemm_model]") {
  // 640x256x1024 with 256x128 tiles: ceil(640/256) * 2 = 6 tiles, 2 waves of 134.217728 us; a
  // 128x128 tiling: 5 * 2 = 10 tiles in 3 waves of 67.108864 us = 201.326592 us, which wins;
  // 64x128: 10 * 2 = 20 tiles, 5 waves of 33.554432 us = 167.77216 us, which wins again;
  // 64x64: 10 * 4 = 40 tiles, 10 waves of 16.777216 us = 167.77216 us (a tie).
  GemmCost c = gemm_cost(toy_gpu(), plain(), GemmShape{640, 256, 1024, "bf16"});
  CHECK(c.time_s == Approx(167.77216e-6));
}

TEST_CASE("gemm model: overhead, power sag and 2:4 sparsity", "[gemm_model]") {
  KernelConstants k = plain();
  k.values[1] = 5e-6;  // overhead
  k.values[6] = 0.8;   // power-limited clock 0.8 of boost
  k.values[7] = 1e-4;  // halfway at 100 us
  // core 134.217728 us sags by (1/0.8 - 1) * 134.217728 / (134.217728 + 100) = 0.25 * 0.573057 =
  // 0.143264: 153.446 us, plus 5 us of overhead.
  GemmCost c = gemm_cost(toy_gpu(), k, GemmShape{512, 256, 1024, "bf16"});
  const double core = 134.217728e-6;
  CHECK(c.time_s == Approx(5e-6 + core * (1 + 0.25 * core / (core + 1e-4))));
  // 2:4 at the largest speedup, 2: the tile takes 67.108864 us, half the dense time and twice the
  // sparse floor (268,435,456 FLOP at 8e12 = 33.554432 us; tile_rate_fraction 0.5); never
  // faster than half the dense time.
  GemmCost dense = gemm_cost(toy_gpu(), plain(), GemmShape{512, 256, 1024, "bf16"});
  GemmCost sparse = gemm_cost(toy_gpu(), plain(), GemmShape{512, 256, 1024, "bf16"}, 2);
  CHECK(sparse.time_s == Approx(67.108864e-6));
  CHECK(sparse.floor_s == Approx(33.554432e-6));
  CHECK(sparse.time_s >= dense.time_s / 2 * (1 - 1e-12));
  CHECK_THROWS_AS(gemm_cost(toy_gpu(), plain(), GemmShape{512, 256, 1024, "bf16"}, 2.5), std::invalid_argument);
}

TEST_CASE("gemm model: a memory-bound GEMV, from DRAM or replayed from L2", "[gemm_model]") {
  // The toy GPU with 1e10 B/s of memory, so that a GEMV is memory-bound although its one row pads
  // a 64-row tile: 1x4096x4096 bf16 reads a weight of 4096 * 4096 * 2 = 33,554,432 B, an
  // activation of 8,192 B and writes 8,192 B: 33,570,816 B at 1e10 B/s = 3.3570816 ms; the padded
  // math, 64 * 4096 * 4096 * 2 FLOP at 2e12 FLOP/s, is 1.074 ms at best.
  GpuModel slow = toy_gpu();
  slow.memory_Bps = 1e10;
  GemmCost workload = gemm_cost(slow, plain(), GemmShape{1, 4096, 4096, "bf16"});
  CHECK(workload.memory_s == Approx(3.3570816e-3));
  CHECK(workload.time_s == Approx(3.3570816e-3));
  CHECK(workload.bound == "memory");
  // 1x256x512: weight 256 * 512 * 2 = 262,144 B; replayed as the tables' collector does: copies =
  // min(5, ceil(1 MiB / 262,144 B)) = 4; 4 * 262,144 + 1,024 + 512 B = 1,050,112 B > 1 MiB, so the
  // weights come from DRAM (26.2144 us at 1e10 B/s) while the activation side (1,536 B) stays in
  // L2 at 4 x 1e10 B/s (38.4 ns).
  GemmShape replay{1, 256, 512, "bf16"};
  replay.weight_copies = kReplayWeightCopies;
  GemmCost r = gemm_cost(slow, plain(), replay);
  CHECK(r.memory_s == Approx(1536 / 4e10 + 262144 / 1e10));
  CHECK(r.floor_s == Approx(262144 / 1e10));
}

TEST_CASE("gemm model: a one-token GEMM runs on a small-M tile", "[gemm_model]") {
  // 1x256x4096 bf16, weights from DRAM. Memory: A 4096 * 2 = 8,192 B, W 4096 * 256 * 2 =
  // 2,097,152 B, C 256 * 2 = 512 B: 2,105,856 B at 1e12 B/s = 2.105856 us.
  // 16x64 tiles: 4 tiles in one wave, each 2 * 16 * 64 * 4096 = 8,388,608 FLOP at 5e11 =
  // 16.777216 us. 16x128 split 2 (4 CTAs of the same FLOPs) adds fp32 partial sums 256 * 8 B * 2
  // = 4,096 B at 1e12 B/s: 16.781312 us; 16x64 split 2: 2 waves of 8.388608 us + 4.096 ns;
  // 32x64: 33.55 us. The 64-row tiles alone take 67.108864 us at best (64x64: 4 tiles of
  // 2 * 64 * 64 * 4096 FLOP; 64x256 split 4 and 64x128 split 2 the same plus partial sums).
  // Operand loads (1 * 2 + 64 * 2) B * 4096 at 100 * 1e12 / 4 B/s = 21 ns stay under the math.
  GemmCost c = gemm_cost(toy_gpu(), plain(), GemmShape{1, 256, 4096, "bf16"});
  CHECK(c.time_s == Approx(16.777216e-6));
  CHECK(c.tile_m == 16);
  CHECK(c.tile_n == 64);
  CHECK(c.split_k == 1);
  CHECK(c.bound == "math");
  // floor: the DRAM bytes, 2,105,856 B at 1e12 B/s (the math, 2,097,152 FLOP at 4e12, is 0.52 us)
  CHECK(c.floor_s == Approx(2.105856e-6));
}

TEST_CASE("gemm model: Hopper's block-scaled fp8 has no split-K", "[gemm_model]") {
  // 16x64x4096 fp8_block on the toy GPU with an fp8 dense peak of 4e12 (5e11 per SM at 0.5).
  // Memory: A 16 * 4096 * (1 + 4/128 + 3 + 4/128) B = 266,240 B, W 4096 * 64 = 262,144 B,
  // C 16 * 64 * 2 = 2,048 B: 0.530432 us, so the math decides.
  // With split-K (Ampere): one 16x64 tile split 4 = 4 CTAs in one wave, 2 * 16 * 64 * 1024 =
  // 2,097,152 FLOP at 5e11 = 4.194304 us, plus partial sums 16 * 64 * 8 B * 4 = 32,768 B at 1e12
  // B/s = 32.768 ns: 4.227072 us (split 8: 2 waves of 2.097152 us + 65.536 ns = 4.25984 us).
  // Hopper, one CTA over the whole depth: 2 * 16 * 64 * 4096 = 8,388,608 FLOP = 16.777216 us.
  GpuModel ampere = toy_gpu();
  ampere.architecture = "ampere";
  ampere.math["fp8_tensor"] = MathRate{4e12, 8e12};
  GpuModel hopper = ampere;
  hopper.architecture = "hopper";
  const GemmShape shape{16, 64, 4096, "fp8_block"};
  GemmCost split = gemm_cost(ampere, plain(), shape);
  CHECK(split.time_s == Approx(4.227072e-6));
  CHECK(split.split_k == 4);
  GemmCost whole = gemm_cost(hopper, plain(), shape);
  CHECK(whole.time_s == Approx(16.777216e-6));
  CHECK(whole.split_k == 1);
  CHECK(whole.tile_m == 16);
  // fp8 per-tensor on Hopper still splits: the same 4 CTAs plus partial sums (memory: A 16 * 4096
  // * (1 + 5) = 393,216 B + W 262,144 B + C 2,048 B = 0.657 us, under the math).
  GemmCost fp8 = gemm_cost(hopper, plain(), GemmShape{16, 64, 4096, "fp8"});
  CHECK(fp8.split_k == 4);
  CHECK(fp8.time_s == Approx(4.227072e-6));
}

TEST_CASE("gemm model: never below the datasheet floor", "[gemm_model]") {
  // Over a grid of shapes, dtypes, replay rules, architectures and constant sets (the priors,
  // the toy's plain set, and every fraction at its bound 1 with no fill, overhead or sag), the
  // time is at least max(FLOPs at the dense peak, DRAM bytes at the datasheet bandwidth).
  GpuModel gpu = toy_gpu();
  gpu.math["fp8_tensor"] = MathRate{8e12, 16e12};
  std::vector<KernelConstants> sets = {plain(), KernelConstants{{1, 0, 0, 1, 0, 100, 1, 1, 0, 20}}};
  KernelConstants priors;
  for (const KernelParameter& p : gemm_parameters()) priors.values.push_back(p.prior);
  sets.push_back(priors);
  const double sizes[] = {1, 7, 64, 300, 4096, 65536};
  int checked = 0;
  for (const char* arch : {"ampere", "hopper"})
    for (const char* dtype : {"bf16", "fp8", "fp8_block"})
      for (double copies : {0.0, kReplayWeightCopies, 5.0})
        for (const KernelConstants& c : sets)
          for (double m : sizes)
            for (double n : sizes)
              for (double k : sizes) {
                gpu.architecture = arch;
                GemmShape shape{m, n, k, dtype};
                shape.weight_copies = copies;
                const GemmCost cost = gemm_cost(gpu, c, shape);
                REQUIRE(cost.time_s >= cost.floor_s * (1 - 1e-12));
                REQUIRE(cost.floor_s > 0);
                ++checked;
              }
  CHECK(checked == 2 * 3 * 3 * 3 * 6 * 6 * 6);
}

TEST_CASE("gemm model: bad shapes, dtypes and constants", "[gemm_model]") {
  CHECK_THROWS_AS(gemm_cost(toy_gpu(), plain(), GemmShape{0, 1, 1, "bf16"}), std::invalid_argument);
  CHECK_THROWS_AS(gemm_cost(toy_gpu(), plain(), GemmShape{1, 1, 1, "fp8"}), std::invalid_argument);  // no fp8 peak
  CHECK_THROWS_AS(gemm_cost(toy_gpu(), plain(), GemmShape{1, 1, 1, "fp7"}), std::invalid_argument);
  CHECK_THROWS_AS(gemm_cost(toy_gpu(), KernelConstants{{0.5}}, GemmShape{1, 1, 1, "bf16"}), std::invalid_argument);
  CHECK(gemm_parameters().size() == 10);
}
