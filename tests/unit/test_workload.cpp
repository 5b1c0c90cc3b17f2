// Workloads (issue 5): trace reading, replay on the engine with times derived by hand, and
// training scenarios (the generated iteration itself: test_training.cpp). One SimGrid engine
// per process, so every TEST_CASE that simulates builds at most one Simulator and adds all its platforms first.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "topology/flat.hpp"
#include "workload/replay.hpp"
#include "workload/scenario.hpp"
#include "workload/training.hpp"
#include "workload_helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

Topology flat(const std::string& name) { return Topology::build(flat_topology(name, catalog()), catalog()); }

// A trace of `ranks` ranks with the given ops (a JSON array body), read as "t.json".
TraceSpec trace_of(int ranks, const std::string& ops, const std::string& extra = "") {
  return parse_trace("{\"ranks\": " + std::to_string(ranks) + extra + ", \"ops\": [" + ops + "]}", "t.json");
}

std::string trace_error(int ranks, const std::string& ops, const std::string& extra = "") {
  return input_error([&] { trace_of(ranks, ops, extra); });
}

// Bundled servers, scaled out or with a what-if GPU, as the study layer's Workspace::topology builds them.
Topology build_bundled(const std::string& name, const ScaleOut& scale, const std::string& gpu) {
  TopologySpec spec = load_topology_spec(data_path("topologies/" + name + ".json"));
  if (!gpu.empty())
    for (DeviceSpec& d : spec.devices)
      if (d.type == DeviceType::gpu) d.model = gpu;
  if (!scale.any()) return Topology::build(spec, catalog());
  return Topology::build(replicate_server(spec, scale, catalog()), catalog());
}

std::vector<ScenarioPoint> run_points(const ScenarioSpec& scenario, Simulator& sim) {
  PlatformFactory platforms = [&](const Topology& t, const RouteOptions& routes, const PlatformNeeds& needs) {
    return std::unique_ptr<Runner>(new PlatformRunner(sim, sim.add_platform(t, routes, needs)));
  };
  return run_scenario(scenario, catalog(), build_bundled, platforms);
}

const std::string kScenario = R"({
  "description": "s",
  "topology": "dgx-a100",
  "training": {"network": "resnet50", "framework": "pytorch-ddp", "optimizer": "sgd", "batch_per_gpu": 64},
  "gpus": [1, 8],
  "sources": {"setup": "test"}
})";

// kScenario with one substring replaced, written to a temporary file.
std::string scenario_with(const std::string& from, const std::string& to) {
  std::string text = kScenario;
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return write_temp("scenario.json", text);
}

}  // namespace

