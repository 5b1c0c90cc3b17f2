// Identical work once, by flows (issue 29): the engine simulates one op per class of identical
// work (src/engine/representatives.hpp) and gives each op its class's times. These tests derive
// the classes by hand, then run the same requests with the representative run and in full, where
// symmetry holds and where a failed NIC, a straggler, ECMP hashing and uneven dependencies break
// it: times must agree to 1e-9 relative and the bound name the same resource. Each TEST_CASE
// builds its own Simulator (one engine per process).
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/representatives.hpp"
#include "engine/simulator.hpp"
#include "coll_helpers.hpp"
#include "helpers.hpp"
#include "topology/faults.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

// Every request run twice on one platform: with one op per class of identical work, then with
// every op. `reduces`: the representative run of the chosen candidate simulates fewer ops.
void check_represented_equals_full(const Topology& t, const std::vector<CollRequest>& requests, bool reduces,
                                   RouteOptions routes = {}) {
  Simulator sim;
  Communicator comm(t, all_gpus(t), nccl(), routes);
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs(requests)));
  for (const CollRequest& request : requests) {
    CollRequest chosen = request;
    sim.represent_identical(false);
    CollResult full = comm.run(request, runner);
    chosen.algo = full.algo;
    chosen.proto = full.proto;
    comm.run(chosen, runner);
    const std::size_t full_ops = sim.simulated_ops();
    sim.represent_identical(true);
    CollResult represented = comm.run(request, runner);
    comm.run(chosen, runner);
    const std::size_t represented_ops = sim.simulated_ops();
    INFO(t.name() << " " << to_string(request.op) << " " << request.size_B << " B: " << to_string(full.algo) << "/"
                  << to_string(full.proto) << ", " << represented_ops << " of " << full_ops << " ops simulated");
    CHECK(represented.algo == full.algo);
    CHECK(represented.proto == full.proto);
    CHECK(represented.time_s == Approx(full.time_s).epsilon(1e-9));
    CHECK(represented.bound == full.bound);
    if (reduces) CHECK(represented_ops < full_ops);
  }
}

}  // namespace

