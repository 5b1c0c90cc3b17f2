// NCCL's transport per GPU pair on PCIe-only servers (collectives/nccl_transport.hpp): P2P over
// PCIe up to the release's P2P level (ncclTopoCheckP2p), SHM through host memory beyond, with
// the SHM buffer in the receiver's socket; and what a communicator's arcs then cross.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "collectives/nccl_transport.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "routing/route.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::string transport_text(const Topology& t, const Route& route) { return describe(t, route.path); }

RouteOptions reach_routes(std::optional<PeerReach> reach) {
  RouteOptions options;
  options.mode = TransferMode::sm;
  options.peer_reach = reach;
  return options;
}

const CpuModel& cpu_named(const std::string& name) { return catalog().cpu(name, SourceRef{}); }

}  // namespace

TEST_CASE("nccl transport: the P2P level per CPU vendor and communicator size, as the release says") {
  // 2.27 and 2.28 (paths.cc:315 and :319): PXB for every vendor, SYS for AMD with <= 2 GPUs.
  for (const char* line : {"2.27", "2.28"}) {
    const NcclVersion& v = catalog().nccl_version(line);
    CHECK(nccl_default_peer_reach(v, cpu_named("xeon-platinum-8468"), 8) == PeerReach::switch_tree);
    CHECK(nccl_default_peer_reach(v, cpu_named("xeon-platinum-8468"), 2) == PeerReach::switch_tree);
    CHECK(nccl_default_peer_reach(v, cpu_named("epyc-9654"), 4) == PeerReach::switch_tree);
    CHECK(nccl_default_peer_reach(v, cpu_named("epyc-9654"), 2) == PeerReach::system);
  }
  // 2.18 (paths.cc:277 and :291-292): PXB on Intel, SYS on AMD whatever the count.
  const NcclVersion& old = catalog().nccl_version("2.18");
  CHECK(nccl_default_peer_reach(old, cpu_named("xeon-e5-2698v4"), 8) == PeerReach::switch_tree);
  CHECK(nccl_default_peer_reach(old, cpu_named("epyc-7742"), 8) == PeerReach::system);
  CHECK(nccl_cpu_vendor(cpu_named("xeon-platinum-8468")) == "intel");
  CHECK(nccl_cpu_vendor(cpu_named("epyc-9654")) == "amd");
}

TEST_CASE("nccl transport: NCCL_P2P_LEVEL as NCCL reads it") {
  CHECK_FALSE(parse_nccl_p2p_level("LOC").has_value());
  CHECK_FALSE(parse_nccl_p2p_level("0").has_value());
  CHECK(parse_nccl_p2p_level("NVL") == PeerReach::nvlink_only);
  CHECK(parse_nccl_p2p_level("PIX") == PeerReach::one_switch);
  CHECK(parse_nccl_p2p_level("1") == PeerReach::one_switch);
  CHECK(parse_nccl_p2p_level("PXB") == PeerReach::switch_tree);
  CHECK(parse_nccl_p2p_level("PHB") == PeerReach::socket);
  CHECK(parse_nccl_p2p_level("3") == PeerReach::socket);
  CHECK(parse_nccl_p2p_level("SYS") == PeerReach::system);
  CHECK(parse_nccl_p2p_level("5") == PeerReach::system);
  CHECK(parse_nccl_p2p_level("9") == PeerReach::system);  // levelsOldToNew clamps past its end
  CHECK_THROWS_WITH(parse_nccl_p2p_level("node"),
                    "--env NCCL_P2P_LEVEL=node: expected LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS or 0-5");
}

