// NCCL's tuner as topsim transcribes it (collectives/tuner.cpp) and the release lines it reads
// (models/nccl_versions.json): estimates and choices derived by hand from the tables.
#include <catch2/catch.hpp>

#include "collectives/fabric.hpp"
#include "collectives/tuner.hpp"
#include "helpers.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

// A DGX A100 as NCCL's tuner sees it: 8 ranks on one server, NVLink rings, 12 NVLinks of
// 20 GB/s each (NCCL's SM80 figure) = 240 GB/s of ring bandwidth on 24 channels.
TunerTopology dgx_a100() {
  TunerTopology t;
  t.ranks = 8;
  t.nodes = 1;
  t.architecture = "ampere";
  t.ring_Bps = t.inter_Bps = 240 * kGB;
  t.channels = 24;
  return t;
}

const NcclEstimate& find(const std::vector<NcclEstimate>& all, Algo algo, Proto proto) {
  for (const auto& e : all)
    if (e.algo == algo && e.proto == proto) return e;
  FAIL("no estimate for " << to_string(algo) << "/" << to_string(proto));
  return all.front();
}

auto runs_everything = [](Algo) { return std::string(); };

}  // namespace

TEST_CASE("tuner: NCCL 2.18's estimates for a 1 MiB allreduce on a DGX A100, derived from its tables") {
  const NcclVersion& v = catalog().nccl_version("2.18.5");
  auto all = nccl_estimates(v, dgx_a100(), {}, CollOp::allreduce, 1048576, runs_everything);
  // All @v2.18.3-1, src/graph/tuning.cc: baseLat :56-59, hwLat :65-78, llMaxBws :86-90,
  // perChMaxRingLL128Bws :92-96, perChMaxTreeBws :102-106, refinements :177-182.
  // ring/LL: busBw min(llMaxBw 87.7, 240 x 1/4 = 60) = 60 GB/s, algBw 60 x 8/14 = 34.2857 GB/s;
  // latency baseLat 6.6 + 14 steps x hwLat 0.6 = 15.0 us; 15.0 + 1048576 B / 34.2857 GB/s = 45.584 us.
  const NcclEstimate& ll = find(all, Algo::ring, Proto::ll);
  CHECK(ll.latency_s == Approx(15.0 * kUs));
  CHECK(ll.algbw_Bps == Approx(60 * kGB * 8 / 14));
  CHECK(ll.time_s == Approx(15.0 * kUs + 1048576 / (60 * kGB * 8 / 14)));
  // ring/LL128: min(240 x 0.92 = 220.8, 24 x 20 = 480) x 8/14; 14 + 14 x 1.9 = 40.6 us -> 48.910 us.
  const NcclEstimate& ll128 = find(all, Algo::ring, Proto::ll128);
  CHECK(ll128.latency_s == Approx(40.6 * kUs));
  CHECK(ll128.time_s == Approx(40.6 * kUs + 1048576 / (220.8 * kGB * 8 / 14)));
  // ring/Simple: 240 x 8/14; 8.4 + 14 x 3.4 = 56.0 us -> 63.646 us.
  CHECK(find(all, Algo::ring, Proto::simple).time_s == Approx(56.0 * kUs + 1048576 / (240 * kGB * 8 / 14)));
  // tree/LL128: min(240 x 0.92, 24 x 24.0) = 220.8, then min(220.8 x 0.7778, 24 x 20) = 171.74,
  // x 1/2 = 85.87 GB/s; latency 14 + 2 x 7 x 1.25 = 31.5 us; treeCorrectionFactor at
  // log2(1 MiB / 64) = 14 is 0.6 for LL128: 31.5 + 1048576 / (85.87 x 0.6 GB/s) = 51.85 us.
  const NcclEstimate& tree = find(all, Algo::tree, Proto::ll128);
  CHECK(tree.latency_s == Approx(31.5 * kUs));
  CHECK(tree.algbw_Bps == Approx(220.8 * 0.7778 * 0.5 * kGB));
  CHECK(tree.time_s == Approx(31.5 * kUs + 1048576 / (220.8 * 0.7778 * 0.5 * 0.6 * kGB)));
  // Not on Ampere: NVLS (no NVLS bandwidth), CollNet (not enabled), NVLS-Tree (one server).
  CHECK(find(all, Algo::nvls, Proto::simple).excluded == "no NVLS on these GPUs");
  CHECK(find(all, Algo::collnet, Proto::simple).excluded == "CollNet runs only with NCCL_COLLNET_ENABLE=1");
  // NCCL takes the least: ring/LL at 45.58 us.
  const NcclEstimate* choice = nccl_choice(all);
  REQUIRE(choice != nullptr);
  CHECK(choice->algo == Algo::ring);
  CHECK(choice->proto == Proto::ll);
}

