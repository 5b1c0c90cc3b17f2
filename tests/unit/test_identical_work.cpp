// Identical work once (issue 15): the engine gives SimGrid one constraint per set of constraints
// crossed by the same flows the same number of times, the narrowest. These tests derive the
// reduction by hand and compare the reduced system against the full one where symmetry holds and
// where it breaks. Each TEST_CASE builds its own Simulator (one engine per process).
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/distinct_constraints.hpp"
#include "engine/simulator.hpp"
#include "coll_helpers.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::vector<int> first_gpus(const Topology& /*topology*/, int count) {
  std::vector<int> gpus;
  for (int g = 0; g < count; ++g) gpus.push_back(g);
  return gpus;
}

// The same requests simulated twice on one engine: on a platform built with the reduction and on
// one built with every constraint. Times must agree to SimGrid's precision and, in practice, to
// the last printed digit.
void check_reduced_equals_full(const Topology& t, const std::vector<int>& gpus, const std::vector<CollRequest>& requests) {
  Simulator sim;
  Communicator reduced_comm(t, gpus, nccl());
  Communicator full_comm(t, gpus, nccl());
  PlatformRunner reduced(sim, sim.add_platform(t, reduced_comm.routes(), reduced_comm.needs(requests)));
  sim.reduce_identical(false);
  PlatformRunner full(sim, sim.add_platform(t, full_comm.routes(), full_comm.needs(requests)));
  for (const CollRequest& request : requests) {
    CollResult a = reduced_comm.run(request, reduced);
    CollResult b = full_comm.run(request, full);
    INFO(t.name() << " " << to_string(request.op) << " " << request.size_B << " B: " << to_string(a.algo) << "/"
                  << to_string(a.proto));
    CHECK(a.algo == b.algo);
    CHECK(a.time_s == Approx(b.time_s).epsilon(1e-12));
    CHECK(a.bound == b.bound);
  }
}

}  // namespace

TEST_CASE("identical work: constraints crossed by the same flows the same times collapse to the narrowest") {
  // Keys 0..7 with capacities 10, 20, 5, 5, 8, 9, 1, 1 (B/s). Route 0 crosses 0, 2, 4, 4;
  // route 1 crosses 1, 2, 5, 5; route 2 crosses 3.
  //   key 0 {(r0,1)}, key 1 {(r1,1)}: distinct sets, both kept.
  //   key 2 {(r0,1),(r1,1)}: alone with that set, kept.
  //   key 4 {(r0,2)} and key 5 {(r1,2)}: distinct (different routes), both kept.
  //   key 3 {(r2,1)}: kept. Keys 6 and 7: no route crosses them, dropped.
  // Nothing collapses here: every crossed key has a set of its own.
  std::vector<std::vector<ConstraintKey>> routes = {{0, 2, 4, 4}, {1, 2, 5, 5}, {3}};
  std::vector<double> capacity = {10, 20, 5, 5, 8, 9, 1, 1};
  std::vector<bool> none(capacity.size(), false);
  CHECK(distinct_constraints(routes, capacity, none) ==
        std::vector<bool>{true, true, true, true, true, true, false, false});

  std::vector<std::vector<ConstraintKey>> ring = {{0, 1, 2, 3}, {0, 1, 2, 3}, {4, 5}, {4, 5, 5}};
  // Keys 0-3 each carry {(r0,1),(r1,1)}: one survives, key 2 or 3 (capacity 5); the tie goes to
  // the lower key, 2. Key 4 carries {(r2,1),(r3,1)}, key 5 {(r2,1),(r3,2)}: different counts, so
  // both stay (a flow crossing a link twice loads it twice).
  CHECK(distinct_constraints(ring, capacity, none) ==
        std::vector<bool>{false, false, true, false, true, true, false, false});

  // A pinned constraint (a pair route's: any transfer may load it) always stays, and never
  // stands in for others: keys 0, 1, 3 remain interchangeable and key 3 (capacity 5) survives.
  std::vector<bool> pinned = none;
  pinned[2] = true;
  CHECK(distinct_constraints(ring, capacity, pinned) ==
        std::vector<bool>{false, false, true, true, true, true, false, false});
}

TEST_CASE("identical work: the reduced system gives the full system's times on symmetric clusters") {
  // 4 DGX A100 on their HDR rails: every server's NIC links, NVSwitch crossings and SMs carry
  // the same rail flows, so most constraints collapse; the times must not move.
  Topology a100 = replicated("dgx-a100", 4);
  check_reduced_equals_full(a100, first_gpus(a100, a100.gpu_count()),
                            requests_of({CollOp::allreduce, CollOp::allgather, CollOp::broadcast}, {1048576.0, kGiB}));
  check_reduced_equals_full(a100, first_gpus(a100, a100.gpu_count()), requests_of({CollOp::allreduce}, {kGiB}, Algo::tree));
}

TEST_CASE("identical work: the reduced system gives the full system's times where symmetry breaks") {
  // Uneven NVLinks: five GPUs of a DGX-1 (hybrid cube-mesh) form rings over links of one and two
  // NVLinks and through PCIe, so the constraints differ and few collapse.
  Topology dgx1 = bundled("dgx1-v100");
  check_reduced_equals_full(dgx1, first_gpus(dgx1, 5),
                            requests_of({CollOp::allreduce, CollOp::broadcast, CollOp::reducescatter}, {65536.0, kGiB}));
  // Fewer NICs than GPUs per server, and a tapered fabric: a DGX-1 cluster's 4 EDR NICs per
  // server, two GPUs per NIC, on one switch.
  Topology edr = Topology::build(
      expand_cluster(load_cluster_spec(data_path("topologies/clusters/dgx1-4xedr-fattree.json")),
                     load_topology_spec(data_path("topologies/dgx1-v100.json")), catalog()),
      catalog());
  check_reduced_equals_full(edr, first_gpus(edr, edr.gpu_count()), requests_of({CollOp::allreduce}, {1048576.0, kGiB}));
}