TEST_CASE("nccl transport: L40S pairs under one switch use P2P, the others SHM in the receiver's socket") {
  // pcie-8x-l40s: gpu0,1 under pcie0 and gpu2,3 under pcie1 on cpu0; gpu4..7 likewise on cpu1.
  Topology t = bundled("pcie-8x-l40s");
  RouteOptions pxb = reach_routes(PeerReach::switch_tree);
  Route same_switch = find_route(t, 0, 1, pxb);
  CHECK(same_switch.kind == RouteKind::pcie_peer);
  CHECK(transport_text(t, same_switch) == "[gpu0 SMs] gpu0 -pcie4-x16-> pcie0 [pcie0] pcie0 -pcie4-x16-> gpu1 [gpu1 SMs]");
  // Across the root complex (PHB): SHM, the buffer in cpu0's memory.
  Route phb = find_route(t, 1, 2, pxb);
  CHECK(phb.kind == RouteKind::host_staged);
  CHECK(transport_text(t, phb) == "[gpu1 SMs] gpu1 -pcie4-x16-> pcie0 [pcie0] pcie0 -pcie5-x16-> cpu0 [cpu0 memory] "
                        "cpu0 -pcie5-x16-> pcie1 [pcie1] pcie1 -pcie4-x16-> gpu2 [gpu2 SMs]");
  // Across sockets (SYS): the sender writes over UPI into the receiver's socket (NCCL_SHM_LOCALITY
  // 2, shm.cc:70@v2.27.7-1).
  Route sys = find_route(t, 3, 4, pxb);
  CHECK(sys.kind == RouteKind::host_staged);
  CHECK(transport_text(t, sys) == "[gpu3 SMs] gpu3 -pcie4-x16-> pcie1 [pcie1] pcie1 -pcie5-x16-> cpu0 [cpu0] cpu0 -upi-16x4-> "
                        "cpu1 [cpu1 memory] cpu1 -pcie5-x16-> pcie2 [pcie2] pcie2 -pcie4-x16-> gpu4 [gpu4 SMs]");
  // Narrowest hop of both: a GPU's Gen4 x16 at NCCL's PCIe efficiency, 31.508 GB/s x 0.7617 =
  // 24.0 GB/s; the Gen5 uplinks carry 63.015 x 0.7617 = 48.0, the UPI bundle 4 x 32 = 128,
  // host memory 307.2 / 2 = 153.6 (written once, read once).
  CHECK(path_bandwidth_Bps(t, phb.path, TransferMode::sm) == Approx(31.508e9 * 0.7617));
  CHECK(path_bandwidth_Bps(t, sys.path, TransferMode::sm) == Approx(31.508e9 * 0.7617));
  // NCCL_P2P_LEVEL=PHB: the root complex carries peer traffic; SYS: so do the sockets' links.
  CHECK(find_route(t, 1, 2, reach_routes(PeerReach::socket)).kind == RouteKind::pcie_peer);
  CHECK(find_route(t, 3, 4, reach_routes(PeerReach::socket)).kind == RouteKind::host_staged);
  Route across = find_route(t, 3, 4, reach_routes(PeerReach::system));
  CHECK(across.kind == RouteKind::pcie_peer);
  CHECK(transport_text(t, across) == "[gpu3 SMs] gpu3 -pcie4-x16-> pcie1 [pcie1] pcie1 -pcie5-x16-> cpu0 [cpu0] cpu0 -upi-16x4-> "
                           "cpu1 [cpu1] cpu1 -pcie5-x16-> pcie2 [pcie2] pcie2 -pcie4-x16-> gpu4 [gpu4 SMs]");
  // NCCL_P2P_LEVEL=PIX: one switch only (gpu0,1 still); NVL: no PCIe peers.
  CHECK(find_route(t, 0, 1, reach_routes(PeerReach::one_switch)).kind == RouteKind::pcie_peer);
  CHECK(find_route(t, 0, 1, reach_routes(PeerReach::nvlink_only)).kind == RouteKind::host_staged);
  // CUDA's own copies (no reach given) keep peer access inside a socket.
  CHECK(find_route(t, 1, 2, RouteOptions{}).kind == RouteKind::pcie_peer);
}