TEST_CASE("tuner: getAlgoInfo's channel count follows the bytes") {
  const NcclVersion& v = catalog().nccl_version("2.18");
  TunerTopology t = dgx_a100();
  // Ring LL: 512 threads x threshold 8 x 8 ranks = 32 KiB per channel before one more is added.
  CHECK(nccl_channels(v, t, Algo::ring, Proto::ll, 8) == 1);
  CHECK(nccl_channels(v, t, Algo::ring, Proto::ll, 32768 * 5) == 5);
  CHECK(nccl_channels(v, t, Algo::ring, Proto::ll, 1048576) == 24);  // 32 would fit; the graph has 24
  // Simple: 512 x 64 = 32 KiB; LL128: 640 x 8 = 5 KiB per channel.
  CHECK(nccl_channels(v, t, Algo::ring, Proto::simple, 65536) == 2);
  CHECK(nccl_channels(v, t, Algo::tree, Proto::ll128, 5120 * 3) == 3);
  CHECK(nccl_channels(v, t, Algo::nvls, Proto::simple, 8) == v.nvls_channels.at("default"));
}

TEST_CASE("tuner: LL128 is on only where the release line turns it on, and the environment limits the choice") {
  TunerTopology t = dgx_a100();
  // 2.5 turns LL128 on for Volta only; 2.18 for Volta, Ampere and Hopper over NVLink.
  auto old = nccl_estimates(catalog().nccl_version("2.5"), t, {}, CollOp::allreduce, 1 << 20, runs_everything);
  CHECK_FALSE(find(old, Algo::ring, Proto::ll128).excluded.empty());
  t.nvlink_intra = false;  // a PCIe ring: no LL128 in any line
  auto pcie = nccl_estimates(catalog().nccl_version("2.18"), t, {}, CollOp::allreduce, 1 << 20, runs_everything);
  CHECK_FALSE(find(pcie, Algo::ring, Proto::ll128).excluded.empty());
  t.nvlink_intra = true;
  TunerLimits limits;
  limits.algos = {Algo::tree};
  limits.protos = {Proto::simple};
  auto forced = nccl_estimates(catalog().nccl_version("2.18"), t, limits, CollOp::allreduce, 1 << 30, runs_everything);
  const NcclEstimate* choice = nccl_choice(forced);
  REQUIRE(choice != nullptr);
  CHECK(choice->algo == Algo::tree);
  CHECK(choice->proto == Proto::simple);
  CHECK(find(forced, Algo::ring, Proto::simple).excluded == "not in NCCL_ALGO");
  // What topsim cannot run is left out, but NCCL's estimate stays to say what NCCL would take.
  auto no_tree = nccl_estimates(catalog().nccl_version("2.18"), t, {}, CollOp::allreduce, 1 << 20,
                                [](Algo a) { return a == Algo::tree ? std::string("no tree here") : std::string(); });
  CHECK(find(no_tree, Algo::tree, Proto::ll128).excluded == "no tree here");
  CHECK(find(no_tree, Algo::tree, Proto::ll128).time_s > 0);
}

