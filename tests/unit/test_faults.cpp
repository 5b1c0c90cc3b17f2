// Failures, degraded links and stragglers (--fail, --degrade, --straggler) applied to a topology
// before it is built, with times derived by hand. One SimGrid engine per process: each TEST_CASE
// builds one Simulator and adds all its platforms before the first run.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "p2p/p2p.hpp"
#include "topology/faults.hpp"
#include "topology/flat.hpp"
#include "workload/replay.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

TopologySpec dgx_a100_cluster(int nodes) { return replicated_spec("dgx-a100", nodes); }

Topology with_faults(TopologySpec spec, const Faults& faults) {
  apply_faults(spec, faults);
  return Topology::build(spec, catalog());
}


// The part of a result's time the flows took: its time less the chosen plan's fixed latency.
double flow_s(const CollResult& r) {
  for (const Candidate& c : r.candidates)
    if (c.algo == r.algo && c.proto == r.proto) return r.time_s - c.latency_s;
  FAIL("the chosen candidate is not in the result");
  return 0;
}

std::string usage_error(const TopologySpec& spec, const Faults& faults) {
  TopologySpec copy = spec;
  try {
    apply_faults(copy, faults);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("faults: a failed NIC drops its rail on every server and the ring runs on the other 7") {
  Faults faults;
  faults.failed = {"n0.mlx5_3"};
  Topology healthy = Topology::build(dgx_a100_cluster(2), catalog());
  Topology faulty = with_faults(dgx_a100_cluster(2), faults);
  CHECK(faulty.nics().size() == 15);
  CHECK_FALSE(faulty.find("n0.mlx5_3"));
  CHECK(faulty.find("n1.mlx5_3"));  // still there, but no rail uses it: n0 has no NIC to pair it with
  CollRequest request;
  request.size_B = 8 * kGiB;
  request.algo = Algo::ring;
  request.proto = Proto::simple;
  Communicator h(healthy, all_gpus(healthy), nccl());
  Communicator f(faulty, all_gpus(faulty), nccl());
  CHECK(h.rails() == 8);
  CHECK(f.rails() == 7);
  // Rail 3 of each server is now mlx5_4 (NIC ordinals: n0 has 7 NICs 0-6, n1's mlx5_4 is 8 + 4).
  CHECK(faulty.device(faulty.nics().at(static_cast<std::size_t>(f.fabric().nic(0, 3)))).id == "n0.mlx5_4");
  CHECK(faulty.device(faulty.nics().at(static_cast<std::size_t>(f.fabric().nic(1, 3)))).id == "n1.mlx5_4");
  Simulator sim;
  PlatformRunner hr(sim, sim.add_platform(healthy, h.routes(), h.needs({request})));
  PlatformRunner fr(sim, sim.add_platform(faulty, f.routes(), f.needs({request})));
  CollResult rh = h.run(request, hr);
  CollResult rf = f.run(request, fr);
  // Both are bound by the path to the network: each HDR port, its NIC's Gen4 x16 slot and the
  // GPU's carry 24.0 GB/s, and topsim names the first on the route (a pcie4-x16 link). The ring's
  // 2(n-1)/n x S per rank crosses the network once per rail ring, the rails splitting the bytes
  // evenly. With 8 rails each NIC carries 1/8 of it, with 7 rails 1/7: the flows take 8/7 as
  // long, and busbw (less the fixed latency) is 7/8 of the healthy figure.
  CHECK(rh.bound_class == "pcie");
  CHECK(rf.bound_class == "pcie");
  CHECK_THAT(rh.bound, Catch::Contains("pcie4-x16"));
  CHECK_THAT(rf.bound, Catch::Contains("pcie4-x16"));
  CHECK(flow_s(rf) / flow_s(rh) == Approx(8.0 / 7.0).epsilon(1e-6));
  CHECK(rf.busbw_Bps / rh.busbw_Bps == Approx(7.0 / 8.0).epsilon(2e-3));
}

TEST_CASE("faults: a link degraded to 0.5 halves a p2p copy's bandwidth over it") {
  TopologySpec spec = load_topology_spec(test_data("tiny.json"));
  Faults faults;
  faults.degraded = {LinkDegrade{"gpu1-gpu0", 0.5}};  // either order of the ends names it
  Topology t = with_faults(spec, faults);
  Simulator sim;
  P2pOptions options;
  PlatformRunner runner(sim, sim.add_platform(t, route_options(options)));
  P2pPoint p = P2pBench(t, runner, options).measure(0, 1, 160e6);
  // Healthy: 2 links x 25 GB/s x 0.9701 = 48.505 GB/s (test_p2p.cpp); at 0.5 each link keeps
  // 12.5 GB/s: 24.2525 GB/s. time = 1.604 us write latency + 0.2 us NVLink + 160e6 / 24.2525e9.
  double time = 1.604e-6 + 0.2e-6 + 160e6 / 24.2525e9;
  CHECK(t.link(std::size_t{0}).bandwidth_Bps == 12.5e9);
  CHECK(p.time_s == Approx(time).epsilon(1e-6));
  CHECK(p.uni_Bps == Approx(160e6 / time).epsilon(1e-6));
  // The same link by index (#0, its place in the file's links array) compounds: 0.5 x 0.5.
  faults.degraded.push_back(LinkDegrade{"#0", 0.5});
  CHECK(with_faults(spec, faults).link(std::size_t{0}).bandwidth_Bps == 6.25e9);
}

TEST_CASE("faults: a straggler's compute ops take FACTOR times as long") {
  // flat:4:a100 (see test_workload.cpp): fwd.b streams 2799 MB at 1555 GB/s x 0.9 = 2 ms, fwd.a
  // is 1 ms as written. GPU 1 at factor 2.5 runs each of its ops 2.5 x longer: 2.5 + 5 = 7.5 ms;
  // GPU 0 keeps 1 + 2 = 3 ms. Nothing else runs: the iteration is the slowest rank, 7.5 ms.
  TraceSpec trace = parse_trace(R"({"ranks": 2, "ops": [
    {"name": "fwd.a0", "kind": "compute", "ranks": [0], "time": "1ms"},
    {"name": "fwd.b0", "kind": "compute", "ranks": [0], "bytes": "2799MB"},
    {"name": "fwd.a1", "kind": "compute", "ranks": [1], "time": "1ms"},
    {"name": "fwd.b1", "kind": "compute", "ranks": [1], "bytes": "2799MB"}]})",
                                "t.json");
  Faults faults;
  faults.stragglers = {Straggler{"gpu1", 2.5}};
  Topology t = with_faults(flat_topology("flat:4:a100", catalog()), faults);
  CHECK(t.device(t.gpu(1)).slowdown == 2.5);
  CHECK(t.device(t.gpu(0)).slowdown == 1);
  Simulator sim;
  Replay replay(t, catalog(), trace);
  PlatformRunner runner(sim, sim.add_platform(t, replay.routes(), replay.needs()));
  ReplayResult r = replay.run(runner);
  CHECK(r.iteration_s == Approx(7.5e-3).epsilon(1e-9));
  CHECK(r.compute_s == Approx(7.5e-3).epsilon(1e-9));
  CHECK(r.phase_s["fwd"] == Approx(3e-3).epsilon(1e-9));  // rank 0's phases are its own
}