TEST_CASE("nccl transport: GeForce boards have no peer access at any level") {
  Topology t = bundled("pcie-8x-rtx4090");
  CHECK(find_route(t, 0, 1, reach_routes(PeerReach::system)).kind == RouteKind::host_staged);
  Topology ti = bundled("pcie-2x-rtx2080ti");
  Route r = find_route(ti, 0, 1, reach_routes(PeerReach::switch_tree));
  CHECK(r.kind == RouteKind::host_staged);
  // Up and down one Gen3 switch uplink: 15.754 GB/s x 0.7617 (NCCL's 12.0 GB/s) = 12.0 GB/s.
  CHECK(path_bandwidth_Bps(ti, r.path, TransferMode::sm) == Approx(15.754e9 * 0.7617));
}

TEST_CASE("nccl transport: a communicator's arcs follow the release's P2P level") {
  Topology t = bundled("pcie-8x-l40s");
  Communicator comm(t, all_gpus(t), catalog().nccl_version("2.27"));
  CHECK(comm.fabric().options().peer_reach == PeerReach::switch_tree);
  CHECK(comm.fabric().arc(0, 1).kind == RouteKind::pcie_peer);
  CHECK(comm.fabric().arc(1, 2).kind == RouteKind::host_staged);
  CHECK(comm.fabric().arc(3, 4).kind == RouteKind::host_staged);
  RouteOptions phb;
  phb.peer_reach = PeerReach::socket;  // NCCL_P2P_LEVEL=PHB
  Communicator wide(t, all_gpus(t), catalog().nccl_version("2.27"), phb);
  CHECK(wide.fabric().arc(1, 2).kind == RouteKind::pcie_peer);
  CHECK(wide.fabric().arc(3, 4).kind == RouteKind::host_staged);
}

namespace {

CollResult simulate_one(const Topology& t, CollOp op, double size_B) {
  Simulator sim;
  Communicator comm(t, all_gpus(t), nccl());
  CollRequest request;
  request.op = op;
  request.size_B = size_B;
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs({request})));
  return comm.run(request, runner);
}

}  // namespace

TEST_CASE("nccl transport: two 2080 Ti share their switch's uplink through host memory") {
  // SHM both ways: each GPU's bytes go up the one Gen3 x16 uplink into cpu0's memory and back
  // down it. Allgather of S = 256 MiB on 2 ranks: each rank sends S/2 = 134217728 B. The uplink
  // carries both ranks' flows each way at 15.754 GB/s x 0.7617 = 12.0 GB/s, 6.0 GB/s each:
  // 134217728 / 6.0e9 = 22.37 ms; busbw = algbw x (n-1)/n = (S / t) / 2 = 6.0 GB/s. NCCL's
  // latency terms (tens of us) stay under 0.5% of that.
  Topology t = bundled("pcie-2x-rtx2080ti");
  CollResult r = simulate_one(t, CollOp::allgather, 256.0 * 1024 * 1024);
  CHECK(r.busbw_Bps == Approx(15.754e9 * 0.7617 / 2).epsilon(0.005));
  CHECK(r.bound == "pcie0 -pcie3-x16-> cpu0 (100%)");
}

TEST_CASE("nccl transport: eight RTX 4090s ring through host memory, four flows per switch uplink") {
  // pcie-8x-rtx4090: gpu0-3 under pcie0 on cpu0, gpu4-7 under pcie1 on cpu1, all SHM. The ring
  // 0>1>...>7>0 sends 0>1, 1>2, 2>3 up and down pcie0's uplink, 3>4 up it, 7>0 down it: four
  // flows each way at 31.508 GB/s x 0.7617 = 24.0 GB/s, 6.0 GB/s each, which is busbw.
  Topology t = bundled("pcie-8x-rtx4090");
  CollResult r = simulate_one(t, CollOp::allreduce, 256.0 * 1024 * 1024);
  CHECK(r.busbw_Bps == Approx(31.508e9 * 0.7617 / 4).epsilon(0.005));
  CHECK(r.bound.rfind("pcie", 0) == 0);
}
