// Chakra execution traces (issue 30): the reader on hand-built messages with times derived by
// hand, its errors, the bundled feeder trace of MLCommons' Chakra (tests/data/chakra/README.md),
// and the round trip train --emit-chakra -> run --chakra.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "interop/chakra/chakra.hpp"
#include "interop/chakra/et_stream.hpp"
#include "io/io.hpp"
#include "llm/iteration.hpp"
#include "llm/iteration_trace.hpp"
#include "llm/layout.hpp"
#include "topology/flat.hpp"
#include "workload/replay.hpp"

using namespace topsim;
using namespace topsim::test;
using ChakraProtoMsg::Node;

namespace {

// A test case's files, removed when it ends (each test case runs in a process of its own).
std::filesystem::path et_temp_root() { return std::filesystem::temp_directory_path() / ("topsim-chakra-" + std::to_string(::getpid())); }
struct EtTempCleanup {
  ~EtTempCleanup() {
    std::error_code ec;
    std::filesystem::remove_all(et_temp_root(), ec);
  }
};

std::string et_temp_prefix(const std::string& name) {
  auto dir = et_temp_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "t").string();
}

void et_attr(Node& n, const std::string& name, std::uint64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}

Node et_comp(std::uint64_t id, std::uint64_t us, std::vector<std::uint64_t> data = {}, bool cpu = false) {
  Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(us);
  for (auto d : data) n.add_data_deps(d);
  auto* a = n.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(cpu);
  return n;
}

Node et_coll(std::uint64_t id, ChakraProtoMsg::CollectiveCommType type, std::uint64_t size_B, std::vector<std::uint64_t> data) {
  Node n;
  n.set_id(id);
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (auto d : data) n.add_data_deps(d);
  auto* a = n.add_attr();
  a->set_name("comm_type");
  a->set_int64_val(type);
  et_attr(n, "comm_size", size_B);
  return n;
}

Node et_p2p(std::uint64_t id, bool send, int peer, std::uint64_t tag, std::uint64_t size_B, std::vector<std::uint64_t> data) {
  Node n;
  n.set_id(id);
  n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  for (auto d : data) n.add_data_deps(d);
  et_attr(n, send ? "comm_dst" : "comm_src", static_cast<std::uint64_t>(peer));
  et_attr(n, "comm_tag", tag);
  et_attr(n, "comm_size", size_B);
  return n;
}

void et_write_rank(const std::string& prefix, int rank, const std::vector<Node>& nodes) {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  write_et_file(prefix + "." + std::to_string(rank) + ".et", meta, nodes);
}

// A file of raw bytes (for damaged streams): a valid GlobalMetadata, then `tail`.
void et_write_raw(const std::string& prefix, const std::string& tail) {
  et_write_rank(prefix, 0, {});
  std::ofstream(prefix + ".0.et", std::ios::binary | std::ios::app) << tail;
}

Topology et_flat(const std::string& name) { return Topology::build(flat_topology(name, catalog()), catalog()); }

ReplayResult et_replay(const Topology& t, const TraceSpec& trace) {
  Simulator sim;
  Replay r(t, catalog(), trace);
  PlatformRunner runner(sim, sim.add_platform(t, r.routes(), r.needs()));
  return r.run(runner);
}

const TraceOp& et_op(const TraceSpec& t, const std::string& name) {
  for (const TraceOp& op : t.ops)
    if (op.name == name) return op;
  FAIL("no op " << name);
  throw std::logic_error("unreachable");
}

