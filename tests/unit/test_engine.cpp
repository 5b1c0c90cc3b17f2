// Engine times derived by hand. Every TEST_CASE runs in its own process (ctest), and each builds
// its own Simulator.
#include <catch2/catch.hpp>

#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

// Two P100s on one NVLink overridden to 25 GB/s, 1 us, efficiency 1, with a PCIe tree to a CPU.
Topology pair(double bandwidth_Bps = 25e9, double latency_s = 1e-6) {
  TopologySpec spec;
  spec.file = "pair";
  spec.name = "pair";
  spec.description = "two GPUs on one link";
  auto device = [&](const char* id, DeviceType type, const char* model) {
    DeviceSpec d;
    d.id = id;
    d.type = type;
    d.model = model;
    spec.devices.push_back(d);
  };
  device("gpu0", DeviceType::gpu, "p100");
  device("gpu1", DeviceType::gpu, "p100");
  device("pcie0", DeviceType::pcie_switch, "pcie3-switch");
  device("cpu0", DeviceType::cpu, "xeon-e5-2698v4");
  auto link = [&](const char* a, const char* b, const char* model) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.model = model;
    spec.links.push_back(l);
    return &spec.links.back();
  };
  LinkSpec* nvlink = link("gpu0", "gpu1", "nvlink1");
  nvlink->bandwidth_Bps = bandwidth_Bps;
  nvlink->latency_s = latency_s;
  nvlink->efficiency = 1.0;
  link("gpu0", "pcie0", "pcie3-x16");
  link("gpu1", "pcie0", "pcie3-x16");
  link("pcie0", "cpu0", "pcie3-x16");
  return Topology::build(spec, catalog());
}

}  // namespace

TEST_CASE("engine: 1 GiB over one 25 GB/s link with 1 us latency") {
  Simulator sim;
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, kGiB);
  auto timings = sim.run(p, s);
  // 1 us + 1073741824 B / 25e9 B/s = 1e-6 + 0.04294967296 = 0.04295067296 s
  CHECK(timings[0].start_s == 0.0);
  CHECK(timings[0].finish_s == Approx(0.04295067296).epsilon(1e-9));
}

TEST_CASE("engine: two transfers in one direction share the link") {
  Simulator sim;
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, kGiB);
  s.transfer(0, 1, kGiB);
  auto timings = sim.run(p, s);
  // Each gets 12.5 GB/s: 1e-6 + 2 x 0.04294967296 = 0.08590034592 s
  CHECK(timings[0].finish_s == Approx(0.08590034592).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.08590034592).epsilon(1e-9));
}

TEST_CASE("engine: opposite directions of a full-duplex link do not interfere") {
  Simulator sim;
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, kGiB);
  s.transfer(1, 0, kGiB);
  auto timings = sim.run(p, s);
  CHECK(timings[0].finish_s == Approx(0.04295067296).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.04295067296).epsilon(1e-9));
}

TEST_CASE("engine: delays and dependencies order the ops") {
  Simulator sim;
  Topology t = pair(10e9, 2e-6);
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  std::size_t wait = s.delay(0, 5e-6);
  std::size_t first = s.transfer(0, 1, 1e6, {wait});
  std::size_t second = s.transfer(1, 0, 1e6, {first});
  std::size_t alone = s.delay(1, 3e-6);
  auto timings = sim.run(p, s);
  // delay 5 us; then 2 us + 1e6 / 10e9 = 102 us; then the reply another 102 us.
  CHECK(timings[wait].finish_s == Approx(5e-6).epsilon(1e-9));
  CHECK(timings[first].start_s == Approx(5e-6).epsilon(1e-9));
  CHECK(timings[first].finish_s == Approx(107e-6).epsilon(1e-9));
  CHECK(timings[second].finish_s == Approx(209e-6).epsilon(1e-9));
  // Independent delays run concurrently, each at full speed. SimGrid's clock is one per process:
  // after other tests simulated hours, its doubles keep ~1e-11 s, so a microsecond is checked to
  // 0.1 ns, not to a relative 1e-9.
  CHECK(timings[alone].finish_s == Approx(3e-6).margin(1e-10));
}