TEST_CASE("workload: a trace with groups, every cost kind, a collective and a send") {
  TraceSpec t = parse_trace(R"({
    "description": "toy", "ranks": 4, "samples": 64,
    "groups": {"pair": [0, 1]},
    "ops": [
      {"name": "fwd.gemm", "kind": "compute", "gemm": [1024, 512, 256], "batch": 2, "dtype": "bf16", "sparsity": "2:4"},
      {"name": "fwd.conv", "kind": "compute", "gemm": [4096, 64, 576], "conv": true},
      {"name": "fwd.norm", "kind": "compute", "ranks": [1, 3], "bytes": "1MiB", "after": ["fwd.gemm"]},
      {"name": "fwd.attn", "kind": "compute", "flops": 2e12, "bytes": "64MiB"},
      {"name": "host", "kind": "compute", "time": "1.5ms", "stream": "host"},
      {"name": "ar", "kind": "collective", "op": "allreduce", "group": "pair", "size": "256MiB", "dtype": "half",
       "after": ["fwd.norm"]},
      {"name": "p2p", "kind": "send", "src": 2, "dst": 3, "size": "1GB"}
    ]})",
                            "t.json");
  CHECK(t.description == "toy");
  CHECK(t.ranks == 4);
  CHECK(t.samples == 64);
  REQUIRE(t.groups.size() == 1);
  CHECK(t.groups[0].name == "pair");
  CHECK(t.groups[0].ranks == std::vector<int>{0, 1});
  REQUIRE(t.ops.size() == 7);
  const TraceOp& gemm = t.ops[0];
  CHECK(gemm.kind == TraceOp::Kind::compute);
  CHECK(gemm.cost == TraceOp::Cost::gemm);
  CHECK((gemm.m == 1024 && gemm.n == 512 && gemm.k == 256 && gemm.batch == 2));
  CHECK(gemm.dtype == "bf16");
  CHECK(gemm.sparse);
  CHECK(gemm.ranks.empty());  // every rank
  CHECK(gemm.stream == "compute");
  CHECK(gemm.where.pointer == "/ops/0");
  CHECK(t.ops[1].cost == TraceOp::Cost::conv);
  CHECK(t.ops[1].dtype == "fp16");  // the default math type
  CHECK_FALSE(t.ops[1].sparse);
  const TraceOp& norm = t.ops[2];
  CHECK(norm.cost == TraceOp::Cost::memory);
  CHECK(norm.bytes_B == kMiB);
  CHECK(norm.ranks == std::vector<int>{1, 3});
  CHECK(norm.after == std::vector<std::string>{"fwd.gemm"});
  CHECK(t.ops[3].cost == TraceOp::Cost::flops);  // flops with bytes is one (roofline) cost
  CHECK(t.ops[3].flops == 2e12);
  CHECK(t.ops[3].bytes_B == 64 * kMiB);
  CHECK(t.ops[4].cost == TraceOp::Cost::time);
  CHECK(t.ops[4].time_s == Approx(1.5e-3).epsilon(1e-12));
  CHECK(t.ops[4].stream == "host");
  const TraceOp& ar = t.ops[5];
  CHECK(ar.kind == TraceOp::Kind::collective);
  CHECK(ar.op == "allreduce");
  CHECK(ar.group == "pair");
  CHECK(ar.size_B == 256 * kMiB);
  CHECK(ar.dtype == "half");
  CHECK(ar.stream == "comm");  // default stream of collectives and sends
  const TraceOp& p2p = t.ops[6];
  CHECK(p2p.kind == TraceOp::Kind::send);
  CHECK((p2p.src == 2 && p2p.dst == 3));
  CHECK(p2p.size_B == 1e9);  // GB is 1e9, as everywhere in topsim
  CHECK(p2p.stream == "comm");
  // A collective's group defaults to "world", its data type to float.
  TraceSpec w = trace_of(2, R"({"name": "ar", "kind": "collective", "op": "allgather", "size": "8MiB"})");
  CHECK(w.ops[0].group == "world");
  CHECK(w.ops[0].dtype == "float");
}

TEST_CASE("workload: trace reader errors name the file, the pointer and what is valid") {
  const std::string a = R"({"name": "fwd.a", "kind": "compute", "time": "1ms"})";
  CHECK(trace_error(2, a + R"(, {"name": "b", "kind": "compute", "time": "1ms", "after": ["fwd.b"]})") ==
        "t.json:/ops/1/after/0: unknown op 'fwd.b' (did you mean 'fwd.a'?); known: b, fwd.a");
  CHECK(trace_error(2, a + ", " + a) == "t.json:/ops/1/name: op name 'fwd.a' is used twice (first at /ops/0)");
  CHECK(trace_error(2, R"({"name": "g", "kind": "compute", "gemm": [64, 64, 64], "time": "1ms"})") ==
        "t.json:/ops/0: a compute op costs exactly one of: \"gemm\": [m, n, k], \"bytes\" (memory-bound), "
        "\"flops\" (with optional \"bytes\"), \"time\" (measured)");
  CHECK(trace_error(4, R"({"name": "c", "kind": "compute", "ranks": [0, 4], "time": "1ms"})") ==
        "t.json:/ops/0/ranks/1: expected a rank 0-3, got the number 4");
  CHECK(trace_error(4, R"({"name": "ar", "kind": "collective", "op": "allreduce", "group": "pairs", "size": "1MiB"})",
                    R"(, "groups": {"pair": [0, 1]})") ==
        "t.json:/ops/0/group: unknown group 'pairs' (did you mean 'pair'?); known: pair, world");
  CHECK(trace_error(4, R"({"name": "s", "kind": "send", "src": 2, "dst": 2, "size": "1MiB"})") ==
        "t.json:/ops/0/dst: a send goes to another rank");
  CHECK(trace_error(4, a, R"(, "groups": {"world": [0, 1]})") ==
        "t.json:/groups/world: \"world\" is every rank already; name groups otherwise");
  CHECK(trace_error(4, "") == "t.json:/ops: a trace needs at least one op");
  CHECK(trace_error(2, R"({"name": "a", "kind": "compute", "time": "1ms", "after": ["a"]})") ==
        "t.json:/ops/0/after/0: op 'a' cannot wait for itself");
}

