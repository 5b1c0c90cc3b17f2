// NCCL's ring search on GB200 NVL72 trays and racks (collectives/nccl_graph.cpp): the switch
// trays outside a tray are one NVS node, MNNVL fuses the trays of one NVLink domain into one
// system, and behind NVSwitches only ring neighbours are tried (NCCL 2.19+).
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "collectives/nccl_graph.hpp"
#include "helpers.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::vector<int> gpus_upto(int n) {
  std::vector<int> gpus(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) gpus[static_cast<std::size_t>(i)] = i;
  return gpus;
}

// The arithmetic every GB200 case shares (NCCL 2.28, the default line): a B200 has 18 NVLinks
// into the switch trays, one NVS node to NCCL at SM100's 40.1 GB/s a link (topo.h:21), so each
// GPU-NVS link carries 18 x 40.1 = 721.8 GB/s. The sm100 array starts at 90 (search.cc:986):
// floor(721.8 / 90) = 8 rings; 80 gives 9 (720, more hops), 70 gives 10 (700), 60 gives 12
// (720, more hops), 50 gives 14 (700), and 40 / 90 = .44 < .49 stops. 90 >= 25 and not below
// Blackwell's cap of 50: duplicated to 16 rings at 45 (ringGraph 16 x 45 = 720 GB/s), doubled
// at init to 32 channels. Every ring is the system's GPU order (first ring: PCI order; the
// others replay it).
void check_gb200_graph(const Topology& t, int gpus) {
  NcclRingGraph graph = nccl_ring_graph(t, gpus_upto(gpus), nccl(), true);
  CHECK_FALSE(graph.fallback);
  CHECK(graph.graph_channels() == 16);
  CHECK(graph.bw_intra_Bps == Approx(45e9));
  CHECK(graph.type_intra == PathType::nvl);  // through the NVS node: NVLink only, no C2C, no PCIe
  for (const auto& ring : graph.rings) CHECK(ring == gpus_upto(gpus));

  Communicator comm(t, gpus_upto(gpus), nccl());
  const RingSet& rings = comm.rings();
  CHECK(rings.nccl_search);
  CHECK(rings.type_intra == "NVL");
  CHECK(rings.rings() == 16);
  CHECK(rings.orders.size() == 1);
  CHECK(rings.channels() == 32);
  // topsim runs each ring at NCCL's 45 rescaled to its own NVLink5 (50 GB/s x the fitted
  // Blackwell NVLink efficiency) over NCCL's 40.1: 45 x 41.2 / 40.1 = 46.23 GB/s at 0.824.
  const double blackwell_nvlink = *catalog().nccl_models().at("blackwell").nvlink_efficiency;
  CHECK(rings.speed_Bps == Approx(45e9 * 50e9 * blackwell_nvlink / 40.1e9));
  // The tuner sees ringGraph's 16 x 45 = 720 GB/s over 32 channels, in one node (MNNVL: the
  // clique is one node to NCCL).
  CHECK(comm.tuner_topology().ring_Bps == Approx(720e9));
  CHECK(comm.tuner_topology().channels == 32);
  CHECK(comm.tuner_topology().nodes == 1);
  CHECK(comm.tuner_topology().nvlink_intra);
}

}  // namespace

TEST_CASE("nvl72: one tray's 4 GPUs search over the NVLink switch trays, not C2C and PCIe") {
  // Before: the switch planes lie outside the tray, the search saw C2C and PCIe only and found
  // 2 rings at 45 GB/s (90 GB/s of ring bandwidth); now 16 x 45 = 720.
  check_gb200_graph(replicated("gb200-tray", 1), 4);
  // The same tray as Azure sells it, and GB300 (B300: SM100 too, 18 NVLink5 links).
  check_gb200_graph(replicated("azure-nd-gb200-v6", 1), 4);
  check_gb200_graph(replicated("gb300-tray", 1), 4);
}

TEST_CASE("nvl72: trays of one NVLink domain are one MNNVL system") {
  // Two trays (8 GPUs) and eighteen (72): the trays' systems fused (topo.cc:1493-1497@v2.28.9-1),
  // the same 16 rings at 45 as one tray, each over all GPUs in order.
  check_gb200_graph(replicated("gb200-tray", 2), 8);
  Topology rack = replicated("gb200-tray", 18);
  check_gb200_graph(rack, 72);
  // The rack file (18 NVSwitch chips inside one server) searches alike.
  check_gb200_graph(bundled("gb200-nvl72-rack"), 72);
  // A subset across trays (GPUs 2-5: two of tray 0, two of tray 1) is one system too.
  Communicator subset(rack, {2, 3, 4, 5}, nccl());
  CHECK(subset.rings().nccl_search);
  CHECK(subset.rings().rings() == 16);
  CHECK(subset.rings().nccl_bw_intra_Bps == Approx(45e9));
}

TEST_CASE("nvl72: lines before MNNVL and before the NVSwitch neighbour rule keep topsim's search") {
  // NCCL 2.18 has neither (MNNVL from 2.21, neighbours first from 2.19): two trays are two
  // systems to it, so topsim's own search serves them, and 72 GPUs exceed the 32 ranks topsim
  // searches without the neighbour rule.
  const NcclVersion& old = catalog().nccl_version("2.18");
  REQUIRE_FALSE(old.graph.mnnvl);
  REQUIRE_FALSE(old.graph.nvswitch_neighbours_first);
  Topology two = replicated("gb200-tray", 2);
  CHECK_FALSE(Communicator(two, gpus_upto(8), old).rings().nccl_search);
  Topology rack = bundled("gb200-nvl72-rack");
  CHECK(nccl_search_rank_limit(rack, gpus_upto(72), old) == 32);
  // 2.28: NCCL_TOPO_MAX_NODES = 576 (graph.h:89@v2.28.9-1) where every GPU reaches an NVSwitch,
  // bounded by topsim at one NVL72 domain, 72: the search recurses a level per rank, and 256
  // levels overflowed the stack under the sanitizers; a PCIe-only server stays at 32.
  CHECK(nccl_search_rank_limit(rack, gpus_upto(72), nccl()) == 72);
  Topology pcie = bundled("pcie-2x-rtx2080ti");
  CHECK(nccl_search_rank_limit(pcie, gpus_upto(2), nccl()) == 32);
  // One tray with 2.18 still sees the switch trays (an NVLink end the host cannot see is taken
  // for an NVSwitch in every line), so its rings are NVLink ones, whatever its speeds.
  Topology tray = replicated("gb200-tray", 1);
  CHECK(Communicator(tray, gpus_upto(4), old).rings().type_intra == "NVL");
}

TEST_CASE("nvl72: behind NVSwitches each step tries only the ring neighbours") {
  // DGX H100 (NVSwitch): the rule leaves NCCL's result as before, 12 rings at 30 (the search
  // of test_collectives.cpp), in GPU order.
  Topology h100 = bundled("dgx-h100");
  NcclRingGraph graph = nccl_ring_graph(h100, gpus_upto(8), nccl(), true);
  CHECK(graph.graph_channels() == 12);
  CHECK(graph.bw_intra_Bps == Approx(30e9));
  for (const auto& ring : graph.rings) CHECK(ring == gpus_upto(8));
  // GPUs in another rank order: rank r on GPU 7 - r. The system orders GPUs by PCI (ordinal)
  // order, so the rings still follow the GPUs 0..7, i.e. ranks 7, 6, ..., 0.
  std::vector<int> reversed = {7, 6, 5, 4, 3, 2, 1, 0};
  NcclRingGraph back = nccl_ring_graph(h100, reversed, nccl(), true);
  CHECK(back.rings.front() == reversed);
}
