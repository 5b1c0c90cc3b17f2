// Collectives across servers: NIC rails, rings, double binary trees and CollNet, with times
// derived by hand. One SimGrid engine per process: each TEST_CASE builds its own Simulator.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {


CollResult run_one(const Topology& t, Communicator& comm, CollRequest request) {
  Simulator sim;
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs({request})));
  return comm.run(request, runner);
}

CollRequest allreduce(double size_B, Algo algo) {
  CollRequest r;
  r.size_B = size_B;
  r.algo = algo;
  return r;
}

}  // namespace

TEST_CASE("scale-out: servers joined by a network run over NIC rails") {
  Topology a100 = replicated("dgx-a100", 2);
  Communicator comm(a100, all_gpus(a100), nccl());
  CHECK(comm.across_network());
  CHECK(comm.rails() == 8);
  // NCCL's tuner sees 2 servers, 2 channels per rail, and 8 rails of one HDR port each: the
  // port (25 GB/s x 0.96) and the NIC's Gen4 x16 slot (31.5 GB/s x 0.7617) both carry 24.0 GB/s.
  const TunerTopology& tuner = comm.tuner_topology();
  CHECK(tuner.nodes == 2);
  CHECK(tuner.channels == 16);
  CHECK(tuner.inter_Bps == Approx(8 * 24.0e9).epsilon(0.01));
  CHECK(tuner.ring_Bps == tuner.inter_Bps);
  // One NVLink domain across servers is not a network: NCCL runs its single-domain algorithms.
  Topology nvl = replicated("gb200-tray", 2);
  Communicator domain(nvl, all_gpus(nvl), nccl());
  CHECK_FALSE(domain.across_network());
  CHECK_THROWS_WITH(Communicator(a100, {0, 1, 8}, nccl()),
                    "every server of a communicator must contribute as many GPUs; server 1 has 1, server 0 has 2");
}

TEST_CASE("scale-out: a ring through one EDR NIC per DGX-1 runs at the NIC's PCIe slot") {
  // Two DGX-1 with one NIC each: one rail, 16 ranks. The NIC's Gen3 x16 slot at NCCL's PCIe
  // efficiency carries 15.754 x 0.7617 = 12.00 GB/s (the EDR port, 12.5 x 0.976 = 12.2, is
  // wider). Every ring hop moves 2 x 15/16 x S, so busbw = 2 x 15/16 x S / t = 12.00 GB/s less
  // the latency's share: base 8.4 us + 30 steps x (2/16 x 14 us network + 14/16 x 9.56 us
  // NVLink) = 311.9 us against 1.875 x 8 GiB / 12.00 GB/s = 1.342 s, 0.02%.
  Topology t = replicated("dgx1-v100", 2, "", 1);
  Communicator comm(t, all_gpus(t), nccl());
  CollResult r = run_one(t, comm, allreduce(8 * kGiB, Algo::ring));
  CHECK(r.busbw_Bps / 1e9 == Approx(12.00 * (1 - 0.0002)).epsilon(0.002));
  CHECK(r.bound_class == "pcie");
}

TEST_CASE("scale-out: a double binary tree over two servers sends each NIC S, where a ring sends 2(n-1)/n S") {
  // Same two DGX-1. Each server is the root of one tree and a leaf of the other: its NIC sends
  // S/2 up one tree and S/2 down the other, S per direction, at the 12.00 GB/s of the slot
  // (the head GPU's own Gen3 x16 link carries the same). Pipeline fill: a channel carries S/2 in
  // 512 KiB chunks (8192), through 2 x (7 chain + 1 network) = 16 stages: x (16 + 8191) / 8192.
  // t = 8 GiB / 12.00 GB/s x 1.00183 + 170.2 us latency = 717.3 ms; busbw = 1.875 S / t.
  Topology t = replicated("dgx1-v100", 2, "", 1);
  Communicator comm(t, all_gpus(t), nccl());
  CollResult r = run_one(t, comm, allreduce(8 * kGiB, Algo::tree));
  double t_s = 8 * kGiB / 12.0e9 * (16 + 8191) / 8192.0 + 170.24e-6;
  CHECK(r.time_s == Approx(t_s).epsilon(0.002));
  CHECK(r.busbw_Bps > 1.8 * 12.0e9);  // beyond the NIC's line rate, as NCCL's trees are on 2 nodes
}

TEST_CASE("scale-out: CollNet needs SHARP switches and is never picked unasked") {
  Topology eth = replicated("pcie-8x-rtx4090", 2);
  Communicator plain(eth, all_gpus(eth), nccl());
  CHECK(plain.unavailable(CollOp::allreduce, Algo::collnet) ==
        "CollNet needs SHARP in every network switch; fabric.leaf0 (sn2700) has none");
  Topology ib = replicated("dgx1-v100", 2, "", 1);
  Communicator comm(ib, all_gpus(ib), nccl());
  CHECK(comm.unavailable(CollOp::allreduce, Algo::collnet).empty());
  CollRequest automatic;
  automatic.size_B = 8 * kGiB;
  CHECK(run_one(ib, comm, automatic).algo != Algo::collnet);
}