TEST_CASE("workload: replay of compute, streams and a send on flat:4:a100, derived by hand") {
  // flat:4:a100: each GPU has its 12 NVLink 3.0 links into one switch (models/links.json
  // nvlink3: 25 GB/s, efficiency 0.9136, 0.2 us; flat-nvlink3 switch 0.2 us). A lone send
  // GPU0 -> GPU1 crosses two links and the switch: 0.2 + 0.2 + 0.2 = 0.6 us of latency, then
  // 1e9 B at 12 x 25e9 x 0.9136 = 274.08e9 B/s (the A100's 425.1 GB/s bidirectional copy
  // limit does not bind one direction): T = 0.6e-6 + 1e9 / 274.08e9 = 3.649170e-3 s.
  const double send_s = 0.6e-6 + 1e9 / 274.08e9;
  // fwd.b is modelled: 2799 MB streamed at 1555 GB/s x 0.9 (ampere memory_efficiency) = 2 ms.
  TraceSpec trace = trace_of(4, R"(
    {"name": "fwd.a", "kind": "compute", "ranks": [0], "time": "1ms"},
    {"name": "fwd.b", "kind": "compute", "ranks": [0], "bytes": "2799MB"},
    {"name": "fwd.c", "kind": "compute", "ranks": [1], "time": "1ms"},
    {"name": "side.d", "kind": "compute", "ranks": [1], "time": "2ms", "stream": "side"},
    {"name": "xfer", "kind": "send", "src": 0, "dst": 1, "size": "1GB", "after": ["fwd.b"]},
    {"name": "bwd.e", "kind": "compute", "ranks": [1], "time": "1ms", "after": ["xfer"]},
    {"name": "bwd.f", "kind": "compute", "ranks": [0], "time": "0.5ms", "after": ["xfer"]})");
  Topology t = flat("flat:4:a100");
  Simulator sim;
  Replay replay(t, catalog(), trace);
  PlatformRunner runner(sim, sim.add_platform(t, replay.routes(), replay.needs()));
  CHECK(replay.rank0_compute_s() == Approx(2e-3).epsilon(1e-9));  // measured times are not modelled
  ReplayResult r = replay.run(runner);
  // Rank 0, one stream: fwd.a then fwd.b, 1 + 2 = 3 ms (a sum). Rank 1: fwd.c and side.d on two
  // streams overlap, done at max(1, 2) = 2 ms. The send waits for fwd.b: 3 ms to 3 ms + T.
  // bwd.e on rank 1 waits for it (across ranks), so it runs 3 ms + T to 4 ms + T, although
  // rank 1 is idle from 2 ms; bwd.f on rank 0 runs 3 ms + T to 3.5 ms + T.
  CHECK(r.iteration_s == Approx(4e-3 + send_s).epsilon(1e-9));
  // Busiest "compute" stream: rank 0 with 1 + 2 + 0.5 = 3.5 ms (rank 1: 1 + 1 = 2 ms; side.d is
  // on another stream and does not count).
  CHECK(r.compute_s == Approx(3.5e-3).epsilon(1e-9));
  CHECK(r.exposed_comm_s == Approx(0.5e-3 + send_s).epsilon(1e-9));
  CHECK(r.comm_s == Approx(send_s).epsilon(1e-9));  // rank 0 sends
  CHECK(r.collectives == 0);
  CHECK(r.collective_B == 0);
  // Rank 0 by phase (name up to the first '.'): fwd 1 + 2 = 3 ms, bwd 0.5 ms; nothing else.
  CHECK(r.phase_s.size() == 2);
  CHECK(r.phase_s["fwd"] == Approx(3e-3).epsilon(1e-9));
  CHECK(r.phase_s["bwd"] == Approx(0.5e-3).epsilon(1e-9));
}