TEST_CASE("engine: successive runs do not see each other's clock") {
  Simulator sim;
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, kGiB);
  double first = sim.run(p, s)[0].finish_s;
  double second = sim.run(p, s)[0].finish_s;
  CHECK(first == Approx(second).epsilon(1e-12));
}

TEST_CASE("engine: striped NVSwitch planes carry a transfer as one bundle") {
  Simulator sim;
  Topology t = bundled("dgx-h100");
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, 450e6);
  auto timings = sim.run(p, s);
  // 18 NVLink4 x 25 GB/s x 0.837 = 376.65 GB/s striped 5/4/4/5 over the switches; latency
  // 0.2 us + 0.2 us (switch) + 0.2 us. 0.6e-6 + 450e6 / 376.65e9 = 1.1953e-3 s
  CHECK(timings[0].finish_s == Approx(0.6e-6 + 450e6 / 376.65e9).epsilon(1e-6));
}

TEST_CASE("engine: zero-byte transfers cost the path latency") {
  Simulator sim;
  Topology t = pair(25e9, 1e-6);
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, 0);
  CHECK(sim.run(p, s)[0].finish_s == Approx(1e-6).margin(1e-10));  // 0.1 ns: one clock per process
}

TEST_CASE("engine: several platforms in one simulator, all added before the first run") {
  Simulator sim;
  Topology slow = pair(10e9, 0);
  Topology fast = pair(40e9, 0);
  std::size_t a = sim.add_platform(slow, RouteOptions{});
  std::size_t b = sim.add_platform(fast, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, 1e9);
  CHECK(sim.run(a, s)[0].finish_s == Approx(0.1).epsilon(1e-9));
  CHECK(sim.run(b, s)[0].finish_s == Approx(0.025).epsilon(1e-9));
  CHECK_THROWS_AS(sim.add_platform(fast, RouteOptions{}), std::logic_error);
}

TEST_CASE("engine: link usage tells each direction's load per time bin, exactly") {
  Simulator sim;
  sim.track_links();
  Topology t = pair();  // one 25 GB/s NVLink, efficiency 1
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 1, 1e9, {}, false);                       // T1 at 0
  s.transfer(0, 1, 0.5e9, {s.delay(0, 0.01)}, false);     // T3 at 0.01, sharing with T1
  s.transfer(1, 0, 0.25e9, {s.delay(1, 0.02)}, false);    // T2 at 0.02, the other direction
  s.delay(0, 0.08);                                       // the run lasts 0.08 s
  sim.run(p, s);
  LinkUsage u = sim.link_usage(4);
  CHECK(u.duration_s == Approx(0.08));
  CHECK(u.bin_s == Approx(0.02));
  REQUIRE(u.links.size() == 2);
  CHECK(u.links[0].link == "gpu0 -nvlink1-> gpu1");
  CHECK(u.links[1].link == "gpu1 -nvlink1-> gpu0");
  // Forward: T1 alone 0-0.01 moves 0.25e9 B; then 12.5 GB/s each, so T3's 0.5e9 B end at 0.05,
  // when T1 has 0.25e9 B left, alone again: it ends at 0.06. Busy 0-0.06: bins 1, 1, 1, 0;
  // 1.5e9 B = 25e9 B/s x 0.06 s.
  CHECK(u.links[0].capacity_Bps == Approx(25e9));
  CHECK(u.links[0].bytes_B == Approx(1.5e9));
  CHECK(u.links[0].utilisation[0] == Approx(1.0));
  CHECK(u.links[0].utilisation[1] == Approx(1.0));
  CHECK(u.links[0].utilisation[2] == Approx(1.0));
  CHECK(u.links[0].utilisation[3] == Approx(0.0).margin(1e-12));
  CHECK(u.links[0].mean_utilisation() == Approx(0.75));
  // Backward: T2's 0.25e9 B at 25 GB/s take 0.01 s from 0.02: half of bin 1.
  CHECK(u.links[1].bytes_B == Approx(0.25e9));
  CHECK(u.links[1].utilisation[0] == Approx(0.0).margin(1e-12));
  CHECK(u.links[1].utilisation[1] == Approx(0.5));
  CHECK(u.links[1].peak_utilisation() == Approx(0.5));
  // Eight bins split the same bytes finer: T2 fills bin 2 (0.02-0.03) alone.
  LinkUsage fine = sim.link_usage(8);
  CHECK(fine.links[1].utilisation[2] == Approx(1.0));
  CHECK(fine.links[1].utilisation[3] == Approx(0.0).margin(1e-12));
  CHECK_THROWS_AS(sim.link_usage(0), std::invalid_argument);
}

