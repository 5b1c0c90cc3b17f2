// Workloads (issue 5): trace reading, replay on the engine with times derived by hand, the
// generated training iteration, and training scenarios. One SimGrid engine per process, so
// every TEST_CASE that simulates builds at most one Simulator and adds all its platforms first.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "topology/flat.hpp"
#include "workload/replay.hpp"
#include "workload/scenario.hpp"
#include "workload/training.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

Topology flat(const std::string& name) { return Topology::build(flat_topology(name, catalog()), catalog()); }

// A trace of `ranks` ranks with the given ops (a JSON array body), read as "t.json".
TraceSpec trace_of(int ranks, const std::string& ops, const std::string& extra = "") {
  return parse_trace("{\"ranks\": " + std::to_string(ranks) + extra + ", \"ops\": [" + ops + "]}", "t.json");
}

std::string trace_error(int ranks, const std::string& ops, const std::string& extra = "") {
  return input_error([&] { trace_of(ranks, ops, extra); });
}

const TraceOp* find_op(const TraceSpec& t, const std::string& name) {
  for (const TraceOp& op : t.ops)
    if (op.name == name) return &op;
  return nullptr;
}

std::vector<const TraceOp*> with_prefix(const TraceSpec& t, const std::string& prefix) {
  std::vector<const TraceOp*> out;
  for (const TraceOp& op : t.ops)
    if (op.name.rfind(prefix, 0) == 0) out.push_back(&op);
  return out;
}

TrainingSetup resnet50(const std::string& framework, TrainingSpec& spec) {
  spec.network = "resnet50";
  spec.framework = framework;
  spec.optimizer = "sgd";
  spec.batch_per_gpu = 256;
  spec.precision = "amp";
  TrainingSetup setup;
  setup.network = &catalog().network("resnet50", {});
  setup.framework = &catalog().framework(framework, {});
  setup.optimizer = &catalog().optimizer("sgd", {});
  return setup;
}

// BERT-large pre-training (seq 128, LAMB, AMP, 8 sequences per replica) in tensor-parallel pairs.
TrainingSetup bert_tp2(TrainingSpec& spec) {
  spec.network = "bert-large-seq128";
  spec.framework = "pytorch-ddp";
  spec.optimizer = "lamb";
  spec.batch_per_gpu = 8;
  spec.precision = "amp";
  spec.tensor_parallel = 2;
  TrainingSetup setup;
  setup.network = &catalog().network("bert-large-seq128", {});
  setup.framework = &catalog().framework("pytorch-ddp", {});
  setup.optimizer = &catalog().optimizer("lamb", {});
  return setup;
}

// Bundled servers, scaled out or with a what-if GPU, as the CLI's Context::topology builds them.
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
  // nvlink3: 25 GB/s, efficiency 0.9137, 0.2 us; flat-nvlink3 switch 0.25 us). A lone send
  // GPU0 -> GPU1 crosses two links and the switch: 0.2 + 0.25 + 0.2 = 0.65 us of latency, then
  // 1e9 B at 12 x 25e9 x 0.9137 = 274.11e9 B/s (the A100's 425.06 GB/s bidirectional copy
  // limit does not bind one direction): T = 0.65e-6 + 1e9 / 274.11e9 = 3.648820e-3 s.
  const double send_s = 0.65e-6 + 1e9 / 274.11e9;
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
  Communicator comm(t, {0, 1, 2, 3, 4, 5, 6, 7});
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
  // 2^30 x 2 x 7/8 / 228.10e9 = 8.2378e-3 s (ring, Simple).
  CHECK(reference.time_s == Approx(1.75 * kGiB / 228.10e9).epsilon(1e-3));
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