TEST_CASE("workload: replay refuses cycles, missing dependencies, small topologies and impossible kernels") {
  Topology a100 = flat("flat:4:a100");
  TraceSpec cycle = trace_of(2, R"({"name": "a", "kind": "compute", "time": "1ms", "after": ["b"]},
                                  {"name": "b", "kind": "compute", "time": "1ms", "after": ["a"]},
                                  {"name": "c", "kind": "compute", "time": "1ms", "ranks": [1], "after": ["b"]},
                                  {"name": "d", "kind": "compute", "time": "1ms", "stream": "x"})");
  // a and b wait for each other; c waits for b, so it is listed too; d is independent.
  CHECK(input_error([&] { Replay(a100, catalog(), cycle); }) ==
        "t.json:/ops: the ops' dependencies (\"after\" and stream order) form a cycle; ops on it or waiting for it: "
        "a, b, c");
  TraceSpec elsewhere = trace_of(2, R"({"name": "a", "kind": "compute", "time": "1ms", "ranks": [0]},
                                      {"name": "b", "kind": "compute", "time": "1ms", "ranks": [1], "after": ["a"]})");
  CHECK(input_error([&] { Replay(a100, catalog(), elsewhere); }) ==
        "t.json:/ops/1/after/0: op 'b' waits for 'a', which runs on none of its ranks");
  // An op in "after" that runs on some of the op's ranks is waited for on those only: c on rank 0
  // waits for a (1 ms), on rank 1 for nothing; b overlaps on rank 1. Iteration: a then c, 2 ms.
  TraceSpec partial = trace_of(2, R"({"name": "a", "kind": "compute", "time": "1ms", "ranks": [0]},
                                     {"name": "b", "kind": "compute", "time": "1ms", "ranks": [1], "stream": "other"},
                                     {"name": "c", "kind": "compute", "time": "1ms", "after": ["a"]})");
  CHECK_NOTHROW(Replay(a100, catalog(), partial));
  TraceSpec eight = trace_of(8, R"({"name": "a", "kind": "compute", "time": "1ms"})");
  CHECK_THROWS_AS(Replay(a100, catalog(), eight), UsageError);
  CHECK_THROWS_WITH(Replay(a100, catalog(), eight), "the trace has 8 ranks; flat:4:a100 has 4 GPUs");
  Topology v100 = bundled("dgx1-v100");
  TraceSpec sparse =
      trace_of(2, R"({"name": "g", "kind": "compute", "gemm": [1024, 1024, 1024], "sparsity": "2:4", "ranks": [1]})");
  CHECK(input_error([&] { Replay(v100, catalog(), sparse); }) ==
        "t.json:/ops/0: op 'g' on rank 1: v100 has no 2:4 sparse math for fp16 (2:4 sparse math: none; dense: fp16, "
        "fp32, fp64)");
}