TEST_CASE("faults: a straggler caps every NCCL flow through it at its share divided by FACTOR") {
  // Every ring of an 8-GPU allreduce passes through GPU 3. Each ring group runs at its cap
  // (rings x ring speed) when healthy; with GPU 3 at factor 2 each flow is capped at half of
  // what it carries alone, so the flows take exactly twice as long (latency terms unchanged).
  Faults faults;
  faults.stragglers = {Straggler{"gpu3", 2}};
  TopologySpec spec = load_topology_spec(data_path("topologies/dgx-a100.json"));
  Topology healthy = Topology::build(spec, catalog());
  Topology faulty = with_faults(spec, faults);
  CollRequest request;
  request.size_B = kGiB;
  request.algo = Algo::ring;
  request.proto = Proto::simple;
  Communicator h(healthy, all_gpus(healthy), nccl());
  Communicator f(faulty, all_gpus(faulty), nccl());
  Simulator sim;
  PlatformRunner hr(sim, sim.add_platform(healthy, h.routes(), h.needs({request})));
  PlatformRunner fr(sim, sim.add_platform(faulty, f.routes(), f.needs({request})));
  CollResult rh = h.run(request, hr);
  CollResult rf = f.run(request, fr);
  CHECK(flow_s(rf) / flow_s(rh) == Approx(2.0).epsilon(1e-6));
}

TEST_CASE("faults: names, values and disconnections are usage errors naming the flag") {
  TopologySpec spec = dgx_a100_cluster(2);
  Faults unknown;
  unknown.failed = {"n0.mlx5_9"};
  CHECK(usage_error(spec, unknown) ==
        "--fail n0.mlx5_9: dgx-a100-x2 has no device or link of that name (did you mean 'n0.mlx5_0'?); valid names "
        "include n0.gpu0, n0.nvswitch0, n0.pcie0, n0.cpu0, n0.mlx5_0, fabric.leaf0, n0.gpu0-n0.nvswitch0, #0 (57 "
        "devices; `topsim topo show` lists them)");
  Faults gpu;
  gpu.failed = {"n1.gpu2"};
  CHECK_THAT(usage_error(spec, gpu), Catch::StartsWith("--fail n1.gpu2: a failed GPU takes its rank out of the job"));
  Faults zero;
  zero.degraded = {LinkDegrade{"n0.gpu0-n0.nvswitch0", 0}};
  CHECK_THAT(usage_error(spec, zero), Catch::StartsWith("--degrade n0.gpu0-n0.nvswitch0=0: the fraction"));
  Faults above;
  above.degraded = {LinkDegrade{"n0.gpu0-n0.nvswitch0", 1.5}};
  CHECK_THAT(usage_error(spec, above), Catch::StartsWith("--degrade n0.gpu0-n0.nvswitch0=1.5: the fraction"));
  Faults unlinked;
  unlinked.degraded = {LinkDegrade{"n0.gpu0-n0.gpu1", 0.5}};
  CHECK(usage_error(spec, unlinked) == "--degrade n0.gpu0-n0.gpu1: no link joins n0.gpu0 and n0.gpu1");
  Faults slow;
  slow.stragglers = {Straggler{"n0.gpu0", 0.5}};
  CHECK(usage_error(spec, slow) == "--straggler n0.gpu0=0.5: a straggler runs FACTOR times slower, FACTOR 1 or more");
  // Every NIC of server 1 failed: its GPUs cannot reach server 0's.
  Faults cut;
  for (int i = 0; i < 8; ++i) cut.failed.push_back("n1.mlx5_" + std::to_string(i));
  CHECK_THAT(usage_error(spec, cut),
             Catch::Contains("n0.gpu0 and n1.gpu0 cannot reach each other without it; 8 GPUs are cut off from n0.gpu0"));
}