std::string et_read_error(const std::string& prefix, ChakraReadOptions options = {}) {
  try {
    read_chakra(prefix, options);
  } catch (const InputError& e) {
    return e.what();
  } catch (const UsageError& e) {
    return std::string("usage: ") + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("chakra: one rank's dependencies and streams, derived by hand", "[chakra]") {
  EtTempCleanup cleanup;
  // File order a, e, b, c, d. a: GPU 100 us; e: GPU 10 us with a ctrl_dep on c; b: host 50 us
  // after a; c: GPU 20 us after b; d: GPU 40 us, free.
  Node e = et_comp(5, 10);
  e.add_ctrl_deps(3);
  const std::string prefix = et_temp_prefix("deps");
  et_write_rank(prefix, 0, {et_comp(1, 100), e, et_comp(2, 50, {1}, true), et_comp(3, 20, {2}), et_comp(4, 40)});
  Topology t = et_flat("flat:4:a100");
  ChakraSummary s;
  TraceSpec all = read_chakra(prefix, {}, &s);
  CHECK(s.nodes == 5);
  CHECK(s.host_nodes == 1);
  CHECK(s.compute_nodes == 4);
  CHECK(et_op(all, "r0.2").stream == "host");
  CHECK(et_op(all, "r0.5").after == std::vector<std::string>{"r0.3"});
  // Both kinds of dependency: the GPU stream runs a, c, e, d (a topological order, ties in file
  // order: e waits for c, which waits for b on the host): a 0-100, b 100-150 (host), c 150-170,
  // e 170-180, d 180-220 us.
  CHECK(et_replay(t, all).iteration_s == Approx(220e-6).epsilon(1e-12));
  // data_deps only (Chakra's feeder): e is free and comes before b and c in the file, so the GPU
  // stream runs a, e, c, d: a 0-100, e 100-110, b 100-150, c 150-170, d 170-210 us.
  ChakraReadOptions data;
  data.ctrl_deps = false;
  TraceSpec only_data = read_chakra(prefix, data);
  CHECK(et_op(only_data, "r0.5").after.empty());
  CHECK(et_replay(t, only_data).iteration_s == Approx(210e-6).epsilon(1e-12));
}

TEST_CASE("chakra: --chakra-compute model costs num_ops and tensor_size through the compute model", "[chakra]") {
  EtTempCleanup cleanup;
  // m: tensor_size 2799e6 B only: memory-bound, 2799e6 B at the A100's 1555 GB/s x 0.9 (ampere
  // memory_efficiency, as test_workload derives) = 2 ms, whatever its duration_micros (7 us).
  // f: num_ops 1e12 FLOPs with 1e6 B: the rate a square GEMM of 1e12 FLOPs reaches (the trace
  // format's "flops" op, read back from JSON for the comparison).
  Node m = et_comp(1, 7);
  et_attr(m, "tensor_size", 2799000000);
  Node f = et_comp(2, 7, {1});
  et_attr(f, "num_ops", 1000000000000);
  et_attr(f, "tensor_size", 1000000);
  Node host = et_comp(3, 40, {}, true);  // host ops keep their duration
  const std::string prefix = et_temp_prefix("model");
  et_write_rank(prefix, 0, {m, f, host});
  ChakraReadOptions model;
  model.compute = ChakraReadOptions::Compute::model;
  TraceSpec trace = read_chakra(prefix, model);
  CHECK(et_op(trace, "r0.1").cost == TraceOp::Cost::memory);
  CHECK(et_op(trace, "r0.2").cost == TraceOp::Cost::flops);
  CHECK(et_op(trace, "r0.2").flops == 1e12);
  CHECK(et_op(trace, "r0.3").cost == TraceOp::Cost::time);
  Topology t = et_flat("flat:4:a100");
  TraceSpec json = parse_trace(R"({"ranks": 1, "ops": [{"name": "f", "kind": "compute", "flops": 1e12, "bytes": "1MB"}]})", "f.json");
  const double flops_s = Replay(t, catalog(), json).rank0_compute_s();
  REQUIRE(flops_s > 0);
  Replay replay(t, catalog(), trace);
  CHECK(replay.rank0_compute_s() == Approx(2e-3 + flops_s).epsilon(1e-9));
  // Duration mode reads the recorded 7 + 7 us instead (and the host's 40 us beside them).
  const TraceSpec durations = read_chakra(prefix, {});
  Replay recorded(t, catalog(), durations);
  CHECK(recorded.rank0_compute_s() == 0);  // measured times are not modelled
}

TEST_CASE("chakra: a send/recv pair and a collective on flat:4:a100, derived by hand", "[chakra]") {
  EtTempCleanup cleanup;
  // Rank 0: a (GPU 1 ms), then a send of 1e9 B to rank 1 with tag 7, then an all-reduce of
  // 64 MiB after the send. Rank 1: the receive, then c (GPU 0.5 ms) after it, then the same
  // all-reduce after c.
  const std::string prefix = et_temp_prefix("p2p");
  et_write_rank(prefix, 0, {et_comp(1, 1000), et_p2p(2, true, 1, 7, 1000000000, {1}), et_coll(3, ChakraProtoMsg::ALL_REDUCE, 64 << 20, {2})});
  et_write_rank(prefix, 1, {et_p2p(1, false, 0, 7, 1000000000, {}), et_comp(2, 500, {1}), et_coll(3, ChakraProtoMsg::ALL_REDUCE, 64 << 20, {2})});
  TraceSpec trace = read_chakra(prefix, {});
  REQUIRE(trace.ranks == 2);
  const TraceOp& send = et_op(trace, "p2p.0-1.tag7.0");
  CHECK(send.kind == TraceOp::Kind::send);
  CHECK(send.src == 0);
  CHECK(send.dst == 1);
  CHECK(send.size_B == 1e9);
  CHECK(send.after == std::vector<std::string>{"r0.1"});
  const TraceOp& ar = et_op(trace, "coll.world.0");
  CHECK(ar.kind == TraceOp::Kind::collective);
  CHECK(ar.op == "allreduce");
  CHECK(ar.group == "world");
  CHECK(ar.size_B == 64 << 20);
  // Each rank's own dependency: the send on rank 0, c on rank 1.
  CHECK(ar.after == std::vector<std::string>{"p2p.0-1.tag7.0", "r1.2"});
  CHECK(et_op(trace, "r1.2").after == std::vector<std::string>{"p2p.0-1.tag7.0"});

  // The send, as test_workload's hand derivation of flat:4:a100: three hops of 0.2 us, then
  // 1e9 B at 12 x 25e9 x 0.9136 = 274.08e9 B/s: T = 0.6e-6 + 1e9 / 274.08e9 s. It starts when a
  // ends (1 ms); c runs 1 ms + T to 1.5 ms + T; the all-reduce waits for both ranks, so it
  // starts at 1.5 ms + T and the iteration ends when it does.
  const double send_s = 0.6e-6 + 1e9 / 274.08e9;
  Topology t = et_flat("flat:4:a100");
  ReplayResult r = et_replay(t, trace);
  CHECK(r.op_start_s.at("p2p.0-1.tag7.0") == Approx(1e-3).epsilon(1e-9));
  CHECK(r.op_span_s.at("p2p.0-1.tag7.0") == Approx(send_s).epsilon(1e-9));
  CHECK(r.op_start_s.at("coll.world.0") == Approx(1.5e-3 + send_s).epsilon(1e-9));
  CHECK(r.iteration_s == Approx(1.5e-3 + send_s + r.op_span_s.at("coll.world.0")).epsilon(1e-9));
  CHECK(r.collectives == 1);
}

TEST_CASE("chakra: damaged files and what topsim cannot honour name the file and the node or byte", "[chakra]") {
  EtTempCleanup cleanup;
  const std::string prefix = et_temp_prefix("errors");
  const std::string file = prefix + ".0.et";
  // GlobalMetadata {version "0.0.4"}: tag 0x0a, length 5, then 5 bytes (7 bytes), after its own
  // 1-byte length prefix: the first Node's prefix is at byte 8.
  et_write_raw(prefix, std::string("\x80", 1));
  CHECK(et_read_error(prefix) == file + ":byte 8: truncated varint: the file ends at byte 9 inside a message's length "
                                     "prefix (the file is cut short)");
  et_write_raw(prefix, std::string("\x09\x08\x01", 3));
  CHECK(et_read_error(prefix) == file + ":byte 8: Node message of 9 bytes, but the file has 2 left (the file is cut short)");
  et_write_raw(prefix, std::string("\x03\xff\xff\xff", 4));
  CHECK(et_read_error(prefix) ==
        file + ":byte 8: the Node message of 3 bytes does not parse as protobuf (a damaged or non-Chakra file)");

  Node load = et_comp(9, 1);
  load.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
  et_write_rank(prefix, 0, {load});
  CHECK(et_read_error(prefix) == file + ":node 9 (n9): MEM_LOAD_NODE is not supported; supported: COMP_NODE, COMM_COLL_NODE, "
                                     "COMM_SEND_NODE, COMM_RECV_NODE");
  Node odd = et_comp(9, 1);
  odd.set_type(static_cast<ChakraProtoMsg::NodeType>(42));
  et_write_rank(prefix, 0, {odd});
  CHECK_THAT(et_read_error(prefix), Catch::Contains("node type 42 (not in et_def.proto) is not supported"));
  Node extra = et_comp(9, 1);
  et_attr(extra, "comm_priority", 1);
  et_write_rank(prefix, 0, {extra});
  CHECK_THAT(et_read_error(prefix), Catch::Contains(file + ":node 9 (n9): attribute 'comm_priority' is not supported; supported: is_cpu_op"));
  et_write_rank(prefix, 0, {et_coll(4, ChakraProtoMsg::BARRIER, 4, {})});
  CHECK_THAT(et_read_error(prefix), Catch::Contains("comm_type BARRIER is not supported; supported: ALL_REDUCE"));
  et_write_rank(prefix, 0, {et_comp(1, 1, {2}), et_comp(2, 1, {1})});
  CHECK(et_read_error(prefix) == file + ":node 1: the dependencies form a cycle; nodes on it or waiting for it: 1, 2 "
                                     "(--chakra-deps data follows data_deps only, as Chakra's own feeder does)");
  et_write_rank(prefix, 0, {et_comp(1, 1, {7})});
  CHECK(et_read_error(prefix) == file + ":node 1 (n1): data_deps names node 7, which is not in the file");
  ChakraReadOptions model;
  model.compute = ChakraReadOptions::Compute::model;
  et_write_rank(prefix, 0, {et_comp(1, 1)});
  CHECK_THAT(et_read_error(prefix, model), Catch::Contains("--chakra-compute model costs a COMP_NODE from num_ops"));

  // Ranks: a gap, a send nobody receives, collectives that disagree.
  et_write_rank(prefix, 2, {et_comp(1, 1)});
  CHECK(et_read_error(prefix) == "usage: --chakra " + prefix + ": " + prefix +
                                  ".1.et is missing (found ranks 0, 2; a trace has one file per rank, 0 to 2)");
  CHECK(et_read_error(prefix + "x") == "usage: --chakra " + prefix + "x: no file " + prefix +
                                        "x.0.et (a Chakra trace is PREFIX.<rank>.et, one file per rank from 0)");
  et_write_rank(prefix, 1, {et_p2p(1, true, 0, 3, 8, {})});
  et_write_rank(prefix, 2, {et_comp(1, 1)});
  CHECK_THAT(et_read_error(prefix), Catch::Contains(prefix + ".1.et:node 1: a send to rank 0 with tag 3 that rank 0 never receives"));
  et_write_rank(prefix, 1, {et_coll(1, ChakraProtoMsg::ALL_GATHER, 8, {})});
  et_write_rank(prefix, 0, {et_coll(1, ChakraProtoMsg::ALL_GATHER, 16, {})});
  et_write_rank(prefix, 2, {et_coll(1, ChakraProtoMsg::ALL_GATHER, 16, {})});
  CHECK_THAT(et_read_error(prefix), Catch::Contains(prefix + ".1.et:node 1: collective 0 of process group '' is allgather of 8 B here "
                                                 "but allgather of 16 B in " + file));

  // Two process groups whose collectives two ranks issue in opposite orders: each file is
  // acyclic, the job deadlocks, and the replay says so (as for any trace) instead of hanging.
  const std::string crossed = et_temp_prefix("crossed");
  auto in_group = [](Node n, const std::string& pg) {
    auto* a = n.add_attr();
    a->set_name("pg_name");
    a->set_string_val(pg);
    return n;
  };
  et_write_rank(crossed, 0, {in_group(et_coll(1, ChakraProtoMsg::ALL_REDUCE, 8, {}), "a"),
                             in_group(et_coll(2, ChakraProtoMsg::ALL_REDUCE, 8, {1}), "b")});
  et_write_rank(crossed, 1, {in_group(et_coll(1, ChakraProtoMsg::ALL_REDUCE, 8, {}), "b"),
                             in_group(et_coll(2, ChakraProtoMsg::ALL_REDUCE, 8, {1}), "a")});
  TraceSpec trace = read_chakra(crossed, {});
  CHECK(et_op(trace, "coll.a.0").group == "pg.a");
  CHECK(et_op(trace, "coll.a.0").after == std::vector<std::string>{"coll.b.0"});
  Topology t = et_flat("flat:4:a100");
  CHECK_THAT(input_error([&] { Replay(t, catalog(), trace); }),
             Catch::Contains(crossed + ".0.et:/ops: the ops' dependencies (\"after\" and stream order) form a cycle; ops on it or "
                             "waiting for it: coll.a.0, coll.b.0"));
}

TEST_CASE("chakra: the feeder test trace of MLCommons' Chakra replays; its first broadcast by hand", "[chakra]") {
  EtTempCleanup cleanup;
  const std::string prefix = test_data("chakra/feeder");
  // Its GPU kernels' ctrl_deps name the host ops that launched them, some of which the trace
  // left out (node 3, the profiler's root): followed, that is an error naming the node.
  CHECK_THAT(et_read_error(prefix), Catch::Contains("feeder.0.et:node 216 (aten::flatten_dense_tensors(0)): ctrl_deps names node 3"));
  ChakraReadOptions options;
  options.ctrl_deps = false;  // as Chakra's own feeder reads it
  options.ranks = 8;          // rank 0 of a data-parallel job stands for 8
  ChakraSummary s;
  TraceSpec trace = read_chakra(prefix, options, &s);
  CHECK(s.nodes == 3664);
  CHECK(s.host_nodes == 2448);  // is_cpu_op, the 14 c10d:: wrappers of collectives among them
  CHECK(s.compute_nodes == 1209);
  CHECK(s.collective_nodes == 7);
  CHECK(trace.ranks == 8);
  // Node 435, ncclKernel_Broadcast_RING_LL: comm_type 5 (BROADCAST), comm_size 212480 B, which is
  // the 53120 float32 elements (x 4 B) of the flattened parameters node 216 outputs. It waits for
  // data_deps 432 (c10d::broadcast_, host), 216 and 217 (flatten_dense_tensors, host).
  const TraceOp& first = et_op(trace, "coll.world.0");
  CHECK(first.op == "broadcast");
  CHECK(first.size_B == 53120 * 4);
  CHECK(first.group == "world");
  CHECK(first.after == std::vector<std::string>{"r0.216", "r0.217", "r0.432"});
  // The host stream runs 216 (318 us), 217 (28 us), 432 (85 us) first, one after another, so the
  // broadcast starts at 318 + 28 + 85 = 431 us on every rank.
  Topology t = bundled("dgx-a100");
  ReplayResult r = et_replay(t, trace);
  CHECK(r.op_start_s.at("coll.world.0") == Approx(431e-6).epsilon(1e-9));
  CHECK(r.op_span_s.at("coll.world.0") > 0);
  CHECK(r.collectives == 7);
  // The recorded kernel time is the busiest compute stream: every GPU COMP_NODE's duration_micros.
  double gpu_s = 0;
  for (const TraceOp& op : trace.ops)
    if (op.kind == TraceOp::Kind::compute && op.stream == "compute") gpu_s += op.time_s;
  CHECK(r.compute_s == Approx(gpu_s).epsilon(1e-12));
  CHECK(r.iteration_s >= gpu_s);
}

TEST_CASE("chakra: train's iteration written as Chakra and replayed takes train's time", "[chakra]") {
  EtTempCleanup cleanup;
  const TransformerSpec& model = catalog().transformers().at("llama3-8b");
  Topology t = bundled("dgx-a100");
  struct Case {
    int tp, pp, vp, zero, global_batch;
  };
  // Without pipeline or tensor parallelism (ZeRO-0 and ZeRO-1), then 1F1B, interleaved 1F1B and
  // tensor parallelism beside a pipeline, all on 8 A100s with neither overlap (docs/chakra.md).
  for (Case c : {Case{1, 1, 1, 0, 16}, Case{1, 1, 1, 1, 16}, Case{1, 2, 1, 1, 16}, Case{1, 2, 2, 1, 32}, Case{2, 2, 1, 1, 32}}) {
    LlmLayout want;
    want.tp = c.tp;
    want.pp = c.pp;
    want.vp = c.vp;
    want.global_batch = c.global_batch;
    want.zero = c.zero;
    want.overlap_grad_reduce = false;
    want.overlap_param_gather = false;
    LlmLayout L = resolve_layout(model, want, 8);
    IterationWindows windows;
    LlmResult trained = simulate_iteration(t, catalog(), model, L, {}, &windows);
    const std::string prefix = et_temp_prefix("roundtrip");
    CHECK(write_chakra(prefix, iteration_trace(L, LlmOptions{}.order, trained, windows)).size() == 8);
    ChakraSummary s;
    TraceSpec back = read_chakra(prefix, {}, &s);
    ReplayResult replayed = et_replay(t, back);
    CHECK(s.ranks == 8);
    const int m = L.micro_batches(), stages = L.pp * L.vp;
    // Per micro-batch and boundary between virtual stages, each of a stage's 8 / pp ranks sends
    // forward and backward: two nodes (send, receive) each.
    CHECK(s.p2p_nodes == 2 * 2 * (stages - 1) * m * (8 / L.pp));
    const double diff = std::abs(replayed.iteration_s - trained.iteration_s);
    if (L.pp == 1 && L.tp == 1) {
      // Chakra's durations are whole microseconds: each of a rank's 2m passes and its optimizer
      // step rounds by at most 0.5 us (measured: 0.3 us at ZeRO-0, 1.1 us at ZeRO-1).
      CHECK(diff <= (2 * m + 1) * 0.5e-6);
    } else {
      // train times one send (and the tensor traffic beside the gradient collectives) in its
      // windows, the replay each send when it runs: measured 0.23 ms (pp 2, also with vp 2) and
      // 0.43 ms (tp 2, pp 2) of 5-10 s. A pass that did not wait for its neighbour's send would
      // lose the pipeline's 1.4 s bubble.
      CHECK(diff <= 1e-4 * trained.iteration_s);
    }
  }
}