TEST_CASE("workload: an allreduce in a trace replays as Communicator::run gives it alone") {
  // dgx-a100, 8 GPUs, 1 GiB allreduce of floats over "world". The replay chooses the algorithm
  // as NCCL's tuner does (alone) and appends that plan's flows, so alone it takes the same time.
  Topology t = bundled("dgx-a100");
  const std::string ar = R"({"name": "ar", "kind": "collective", "op": "allreduce", "size": "1GiB"})";
  const std::string ar2 = R"({"name": "ar2", "kind": "collective", "op": "allreduce", "size": "1GiB")";
  TraceSpec one = trace_of(8, ar);
  TraceSpec parallel = trace_of(8, ar + ", " + ar2 + R"(, "stream": "comm2"})");
  TraceSpec serial = trace_of(8, ar + ", " + ar2 + "}");
  Simulator sim;
  Communicator comm(t, {0, 1, 2, 3, 4, 5, 6, 7}, nccl());
  CollRequest request;
  request.op = CollOp::allreduce;
  request.size_B = kGiB;
  PlatformRunner alone(sim, sim.add_platform(t, comm.routes(), comm.needs({request})));
  Replay r1(t, catalog(), one), r2(t, catalog(), parallel), r3(t, catalog(), serial);
  PlatformRunner p1(sim, sim.add_platform(t, r1.routes(), r1.needs()));
  PlatformRunner p2(sim, sim.add_platform(t, r2.routes(), r2.needs()));
  PlatformRunner p3(sim, sim.add_platform(t, r3.routes(), r3.needs()));
  CollResult reference = comm.run(request, alone);
  ReplayResult single = r1.run(p1);
  // Anchor: docs/validation.md has DGX A100 1 GiB allreduce at 228.10 GB/s busbw, i.e.
  // 2^30 x 2 x 7/8 / 228.10e9 = 8.2378e-3 s (ring, Simple); a check row, which the
  // prediction misses by 0.9%, so the anchor holds to 2%.
  CHECK(reference.time_s == Approx(1.75 * kGiB / 228.10e9).epsilon(2e-2));
  CHECK(single.iteration_s == Approx(reference.time_s).epsilon(1e-6));
  CHECK(single.collectives == 1);
  CHECK(single.collective_B == kGiB);
  CHECK(single.comm_s == Approx(single.iteration_s).epsilon(1e-9));  // rank 0 is in "world"
  CHECK(single.compute_s == 0);
  CHECK(single.exposed_comm_s == Approx(single.iteration_s).epsilon(1e-12));
  CHECK(single.algorithms == std::string("allreduce ") + to_string(reference.algo) + "/" + to_string(reference.proto) + " x1");
  // Two at once on two streams share the NVLinks: longer than one, at most twice.
  ReplayResult both = r2.run(p2);
  CHECK(both.collectives == 2);
  CHECK(both.collective_B == 2 * kGiB);
  CHECK(both.iteration_s > single.iteration_s * 1.01);
  CHECK(both.iteration_s <= 2 * single.iteration_s * (1 + 1e-9));
  // Exactly: both pay NCCL's fixed latency L side by side, then their flows split every ring
  // link evenly, so the bytes take twice as long: L + 2 (T - L) = 2 T - L.
  double latency_s = -1;
  for (const Candidate& c : reference.candidates)
    if (c.algo == reference.algo && c.proto == reference.proto) latency_s = c.latency_s;
  REQUIRE(latency_s > 0);
  CHECK(both.iteration_s == Approx(2 * single.iteration_s - latency_s).epsilon(1e-6));
  // On one stream they run one after the other: exactly twice one.
  ReplayResult queued = r3.run(p3);
  CHECK(queued.iteration_s == Approx(2 * single.iteration_s).epsilon(1e-6));
}

TEST_CASE("workload: scenario resnet50-dgx-a100 meets its calibration figures") {
  // Calibration points, not checks: frameworks.json solved horovod-tensorflow's
  // elementwise_traffic on 2375 img/s (1 GPU) and its step_overhead on 17400 img/s (8 GPUs),
  // NVIDIA DeepLearningExamples resnet50v1.5 README. This pins that the solve still holds.
  ScenarioSpec s = load_scenario(data_path("scenarios/resnet50-dgx-a100.json"));
  Simulator sim;
  std::vector<ScenarioPoint> points = run_points(s, sim);
  REQUIRE(points.size() == 4);
  CHECK(points[0].gpus == 1);
  CHECK(points[3].gpus == 8);
  CHECK(points[0].throughput == Approx(2375).epsilon(1e-3));
  CHECK(points[3].throughput == Approx(17400).epsilon(1e-3));
  // throughput = 256 x gpus / iteration; speedup against the one-GPU point.
  CHECK(points[3].throughput == Approx(256 * 8 / points[3].replay.iteration_s).epsilon(1e-12));
  CHECK(points[3].speedup == Approx(points[3].throughput / points[0].throughput).epsilon(1e-12));
  CHECK(points[3].efficiency == Approx(points[3].speedup / 8).epsilon(1e-12));
  CHECK(points[3].gradient_B == 102228128);
  CHECK(points[0].replay.collectives == 0);
}