TEST_CASE("tuner: across servers the ring pays network steps and NVLS-Tree halves inter bandwidth beyond two servers") {
  const NcclVersion& v = catalog().nccl_version("2.18");
  TunerTopology t;
  t.ranks = 32;
  t.nodes = 4;
  t.architecture = "hopper";
  t.ring_Bps = t.inter_Bps = 400 * kGB;  // 8 NDR NICs of 50 GB/s
  t.nvls_Bps = 18 * 20.6 * kGB;
  t.channels = 16;
  auto all = nccl_estimates(v, t, {}, CollOp::allreduce, 1 << 30, runs_everything);
  // ring/Simple: nsteps 2 x 31 = 62, of which 2 x 4 = 8 cross the network: baseLat 8.4 + 54 x
  // max(NVLink 3.4, 3 x 1.0 us net overhead (tuning.cc:115)) + 8 x network 14 (tuning.cc:77) =
  // 304.0 us (all @v2.18.3-1), then x1.4 (ring plateau from SM80, tuning.cc:392).
  const NcclEstimate& ring = find(all, Algo::ring, Proto::simple);
  CHECK(ring.latency_s == Approx(304.0 * kUs));
  CHECK(ring.time_s == Approx(304.0 * 1.4 * kUs + (1 << 30) / (400 * kGB * 32 / 62)));
  // NVLS-Tree: min(370.8, 400 / 2) = 200 GB/s busBw, then 2.18's ratio .70 x nNodes / (2 (nNodes - 1))
  // (tuning.cc:198@v2.18.3-1) = 0.7 x 4 / 6: 93.33 GB/s. Latency: baseLat 23 (tuning.cc:59) + NVLink
  // hop 0 + 2 x log2(4) x network 19 (tuning.cc:77) = 99 us (topsim's log2 shape; 2.18 itself
  // charges 2 (nNodes - 1) network hops, docs/nccl.md).
  const NcclEstimate& nvls_tree = find(all, Algo::nvls_tree, Proto::simple);
  CHECK(nvls_tree.algbw_Bps == Approx(200 * kGB * 0.7 * 4 / 6));
  CHECK(nvls_tree.latency_s == Approx(99.0 * kUs));
  CHECK(find(all, Algo::nvls, Proto::simple).excluded == "NVLS alone stays in one NVLink domain (NVLS-Tree spans servers)");
}

TEST_CASE("tuner: the network plugin's reported latency joins every network hop, twice for Simple") {
  // The same 4 servers as above under 2.18, with an EFA plugin reporting 75 us
  // (graphs->latencyInter; tuning.cc:204-206@v2.18.3-1). ring/Simple: 8 network steps each gain
  // 2 x 75 us = 1200 us on top of the 304 us without it; ring/LL: 8 x 75 = 600 us.
  const NcclVersion& v = catalog().nccl_version("2.18");
  TunerTopology t;
  t.ranks = 32;
  t.nodes = 4;
  t.architecture = "hopper";
  t.ring_Bps = t.inter_Bps = 400 * kGB;
  t.nvls_Bps = 18 * 20.6 * kGB;
  t.channels = 16;
  auto without = nccl_estimates(v, t, {}, CollOp::allreduce, 1 << 30, runs_everything);
  t.net_latency_s = 75 * kUs;
  auto with = nccl_estimates(v, t, {}, CollOp::allreduce, 1 << 30, runs_everything);
  CHECK(find(with, Algo::ring, Proto::simple).latency_s - find(without, Algo::ring, Proto::simple).latency_s ==
        Approx(1200 * kUs));
  CHECK(find(with, Algo::ring, Proto::ll).latency_s - find(without, Algo::ring, Proto::ll).latency_s == Approx(600 * kUs));
  // 2.12 replaces the NET hardware latency with the reported one (tuning.cc:140@v2.12.12-1):
  // tree/LL across 4 servers, 2 log2(4) = 4 network hops at 75 us instead of NET LL's.
  const NcclVersion& old = catalog().nccl_version("2.12");
  auto replaced = nccl_estimates(old, t, {}, CollOp::allreduce, 1 << 20, runs_everything);
  t.net_latency_s = 0;
  auto plain = nccl_estimates(old, t, {}, CollOp::allreduce, 1 << 20, runs_everything);
  const double net_ll_s = old.hw_latency_s.at("network").at("tree").at("ll");
  CHECK(find(replaced, Algo::tree, Proto::ll).latency_s - find(plain, Algo::tree, Proto::ll).latency_s ==
        Approx(2 * 2 * (75 * kUs - net_ll_s)));
}