TEST_CASE("representatives: the classes of a small system, by hand") {
  // Keys 0, 1 of 10 B/s (two servers' NIC links), keys 2, 3 of 5 B/s (their PCIe links).
  // Op 0 crosses {0, 2}, op 1 crosses {1, 3}: the same work on two servers. Op 2 crosses {0, 1}
  // once each (a flow between the servers). All move 100 B.
  std::vector<double> capacity = {10, 10, 5, 5};
  std::vector<std::vector<ConstraintKey>> keys = {{0, 2}, {1, 3}, {0, 1}, {2}};
  auto schedule_of = [](int ops) {
    Schedule s;
    for (int i = 0; i < ops; ++i) s.composite(static_cast<std::size_t>(i), 100);
    return s;
  };
  auto constraints_of = [&](int ops) {
    std::vector<OpConstraints> out(static_cast<std::size_t>(ops));
    for (int i = 0; i < ops; ++i) out[static_cast<std::size_t>(i)].keys = &keys[static_cast<std::size_t>(i)];
    return out;
  };
  // Ops 0-2: ops {0, 1} and {2}; keys {0, 1} (each crossed once by a class-0 op and once by op 2)
  // and {2, 3} (once by a class-0 op). So M(C0, F0) = 1, M(C0, F1) = 1, M(C1, F0) = 1.
  Schedule three = schedule_of(3);
  Representatives r = representatives(three, constraints_of(3), capacity, 8);
  CHECK(r.stable);
  CHECK(r.class_of_op == std::vector<std::uint32_t>{0, 0, 1});
  CHECK(r.representative == std::vector<std::size_t>{0, 2});
  CHECK(r.constraint == std::vector<ConstraintKey>{0, 2});
  using Row = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  CHECK(r.crossings == std::vector<Row>{{{0, 1}, {1, 1}}, {{0, 1}}});

  // Op 3 crosses key 2 only: server 0's PCIe now carries two flows, server 1's one. Keys 2 and
  // 3 differ, so ops 0 and 1 differ, so keys 0 and 1 do: every op and key is its own class.
  Schedule four = schedule_of(4);
  Representatives broken = representatives(four, constraints_of(4), capacity, 8);
  CHECK(broken.stable);
  CHECK(broken.class_of_op == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(broken.constraint == std::vector<ConstraintKey>{0, 1, 2, 3});

  // Predecessors split what constraints do not: op 1 after a 1 s delay starts later than op 0.
  Schedule delayed;
  delayed.composite(0, 100);
  std::size_t wait = delayed.delay(0, 1.0);
  delayed.composite(1, 100, {wait});
  std::vector<OpConstraints> delayed_ops(3);
  delayed_ops[0].keys = &keys[0];
  delayed_ops[2].keys = &keys[1];
  Representatives late = representatives(delayed, delayed_ops, capacity, 8);
  CHECK(late.stable);
  CHECK(late.class_of_op == std::vector<std::uint32_t>{0, 1, 2});

  // A round limit too small to converge says so: the engine then simulates in full.
  CHECK_FALSE(representatives(four, constraints_of(4), capacity, 1).stable);
}

TEST_CASE("representatives: one op per class gives the full system's times on identical servers") {
  // 4 DGX H100: alltoall's 992 pair flows fall into a few classes (same server, other server).
  Topology h100 = replicated("dgx-h100", 4);
  check_represented_equals_full(h100, requests_of({CollOp::alltoall}, {1048576.0, kGiB}), true);
  check_represented_equals_full(h100, requests_of({CollOp::allreduce, CollOp::allgather}, {1048576.0, kGiB}), false);
}

TEST_CASE("representatives: a failed NIC or a straggler splits only the classes it touches") {
  TopologySpec spec = replicated_spec("dgx-h100", 4);
  Faults nic;
  nic.failed = {"n1.mlx5_2"};
  TopologySpec without_nic = spec;
  apply_faults(without_nic, nic);
  Topology failed = Topology::build(without_nic, catalog());
  check_represented_equals_full(failed, requests_of({CollOp::alltoall, CollOp::allreduce}, {kGiB}), false);
  Faults slow;
  slow.stragglers = {Straggler{"n2.gpu3", 2.0}};
  TopologySpec with_straggler = spec;
  apply_faults(with_straggler, slow);
  Topology straggler = Topology::build(with_straggler, catalog());
  check_represented_equals_full(straggler, requests_of({CollOp::alltoall, CollOp::allreduce}, {1048576.0, kGiB}), false);

  // The failed NIC's alltoall still folds: the servers and rails it does not touch are alike.
  Simulator sim;
  CollRequest alltoall = requests_of({CollOp::alltoall}, {kGiB}).front();
  Communicator comm(failed, all_gpus(failed), nccl());
  PlatformRunner runner(sim, sim.add_platform(failed, comm.routes(), comm.needs({alltoall})));
  comm.run(alltoall, runner);
  const std::size_t flows = 32 * 31;
  CHECK(sim.simulated_ops() < flows / 4);
}

TEST_CASE("representatives: ECMP collisions on an oversubscribed three-tier fabric") {
  // 16 DGX-1 under 2:1 leaves and 3:1 spines; ECMP places each NIC pair on one spine and member
  // link, so the uplinks carry uneven sets of flows and the classes follow the hash.
  Topology t = Topology::build(expand_cluster(load_cluster_spec(test_data("fabric/three-tier-oversubscribed.json")),
                                              load_topology_spec(data_path("topologies/dgx1-v100.json")), catalog()),
                               catalog());
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  check_represented_equals_full(t, requests_of({CollOp::alltoall}, {kGiB}), false, ecmp);
  check_represented_equals_full(t, requests_of({CollOp::allreduce}, {kGiB}), false, ecmp);
}

TEST_CASE("representatives: a schedule with delays, a straggler's longer one and dependent rounds") {
  // 2 DGX H100 (16 GPUs): every GPU waits its launch delay (1 us; GPU 5 3 us), sends 64 MiB to
  // its peer on the other server, then 16 MiB to its neighbour. GPU 5's sends and everything
  // sharing a link with them split off; the rest fold.
  Topology t = replicated("dgx-h100", 2);
  Schedule s;
  std::vector<std::size_t> first(16);
  for (int g = 0; g < 16; ++g) {
    std::size_t wait = s.delay(g, g == 5 ? 3e-6 : 1e-6);
    first[static_cast<std::size_t>(g)] = s.transfer(g, (g + 8) % 16, 64 * kMiB, {wait});
  }
  for (int g = 0; g < 16; ++g) s.transfer(g, (g + 1) % 16, 16 * kMiB, {first[static_cast<std::size_t>(g)]});
  Simulator sim;
  PlatformRunner runner(sim, sim.add_platform(t, RouteOptions{}));
  sim.represent_identical(false);
  std::vector<OpTiming> full = runner.run(s);
  CHECK(sim.simulated_ops() == s.ops.size());
  sim.represent_identical(true);
  std::vector<OpTiming> represented = runner.run(s);
  CHECK(sim.simulated_ops() < s.ops.size());
  REQUIRE(represented.size() == full.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    INFO("op " << i);
    CHECK(represented[i].start_s == Approx(full[i].start_s).epsilon(1e-9).margin(1e-15));
    CHECK(represented[i].finish_s == Approx(full[i].finish_s).epsilon(1e-9));
  }
  // GPU 5 started 2 us later than GPU 4, whose twin it would otherwise be.
  CHECK(full[first[5]].start_s - full[first[4]].start_s == Approx(2e-6));
}