TEST_CASE("engine: link usage needs tracking and a run") {
  Simulator sim;
  CHECK_THROWS_AS(sim.link_usage(10), std::logic_error);
  sim.track_links();
  CHECK_THROWS_AS(sim.link_usage(10), std::logic_error);
}

TEST_CASE("engine: a process makes Simulators one after another, and two at once") {
  // 1 GiB over the 25 GB/s, 1 us link: 1e-6 + 1073741824 / 25e9 = 0.04295067296 s; at 50 GB/s
  // 1e-6 + 1073741824 / 50e9 = 0.02147583648 s. SimGrid's engine outlives every Simulator, and
  // each Simulator's platforms are its own (a sealed one does not stop the next).
  Topology slow = pair();
  Topology fast = pair(50e9);
  Schedule s;
  s.transfer(0, 1, kGiB);
  {
    Simulator first;
    CHECK(first.run(first.add_platform(slow, RouteOptions{}), s)[0].finish_s == Approx(0.04295067296).epsilon(1e-9));
  }
  {
    Simulator second;
    CHECK(second.run(second.add_platform(fast, RouteOptions{}), s)[0].finish_s == Approx(0.02147583648).epsilon(1e-9));
  }
  Simulator third;
  std::size_t p = third.add_platform(slow, RouteOptions{});
  third.run(p, s);
  Simulator fourth;  // made while the third lives and after it ran
  std::size_t q = fourth.add_platform(fast, RouteOptions{});
  CHECK(fourth.run(q, s)[0].finish_s == Approx(0.02147583648).epsilon(1e-9));
  CHECK(third.run(p, s)[0].finish_s == Approx(0.04295067296).epsilon(1e-9));
  CHECK_THROWS_AS(third.add_platform(fast, RouteOptions{}), std::logic_error);  // its own platform is sealed
}

TEST_CASE("engine: invalid transfers are refused before SimGrid sees them") {
  Simulator sim;
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  s.transfer(0, 0, 10);
  CHECK_THROWS_AS(sim.run(p, s), std::invalid_argument);
}

TEST_CASE("engine: invariants hold under contention, and are checked when asked") {
  Simulator sim;
  sim.check_invariants(true);
  Topology t = pair();
  std::size_t p = sim.add_platform(t, RouteOptions{});
  Schedule s;
  // Three flows over one 25 GB/s direction, staggered: each ends no sooner than its bytes at
  // 25 GB/s plus 1 us, the link never carries more than 25 GB/s, and every byte arrives.
  s.transfer(0, 1, 1e9);
  s.transfer(0, 1, 0.5e9, {s.delay(0, 0.01)});
  s.transfer(1, 0, 0.25e9);
  s.transfer(0, 1, 0.0);
  CHECK_NOTHROW(sim.run(p, s));
  CHECK_NOTHROW(sim.run(p, s));  // and on a second run of the same platform
}