TEST_CASE("tuner: a release maps to its major.minor line, else to the nearest older line with a note") {
  CHECK(compare_versions("2.20.5", "2.21") < 0);
  CHECK(compare_versions("2.21", "2.21.0") == 0);
  CHECK(compare_versions("2.10", "2.9") > 0);
  CHECK(catalog().nccl_version("2.18.3").name == "2.18");
  CHECK(catalog().nccl_line("2.18.3").note.empty());
  CHECK(catalog().nccl_version("2.21.5").name == "2.21");
  // Between two lines and after the newest: the older line, and a note naming it and its tag.
  CHECK(catalog().nccl_version("2.20.5").name == "2.18");
  Catalog::NcclLine between = catalog().nccl_line("2.29.2");
  CHECK(between.line->name == "2.28");
  CHECK(between.note == "NCCL 2.29.2 is not a modelled line; using 2.28 (v2.28.9-1), the nearest older");
  CHECK(catalog().nccl_line("2.31").line->name == "2.30");
  CHECK_FALSE(catalog().nccl_line("2.31").note.empty());
  CHECK(catalog().nccl_version("").name == catalog().default_nccl());
  // Older than the oldest line, or no release number: an error listing the lines.
  CHECK_THROWS_AS(catalog().nccl_version("2.4.8"), UsageError);
  CHECK_THROWS_WITH(catalog().nccl_version("2.2.13"), Catch::Contains("2.5 (v2.5.6-1)"));
  CHECK_THROWS_AS(catalog().nccl_version("banana"), UsageError);
}

TEST_CASE("tuner: a release line with a missing or unknown table entry is an input error at its pointer") {
  std::string text = read_text(data_path("models/nccl_versions.json"));
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return input_error([&] {
      Catalog c;
      add_catalog_text(c, t, "nccl_versions.json");
    });
  };
  CHECK(broken("\"ring_ll\": 0.25,", "\"ring_lll\": 0.25,").find("nccl_versions.json:/nccl_versions/2.5/factors/ring_lll: unknown factor 'ring_lll'") == 0);
  // A citation not of the form path:line@tag, or of another tag than the line's, is refused.
  CHECK(broken("\"max_channels\": \"src/include/devcomm.h:40@v2.5.6-1\"", "\"max_channels\": \"NVIDIA/nccl src/include/devcomm.h @ v2.5.6-1\"")
            .find("nccl_versions.json:/nccl_versions/2.5/sources/max_channels: expected a citation of NCCL's source, "
                  "path:line@v2.5.6-1 or path:first-last@v2.5.6-1") == 0);
  CHECK(broken("\"max_channels\": \"src/include/devcomm.h:40@v2.5.6-1\"", "\"max_channels\": \"src/include/devcomm.h:40@v2.12.12-1\"")
            .find("/nccl_versions/2.5/sources/max_channels: expected a citation") != std::string::npos);
}

TEST_CASE("tuner: every NCCL number is cited; an uncited one is an input error, and the bundled file passes") {
  // The bundled file: every line loads, so each of its leaves has a path:line@tag citation.
  CHECK(catalog().nccl_lines().size() == 8);
  for (const NcclVersion* v : catalog().nccl_lines()) CHECK_FALSE(v->sources.empty());
  // The fixture is the 2.5 line with the citation of max_channels taken out.
  std::string error = input_error([] {
    Catalog c;
    add_catalog_text(c, read_text(data_path("tests/data/nccl/uncited-number.json")), "uncited-number.json");
  });
  CHECK(error.find("uncited-number.json:/nccl_versions/2.5/sources: no source for parameter 'max_channels'") == 0);
}

TEST_CASE("tuner: NCCL_IB_HCA picks NICs as NCCL reads it") {
  CHECK(nic_allowed("", "mlx5_3"));
  CHECK(nic_allowed("mlx5_0,mlx5_1", "mlx5_1"));
  CHECK_FALSE(nic_allowed("mlx5_0,mlx5_1", "mlx5_2"));
  CHECK(nic_allowed("mlx5", "mlx5_7"));            // a prefix
  CHECK_FALSE(nic_allowed("=mlx5", "mlx5_7"));     // '=': exact names only
  CHECK(nic_allowed("=mlx5_1:1", "mlx5_1"));       // the port is ignored
  CHECK_FALSE(nic_allowed("^mlx5_0", "mlx5_0"));   // '^': all but these
  CHECK(nic_allowed("^mlx5_0", "mlx5_4"));
}

TEST_CASE("tuner: NCCL_ALGO's names parse, CollNet's two variants to the one planner") {
  CHECK(parse_algo("Ring") == Algo::ring);
  CHECK(parse_algo("NVLSTree") == Algo::nvls_tree);
  CHECK(parse_algo("CollnetDirect") == Algo::collnet);
  CHECK(parse_algo("COLLNET_CHAIN") == Algo::collnet);
  CHECK_THROWS_AS(parse_algo("Collnet_Ring"), UsageError);
}
