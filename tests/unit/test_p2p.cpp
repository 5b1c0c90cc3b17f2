#include <catch2/catch.hpp>

#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "p2p/p2p.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

// Records every schedule; each transfer takes 1 s and each delay its own length, ops start when
// their dependencies finish.
class RecordingRunner : public Runner {
 public:
  std::vector<Schedule> seen;
  std::vector<OpTiming> run(const Schedule& schedule) override {
    seen.push_back(schedule);
    std::vector<OpTiming> out;
    for (const Op& op : schedule.ops) {
      double start = 0;
      for (std::size_t i : op.after) start = std::max(start, out[i].finish_s);
      out.push_back({start, start + (op.kind == Op::Kind::delay ? op.delay_s : 1.0)});
    }
    return out;
  }
};

}  // namespace

TEST_CASE("p2p: a measurement is one copy, then two opposite copies") {
  Topology t = bundled("dgx1-v100");
  RecordingRunner runner;
  P2pBench bench(t, runner, P2pOptions{});
  P2pPoint point = bench.measure(0, 3, 1000);
  REQUIRE(runner.seen.size() == 2);
  const Schedule& uni = runner.seen[0];
  REQUIRE(uni.ops.size() == 2);
  CHECK(uni.ops[0].kind == Op::Kind::delay);
  CHECK(uni.ops[0].delay_s == Approx(1.604e-6));  // V100 write latency
  CHECK(uni.ops[1].kind == Op::Kind::transfer);
  CHECK(uni.ops[1].src_gpu == 0);
  CHECK(uni.ops[1].dst_gpu == 3);
  CHECK(uni.ops[1].after == std::vector<std::size_t>{0});
  const Schedule& bi = runner.seen[1];
  REQUIRE(bi.ops.size() == 4);
  CHECK(bi.ops[3].src_gpu == 3);
  CHECK(bi.ops[3].dst_gpu == 0);
  // The fake's copy takes 1 s after the 1.604 us delay.
  CHECK(point.time_s == Approx(1 + 1.604e-6));
  CHECK(point.uni_Bps == Approx(1000 / (1 + 1.604e-6)));
  CHECK(point.bi_Bps == Approx(2000 / (1 + 1.604e-6)));
  CHECK(point.route == RouteKind::nvlink);
}

TEST_CASE("p2p: the software cost follows the method and the route") {
  Topology t = bundled("dgx1-v100");
  RecordingRunner runner;
  P2pOptions memcpy;
  memcpy.method = CopyMethod::memcpy;
  CHECK(P2pBench(t, runner, memcpy).overhead_s(0, 1) == Approx(8.925e-6));
  CHECK(P2pBench(t, runner, P2pOptions{}).overhead_s(0, 1) == Approx(1.604e-6));
  // Staged copies pay two cudaMemcpy latencies whatever the method: device to host, host to device.
  CHECK(P2pBench(t, runner, P2pOptions{}).overhead_s(0, 5) == Approx(2 * 8.925e-6));
  P2pOptions off;
  off.peer_access = false;
  CHECK(P2pBench(t, runner, off).overhead_s(0, 1) == Approx(2 * 8.925e-6));
}

TEST_CASE("p2p: predicted bandwidth of a V100 pair with two NVLinks, derived by hand") {
  Topology t = Topology::build(load_topology_spec(test_data("tiny.json")), catalog());
  Simulator sim;
  P2pOptions options;
  PlatformRunner runner(sim, sim.add_platform(t, route_options(options)));
  P2pBench bench(t, runner, options);
  P2pPoint p = bench.measure(0, 1, 160e6);
  // 2 links x 25 GB/s x 0.9701 = 48.505 GB/s; the V100 copy-engine limit (271.7 GB/s) is far.
  // time = 1.604 us write latency + 0.2 us NVLink + 160e6 / 48.505e9 = 3.30037 ms.
  double time = 1.604e-6 + 0.2e-6 + 160e6 / 48.505e9;
  CHECK(p.time_s == Approx(time).epsilon(1e-6));
  CHECK(p.uni_Bps == Approx(160e6 / time).epsilon(1e-6));
  // The other direction has its own lanes: bidirectional is twice the unidirectional figure.
  CHECK(p.bi_Bps == Approx(2 * 160e6 / time).epsilon(1e-6));
}

TEST_CASE("p2p: the copy-engine limit caps bidirectional copies over NVSwitch") {
  Topology t = bundled("dgx-a100");
  Simulator sim;
  P2pOptions options;
  PlatformRunner runner(sim, sim.add_platform(t, route_options(options)));
  P2pBench bench(t, runner, options);
  P2pPoint p = bench.measure(0, 1, 160e6);
  // Unidirectional: 12 x 25 GB/s x 0.9136 = 274.08 GB/s; cost 2.765 us + 0.65 us of path.
  double uni_time = 3.415e-6 + 160e6 / 274.08e9;
  CHECK(p.uni_Bps == Approx(160e6 / uni_time).epsilon(1e-4));
  // Bidirectional: each GPU's copy engines carry both copies, 425.1 GB/s shared: 212.55 each.
  double bi_time = 3.415e-6 + 160e6 / 212.55e9;
  CHECK(p.bi_Bps == Approx(2 * 160e6 / bi_time).epsilon(1e-4));
}

TEST_CASE("p2p: size series like nccl-tests -b -e -f") {
  auto sizes = size_series(1024, 268435456, 4);
  REQUIRE(sizes.size() == 10);
  CHECK(sizes.front() == 1024);
  CHECK(sizes.back() == 268435456);
  CHECK(size_series(8, 8, 2) == std::vector<double>{8});
  CHECK_THROWS_WITH(size_series(16, 8, 2), "the last size (-e) 8 B is below the first (-b) 16 B");
  CHECK_THROWS_WITH(size_series(8, 16, 1), "the size factor (-f) must be above 1 when -e exceeds -b");
}
