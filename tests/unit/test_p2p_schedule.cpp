// NCCL's p2p channels (collectives/p2p_schedule.hpp, plan_direct.cpp): the counts of
// ncclTopoComputeP2pChannels and addP2pToPlan (NVIDIA/nccl v2.28.9-1) derived by hand, and the
// time of an alltoall whose channels, not its links, bound it.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "collectives/p2p_schedule.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

constexpr double kKiB = 1024;


// One server, all NVLink: the Simple chunk is NCCL_P2P_NVL_CHUNKSIZE, 512 KiB; a part is at
// least 512 KiB / 8 = 64 KiB and, while channels remain, at most 512 KiB x 32 = 16 MiB.
int one_node_channels(const P2pLayout& layout, double bytes) { return p2p_op_channels(layout, bytes, 64 * kKiB, 16 * kMiB); }

}  // namespace

TEST_CASE("p2p schedule: DGX A100's p2p channels, as NCCL 2.28 counts them") {
  // 24 collective channels (12 rings, two channels each); each pair of A100s is joined through
  // the NVSwitches by 12 NVLinks, so it asks for 2 x 12 = 24. p2pnChannels = pow2Up(24) = 32;
  // per peer pow2Up(min(24, 24)) = 32. On 8 ranks one operation starts on 32, halved while
  // 8 x it > 32: 16, 8, 4.
  P2pLayout eight = p2p_layout(24, 64, 24, 8);
  CHECK(eight.channels == 32);
  CHECK(eight.per_peer == 32);
  CHECK(eight.per_op_min == 4);
  // sendrecv of 1 GiB: 4 parts of 256 MiB are over 16 MiB, doubled while within 32 / 2:
  // 8 (128 MiB), 16 (64 MiB), 32 (32 MiB); 32 > 16 stops the doubling.
  CHECK(one_node_channels(eight, kGiB) == 32);
  // alltoall of 512 MiB: 64 MiB per peer, 4 parts of 16 MiB, not over 16 MiB.
  CHECK(one_node_channels(eight, 64 * kMiB) == 4);
  // 64 KiB per peer: min(4, ceil(64 KiB / 64 KiB) = 1) = 1; 200 KiB: min(4, 4) = 4.
  CHECK(one_node_channels(eight, 64 * kKiB) == 1);
  CHECK(one_node_channels(eight, 200 * kKiB) == 4);
  CHECK(one_node_channels(eight, 0) == 1);
  // Two ranks: 32 x 2 > 32, so 16; 256 MiB per peer is 16 parts of 16 MiB.
  P2pLayout two = p2p_layout(24, 64, 24, 2);
  CHECK(two.per_op_min == 16);
  CHECK(one_node_channels(two, 256 * kMiB) == 16);
  CHECK(one_node_channels(two, 512 * kMiB) == 32);
}

TEST_CASE("p2p schedule: across servers the network peers set the channels per peer") {
  // 16 ranks, 64 collective channels, network peers asking for 4 (the NICs a GPU needs):
  // p2pnChannels 64, per peer pow2Up(4) = 4, and 4 x 16 = 64 fits: 4 per operation.
  P2pLayout sixteen = p2p_layout(64, 64, 4, 16);
  CHECK(sixteen.channels == 64);
  CHECK(sixteen.per_peer == 4);
  CHECK(sixteen.per_op_min == 4);
  // 128 ranks: 4, 2, 1 (1 stops the halving though 128 > 64).
  P2pLayout many = p2p_layout(64, 64, 4, 128);
  CHECK(many.per_op_min == 1);
  // Across servers a part is 128 KiB / 2 = 64 KiB to 128 KiB: 512 KiB per peer starts on
  // min(1, 8) = 1 channel, 512 KiB > 128 KiB doubles to 2 (256 KiB) and 4 (128 KiB), where
  // 4 > 4 / 2 stops it.
  CHECK(p2p_op_channels(many, 512 * kKiB, 64 * kKiB, 128 * kKiB) == 4);
  // A collective channel count past MAXCHANNELS is cut to it; an odd one rounds up.
  CHECK(p2p_layout(80, 64, 36, 8).channels == 64);
  CHECK(p2p_layout(24, 64, 36, 8).per_peer == 32);
  CHECK(p2p_layout(24, 64, 2, 8).per_peer == 2);
}

TEST_CASE("p2p schedule: a 2-GPU A100 alltoall of 512 MiB runs at 16 channels' rate, not the NVLinks'") {
  // Each rank sends 256 MiB to the other on 16 channels (above). A channel carries the rings'
  // bandwidth over their channels: 12 rings x speed / 24 channels. 16 of them carry less than
  // the pair's 12 NVLinks (rings x speed, about 231 GB/s), so the channels bind:
  //   time = ring base + NVLink hop (Simple, ampere) + 512 KiB / channel + 256 MiB / (16 x channel),
  // the 512 KiB being the first chunk's extra stage (sender's copy before the receiver's).
  Simulator sim;
  Topology t = bundled("dgx-a100");
  Communicator comm(t, {0, 1}, nccl());
  CollRequest r;
  r.op = CollOp::alltoall;
  r.size_B = 512 * kMiB;
  r.dtype = DataType{"half", 2};
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs({r})));
  CollResult result = comm.run(r, runner);
  const RingSet& rings = comm.rings();
  REQUIRE(rings.rings() == 12);
  const double channel_Bps = rings.speed_Bps * 12 / 24;
  const NcclProtocol& simple = *comm.nccl().protocol("simple");
  const double time_s = simple.ring_base_s + simple.nvlink_hop_s + 512 * kKiB / channel_Bps + 256 * kMiB / (16 * channel_Bps);
  CHECK(result.algo == Algo::direct);
  CHECK(result.proto == Proto::simple);
  CHECK(result.channels == 16);
  CHECK(result.time_s == Approx(time_s).epsilon(1e-6));
  CHECK(result.bound_class == "channels");
}

TEST_CASE("p2p schedule: p2p LL holds per operation, times the channels per peer (2.28)") {
  // 8 A100s, alltoall of 4 MiB: 512 KiB per peer <= 16 KiB x 32 channels per peer = 512 KiB:
  // LL. 8 MiB: 1 MiB per peer: Simple. sendrecv of 1 MiB: LL as well (1 MiB > 512 KiB: no).
  Topology t = bundled("dgx-a100");
  Communicator comm(t, all_gpus(t), nccl());
  auto proto_of = [&](CollOp op, double size_B) {
    CollRequest r;
    r.op = op;
    r.size_B = size_B;
    Communicator::Choice c = comm.choose(r, nccl_tests_size(op, size_B, r.dtype, comm.ranks()));
    return c.candidates.at(static_cast<std::size_t>(c.chosen)).proto;
  };
  CHECK(proto_of(CollOp::alltoall, 4 * kMiB) == Proto::ll);
  CHECK(proto_of(CollOp::alltoall, 8 * kMiB) == Proto::simple);
  CHECK(proto_of(CollOp::sendrecv, 512 * kKiB) == Proto::ll);
  CHECK(proto_of(CollOp::sendrecv, kMiB) == Proto::simple);
}