TEST_CASE("workload: a measured step_time sets the one-GPU iteration") {
  ScenarioSpec s = load_scenario(data_path("scenarios/resnet50-dgx-a100.json"));
  s.training.step_time_s = 0.1;
  s.gpus = {1};
  Simulator sim;
  std::vector<ScenarioPoint> points = run_points(s, sim);
  REQUIRE(points.size() == 1);
  // One GPU: every op on one compute stream, every one modelled, each scaled by
  // 0.1 s / (their modelled sum): the iteration is 0.1 s; 256 images / 0.1 s = 2560 img/s.
  CHECK(points[0].replay.iteration_s == Approx(0.1).epsilon(1e-9));
  CHECK(points[0].throughput == Approx(2560).epsilon(1e-9));
}

TEST_CASE("workload: scenario reader errors") {
  ScenarioSpec ok = load_scenario(write_temp("scenario.json", kScenario));
  CHECK(ok.gpus == std::vector<int>{1, 8});
  REQUIRE(ok.variants.size() == 1);
  CHECK(ok.variants[0].name == "baseline");
  std::string path = scenario_with(R"("gpus": [1, 8])", R"("gpus": [1, 8], "nodes": [1, 2])");
  CHECK(input_error([&] { load_scenario(path); }) ==
        path + ": a scenario gives either \"gpus\" (GPU counts in one server) or \"nodes\" (server counts), not both");
  path = scenario_with(R"("batch_per_gpu": 64)", R"("batch_per_gpu": 64, "precision": "fp16")");
  CHECK(input_error([&] { load_scenario(path); }) ==
        path + ":/training/precision: unknown precision 'fp16' (did you mean 'bf16'?); known: amp, bf16, fp32, tf32");
  path = scenario_with(R"("gpus": [1, 8])", R"("gpus": [1, 8], "variants": [{"name": "a"}, {"name": "a", "gpu": "h100"}])");
  CHECK(input_error([&] { load_scenario(path); }) == path + ":/variants/1/name: variant name 'a' is used twice");
  path = scenario_with(R"(,
  "sources": {"setup": "test"})", "");
  CHECK(input_error([&] { load_scenario(path); }) == path + ": missing required key 'sources'");
  path = scenario_with(R"("sources": {"setup": "test"})", R"("sources": {})");
  CHECK(input_error([&] { load_scenario(path); }) ==
        path + ":/sources: a scenario cites where its settings come from (at least one source)");
  CHECK_FALSE(is_trace_file(write_temp("scenario.json", kScenario)));
  CHECK(is_trace_file(write_temp("t.json", R"({"ranks": 1, "ops": []})")));
}

TEST_CASE("workload: a point gives the same figures alone and inside a longer run") {
  // SimGrid's clock runs on across runs of one engine: every figure must be a difference of
  // clocks. The 2-server point of BERT pre-training, alone and after the 1-server point (and
  // the one-GPU baseline), on one engine, must agree to the rounding of those differences
  // (measured: 1e-14 relative; printed figures are identical).
  ScenarioSpec alone = load_scenario(std::string(TOPSIM_DATA_DIR) + "/scenarios/bert-large-pretrain-dgx-a100.json");
  alone.nodes = {2};
  ScenarioSpec longer = alone;
  longer.nodes = {1, 2};
  Simulator simulator;
  PlatformFactory platforms = [&](const Topology& t, const RouteOptions& routes, const PlatformNeeds& needs) {
    return std::unique_ptr<Runner>(new PlatformRunner(simulator, simulator.add_platform(t, routes, needs)));
  };
  ScenarioRunner first(longer, catalog(), build_bundled, platforms);
  ScenarioRunner second(alone, catalog(), build_bundled, platforms);
  std::vector<ScenarioPoint> a = first.run();
  std::vector<ScenarioPoint> b = second.run();
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 1);
  CHECK(a[1].nodes == 2);
  CHECK(a[1].replay.iteration_s == Approx(b[0].replay.iteration_s).epsilon(1e-12));
  CHECK(a[1].replay.comm_s == Approx(b[0].replay.comm_s).epsilon(1e-12));
  CHECK(a[1].throughput == Approx(b[0].throughput).epsilon(1e-12));
  CHECK(a[1].speedup == Approx(b[0].speedup).epsilon(1e-12));
}