TEST_CASE("workload: training_trace lays out ResNet-50 for Horovod and PyTorch DDP") {
  TrainingSpec spec;
  TrainingSetup horovod = resnet50("horovod-tensorflow", spec);
  const Network& net = *horovod.network;
  // ResNet-50 v1.5: 25,557,032 parameters, FP32 gradients: 25,557,032 x 4 = 102,228,128 B.
  CHECK(net.params() == 25557032);
  CHECK(gradient_bytes(spec, horovod) == 102228128);

  TraceSpec one = training_trace(spec, horovod, 1);
  CHECK(one.ranks == 1);
  for (const TraceOp& op : one.ops) CHECK(op.kind == TraceOp::Kind::compute);  // no collective on one rank
  CHECK(find_op(one, "step.overhead") == nullptr);  // overhead of a distributed step: ranks > 1

  for (const std::string framework : {"horovod-tensorflow", "pytorch-ddp"}) {
    INFO(framework);
    TrainingSpec s;
    TrainingSetup setup = resnet50(framework, s);
    TraceSpec t = training_trace(s, setup, 8);
    CHECK(t.ranks == 8);
    CHECK(t.samples == 8 * 256);
    CHECK(with_prefix(t, "fwd.").size() == net.layers.size());  // one forward op per layer (175)
    // Every GEMM layer but the first has an input gradient: 53 convs + 1 linear - conv1 = 53.
    std::size_t gemm_layers = 0;
    for (const Layer& l : net.layers) gemm_layers += l.kind == Layer::Kind::conv || l.kind == Layer::Kind::linear;
    CHECK(gemm_layers == 54);
    CHECK(find_op(t, "bwd." + net.layers[0].name + ".dgrad") == nullptr);
    CHECK(find_op(t, "bwd." + net.layers[0].name + ".wgrad") != nullptr);
    std::size_t dgrads = 0;
    for (const TraceOp& op : t.ops) dgrads += op.name.size() > 6 && op.name.substr(op.name.size() - 6) == ".dgrad";
    CHECK(dgrads == gemm_layers - 1);
    // Buckets add up to every gradient.
    auto buckets = with_prefix(t, "allreduce.");
    REQUIRE(!buckets.empty());
    double total = 0;
    std::vector<std::string> names;
    for (const TraceOp* b : buckets) {
      CHECK(b->kind == TraceOp::Kind::collective);
      CHECK(b->op == "allreduce");
      CHECK(b->dtype == "float");
      CHECK(b->stream == "comm");
      CHECK(b->after.size() == 1);
      total += b->size_B;
      names.push_back(b->name);
    }
    CHECK(total == 102228128);
    // The optimizer waits for every bucket.
    const TraceOp* optimizer = find_op(t, "optimizer");
    REQUIRE(optimizer != nullptr);
    CHECK(optimizer->after == names);
    const TraceOp* overhead = find_op(t, "step.overhead");
    if (framework == "pytorch-ddp") {
      // First bucket 1 MiB, later ones 25 MiB (a bucket closes once it reaches its cap).
      CHECK(buckets.front()->size_B >= 1 * kMiB);
      // The last layer with weights, fc (2048 x 1000 + 1000 = 2,049,000 params), is over the
      // 1 MiB first cap alone: 2,049,000 x 4 = 8,196,000 B, ready after its weight gradient.
      CHECK(buckets.front()->size_B == 8196000);
      CHECK(buckets.front()->after == std::vector<std::string>{"bwd.fc.wgrad"});
      for (std::size_t i = 1; i + 1 < buckets.size(); ++i) CHECK(buckets[i]->size_B >= 25 * kMiB);
      CHECK(overhead == nullptr);  // step_overhead 0us
      // A "bucket" setting replaces the 25 MiB cap, not DDP's fixed 1 MiB first bucket.
      TrainingSpec big = s;
      big.bucket_B = 40 * kMiB;
      auto resized = with_prefix(training_trace(big, setup, 8), "allreduce.");
      REQUIRE(resized.size() >= 3);
      CHECK(resized.front()->size_B == 8196000);
      for (std::size_t i = 1; i + 1 < resized.size(); ++i) CHECK(resized[i]->size_B >= 40 * kMiB);
      CHECK(resized.size() < buckets.size());
    } else {
      // 64 MiB fusion buffer: 102,228,128 B = one full buffer (>= 67,108,864 B) and the rest.
      CHECK(buckets.size() == 2);
      CHECK(buckets[0]->size_B >= 64 * kMiB);
      REQUIRE(overhead != nullptr);
      CHECK(overhead->cost == TraceOp::Cost::time);
      CHECK(overhead->time_s == Approx(9.54e-3).epsilon(1e-12));
      CHECK(overhead->stream == "host");
      CHECK(overhead->after == std::vector<std::string>{"optimizer"});
      // Horovod has no separate first bucket: a "bucket" setting caps every bucket, the first
      // included. With 16 MiB: the first closes within one layer's gradient above 16 MiB (the
      // largest ResNet-50 layer, fc, holds 8,196,000 B), so below 16 MiB + 8,196,000 B.
      TrainingSpec small = spec;
      small.bucket_B = 16 * kMiB;
      auto fused = with_prefix(training_trace(small, setup, 8), "allreduce.");
      REQUIRE(fused.size() >= 4);
      CHECK(fused.front()->size_B >= 16 * kMiB);
      CHECK(fused.front()->size_B < 16 * kMiB + 8196000);
    }
  }
}

TEST_CASE("workload: 2:4 sparsity switches change gradient bytes and forward GEMMs") {
  TrainingSpec dense;
  TrainingSetup setup = resnet50("pytorch-ddp", dense);
  double prunable = 0;
  for (const Layer& l : setup.network->layers) prunable += l.prunable ? l.params : 0;
  // Prunable conv/linear weights of ResNet-50 (models/networks.json): 23,445,504 parameters.
  CHECK(prunable == 23445504);
  TrainingSpec grads = dense;
  grads.sparsity.gradients = true;
  // Half of the prunable gradients stay: 102,228,128 - 23,445,504 / 2 x 4 = 102,228,128 - 46,891,008
  // = 55,337,120 B.
  CHECK(gradient_bytes(dense, setup) - gradient_bytes(grads, setup) == prunable / 2 * 4);
  CHECK(gradient_bytes(grads, setup) == 55337120);
  double total = 0;
  for (const TraceOp* b : with_prefix(training_trace(grads, setup, 8), "allreduce.")) total += b->size_B;
  CHECK(total == 55337120);

  TrainingSpec math = dense;
  math.sparsity.math = true;
  TraceSpec t = training_trace(math, setup, 8);
  TraceSpec plain = training_trace(dense, setup, 8);
  int sparse_forward = 0;
  for (const Layer& l : setup.network->layers) {
    INFO(l.name);
    const TraceOp* fwd = find_op(t, "fwd." + l.name);
    REQUIRE(fwd != nullptr);
    CHECK(fwd->sparse == l.prunable);
    sparse_forward += fwd->sparse;
    CHECK_FALSE(find_op(plain, "fwd." + l.name)->sparse);
  }
  CHECK(sparse_forward > 0);
  for (const TraceOp* op : with_prefix(t, "bwd.")) CHECK_FALSE(op->sparse);  // backward GEMMs stay dense
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

TEST_CASE("workload: the memory estimate of ResNet-50 at 256 images per GPU") {
  TrainingSpec spec;
  TrainingSetup setup = resnet50("pytorch-ddp", spec);
  spec.batch_per_gpu = 256;
  spec.precision = "amp";
  const double params = 25557032;
  // Weights: FP32 master (4 B) and the FP16 copy (2 B); gradients FP32 (4 B); SGD momentum (4 B).
  TrainingMemory m = training_memory(spec, setup);
  CHECK(m.weights_B == Approx(params * 6));
  CHECK(m.gradients_B == Approx(params * 4));
  CHECK(m.optimizer_B == Approx(params * 4));
  // Activations: every layer's output (GEMM layers m x n x batch, the others their elements),
  // FP16, 256 images. conv1 alone: 12544 x 64 x 2 B x 256 = 411,041,792 B.
  double elements = 0;
  for (const Layer& layer : setup.network->layers)
    elements += layer.kind == Layer::Kind::elementwise || layer.kind == Layer::Kind::embedding
                    ? layer.elements
                    : layer.gemm_m * layer.gemm_n * layer.batch;
  CHECK(m.activations_B == Approx(elements * 2 * 256));
  CHECK(m.activations_B > 411041792.0 * 10);
  CHECK(m.total_B() == Approx(m.weights_B + m.gradients_B + m.optimizer_B + m.activations_B));
  // Compressed 2:4 weights: each pruned FP32 weight keeps 0.53125 of its bytes (half the values
  // plus a 2-bit index per kept value: 0.5 + 0.5 x 0.25 / 4), in master, copy and momentum alike;
  // gradients stay dense. 23,445,504 of the parameters are prunable (test above).
  spec.sparsity.weights = true;
  TrainingMemory sparse = training_memory(spec, setup);
  const double kept = params - 23445504 * (1 - 0.53125);
  CHECK(sparse.weights_B == Approx(kept * 6));
  CHECK(sparse.optimizer_B == Approx(kept * 4));
  CHECK(sparse.gradients_B == Approx(params * 4));
  CHECK(sparse.activations_B == Approx(m.activations_B));
}

TEST_CASE("workload: tensor parallelism splits the transformer blocks as Megatron-LM does") {
  TrainingSpec spec;
  TrainingSetup setup = bert_tp2(spec);
  TraceSpec t = training_trace(spec, setup, 4);
  // 4 ranks in tensor-parallel pairs: tp0 = {0, 1}, tp1 = {2, 3}; data-parallel dp0 = {0, 2},
  // dp1 = {1, 3}. Two replicas of 8 sequences: 16 per iteration.
  REQUIRE(t.groups.size() == 4);
  CHECK(t.groups[0].name == "tp0");
  CHECK(t.groups[0].ranks == std::vector<int>{0, 1});
  CHECK(t.groups[3].name == "dp1");
  CHECK(t.groups[3].ranks == std::vector<int>{1, 3});
  CHECK(t.samples == 16);
  auto op = [&](const std::string& name) -> const TraceOp& {
    for (const TraceOp& o : t.ops)
      if (o.name == name) return o;
    FAIL("no op " << name);
    return t.ops.front();
  };
  // Column-parallel qkv: m = 128 tokens x 8 sequences, n = 3072 / 2, k = 1024, on tp1's ranks.
  const TraceOp& qkv = op("fwd.encoder.0.attention.qkv.tp1");
  CHECK(qkv.m == 1024);
  CHECK(qkv.n == 1536);
  CHECK(qkv.k == 1024);
  CHECK(qkv.ranks == std::vector<int>{2, 3});
  // Attention core: 16 / 2 heads per rank, 8 sequences each: 64 GEMMs of 128 x 128 x 64.
  CHECK(op("fwd.encoder.0.attention.scores.tp0").batch == 64);
  // Row-parallel attention output: k = 1024 / 2; its output all-reduced in the pair, FP16:
  // 128 x 1024 x 8 x 2 B = 2,097,152 B, on the "tp" stream; the next op waits for it.
  const TraceOp& proj = op("fwd.encoder.0.attention.output.dense.tp0");
  CHECK(proj.k == 512);
  CHECK(proj.n == 1024);
  const TraceOp& ar = op("fwd.encoder.0.attention.output.dense.allreduce.tp0");
  CHECK(ar.group == "tp0");
  CHECK(ar.size_B == 2097152);
  CHECK(ar.dtype == "half");
  CHECK(ar.stream == "tp");
  CHECK(ar.after == std::vector<std::string>{"fwd.encoder.0.attention.output.dense.tp0"});
  CHECK(op("fwd.encoder.0.attention.output.dropout.tp0").after ==
        std::vector<std::string>{"fwd.encoder.0.attention.output.dense.allreduce.tp0"});
  // Backward: the column-parallel qkv's input gradient (1024 x 1024 FP16 = 2,097,152 B) is
  // partial on each rank and all-reduced after its dgrad.
  const TraceOp& back = op("bwd.encoder.0.attention.qkv.dgrad.allreduce.tp0");
  CHECK(back.size_B == 2097152);
  CHECK(back.after == std::vector<std::string>{"bwd.encoder.0.attention.qkv.dgrad.tp0"});
  // Gradients per rank: column layers hold half their parameters, row layers half their weights
  // and their whole bias, everything else whole; FP32, all-reduced across the pair's replicas.
  double per_rank = 0;
  for (const Layer& l : setup.network->layers) {
    if (l.tp == Layer::Split::column) per_rank += l.params / 2;
    else if (l.tp == Layer::Split::row) per_rank += l.gemm_n * l.gemm_k / 2 + (l.params - l.gemm_n * l.gemm_k);
    else per_rank += l.params;
  }
  CHECK(gradient_bytes(spec, setup) == Approx(per_rank * 4));
  double dp0 = 0, dp1 = 0;
  for (const TraceOp& o : t.ops) {
    if (o.kind != TraceOp::Kind::collective || o.stream != "comm") continue;
    (o.group == "dp0" ? dp0 : dp1) += o.size_B;
    CHECK(o.after.size() == 2);  // the op that readies the bucket, in both pairs
  }
  CHECK(dp0 == Approx(per_rank * 4));
  CHECK(dp1 == Approx(per_rank * 4));
  // Groups that do not divide the ranks are refused.
  spec.tensor_parallel = 3;
  CHECK_THROWS_AS(training_trace(spec, setup, 4), std::invalid_argument);
}

TEST_CASE("workload: a tensor-parallel iteration replays with its collectives") {
  TrainingSpec spec;
  TrainingSetup setup = bert_tp2(spec);
  TraceSpec t = training_trace(spec, setup, 8);
  Topology a100 = bundled("dgx-a100");
  Replay replay(a100, catalog(), t);
  Simulator simulator;
  PlatformRunner runner(simulator, simulator.add_platform(a100, replay.routes(), replay.needs()));
  ReplayResult r = replay.run(runner);
  // 4 pairs x 24 layers x (2 forward + 2 backward) activation allreduces, plus each of the 2
  // data-parallel groups' buckets.
  int tp_allreduces = 4 * 24 * 4;
  CHECK(r.collectives > tp_allreduces);
  CHECK(r.iteration_s > r.compute_s);
  CHECK(r.compute_s == Approx(replay.rank0_compute_s()).epsilon(1e-9));
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
