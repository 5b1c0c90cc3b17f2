// nccl-tests output (src/interop/nccl_tests_log.cpp, nccl_tests_json.cpp, nccl_tests_rows.cpp).
// The logs are written in the format of nccl-tests 2.19.6's util.cu (the printf formats cited
// beside each parser function); tests/data/nccl-tests/ holds the longer ones.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "interop/nccl_tests_log.hpp"
#include "interop/nccl_tests_rows.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

NcclTestsLog data_log(const std::string& name) {
  return parse_nccl_tests_output(read_text(test_data("nccl-tests/" + name)), name);
}

std::string log_error(const std::string& text) {
  return input_error([&] { parse_nccl_tests_log(text, "x.log"); });
}

// A one-GPU all_reduce_perf run as nccl-tests 2.19.6 prints it (util.cu:623-640, 687, 756-760,
// 457 + 502-511, 777-780), with the result line given.
std::string one_gpu_run(const std::string& result_line) {
  return "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
         "# Collective test starting: all_reduce_perf\n"
         "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
         "#\n"
         "# Using devices\n"
         "#  Rank  0 Group  0 Pid   4242 on      host1 device  0 [0000:07:00] NVIDIA H100 80GB HBM3\n"
         "#\n"
         "#                                                              out-of-place                       in-place          \n"
         "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n" +
         result_line +
         "\n"
         "# Out of bounds values : 0 OK\n"
         "# Avg bus bandwidth    : 0 \n"
         "#\n"
         "# Collective test concluded: all_reduce_perf\n";
}

}  // namespace

TEST_CASE("nccl-tests: the library's version code as a release", "[nccl-tests]") {
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before.
  CHECK(nccl_version_of_code(22809) == "2.28.9");  // 2*10000 + 28*100 + 9
  CHECK(nccl_version_of_code(21805) == "2.18.5");
  CHECK(nccl_version_of_code(2708) == "2.7.8");    // 2*1000 + 7*100 + 8
}

TEST_CASE("nccl-tests: the header, device lines, results and trailer of one run", "[nccl-tests]") {
  NcclTestsLog log = data_log("dgx-a100-allreduce.txt");
  REQUIRE(log.runs.size() == 1);
  const NcclTestsRun& run = log.runs[0];
  CHECK(run.tests_version == "2.19.6");
  // nccl-library=21805 says 2.18.5, and NCCL's own INFO line says the same.
  CHECK(run.nccl_version == "2.18.5");
  CHECK(run.program == "all_reduce_perf");
  CHECK(run.program_line == 2);
  CHECK(run.header_line == 3);
  CHECK(run.threads == 1);
  CHECK(run.gpus_per_thread == 8);
  CHECK(run.min_B == 1048576);
  CHECK(run.max_B == 268435456);
  CHECK_FALSE(run.cputime);
  REQUIRE(run.ranks.size() == 8);
  CHECK(run.gpu_count() == 8);
  const NcclTestsRank& r7 = run.ranks[7];
  CHECK(r7.rank == 7);
  CHECK(r7.group == 0);
  CHECK(r7.pid == 1007);
  CHECK(r7.host == "node1");
  CHECK(r7.device == 7);
  CHECK(r7.bus_id == "0000:bd:00");
  CHECK(r7.gpu_name == "NVIDIA A100-SXM4-80GB");
  CHECK(run.hosts() == std::vector<std::string>{"node1"});
  REQUIRE(run.points.size() == 5);
  const NcclTestsPoint& p = run.points[3];
  CHECK(p.line == 22);
  CHECK(p.size_B == 67108864);
  CHECK(p.count == 16777216);  // 64 MiB of 4-byte floats
  CHECK(p.type == "float");
  CHECK(p.redop == "sum");
  CHECK(p.root == -1);
  CHECK(p.out_of_place.time_us == 375.0);
  // algbw = 67108864 B / 375 us = 178.96 GB/s; busbw = algbw x 2(8-1)/8 = 313.17, as printed.
  CHECK(p.out_of_place.algbw_GBps == 178.96);
  CHECK(p.out_of_place.busbw_GBps == 313.17);
  CHECK(p.out_of_place.wrong == 0.0);
  CHECK(p.in_place.time_us == 372.0);
  CHECK(p.in_place.busbw_GBps == 315.70);
  REQUIRE(run.out_of_bounds);
  CHECK(*run.out_of_bounds == 0);
  REQUIRE(run.avg_busbw_GBps);
  CHECK(*run.avg_busbw_GBps == 123.456);
  CHECK(machine_of(run) == "8 GPUs (NVIDIA A100-SXM4-80GB) on 1 host (node1), NCCL 2.18.5, nccl-tests 2.19.6");
}

TEST_CASE("nccl-tests: -C 1, -S 1, -c 0, -m and a reduced maxBytes", "[nccl-tests]") {
  const NcclTestsRun run = data_log("broadcast-cputime-timestamps.txt").runs.at(0);
  CHECK(run.cputime);
  CHECK(run.nccl_version == "2.28.9");  // nccl-library=22809, no NCCL line
  REQUIRE(run.points.size() == 2);
  CHECK(run.points[1].out_of_place.time_us == 400.0);
  CHECK_FALSE(run.points[1].out_of_place.wrong);  // N/A: data checks off
  CHECK(run.points[1].root == 0);
  CHECK(run.points[1].redop == "none");
}

TEST_CASE("nccl-tests: -I 1 per-iteration columns", "[nccl-tests]") {
  const NcclTestsRun run = data_log("reduce-per-iteration.txt").runs.at(0);
  REQUIRE(run.points.size() == 1);
  CHECK(run.points[0].type == "half");
  CHECK(run.points[0].out_of_place.time_us == 20.0);
  // The in-place set starts after time algbw busbw #wrong i_min i_max i_p99 i_cv% (8 fields).
  CHECK(run.points[0].in_place.time_us == 21.0);
  CHECK(run.points[0].in_place.busbw_GBps == 49.93);
}

TEST_CASE("nccl-tests: runs concatenated under OpenMPI's --tag-output", "[nccl-tests]") {
  NcclTestsLog log = data_log("h100-2node-mpi.txt");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].program == "all_gather_perf");
  CHECK(log.runs[1].program == "reduce_scatter_perf");
  for (const NcclTestsRun& run : log.runs) {
    CHECK(run.gpu_count() == 16);  // one "# Rank" line per MPI process, -g 1
    CHECK(run.hosts() == std::vector<std::string>{"node1", "node2"});
    CHECK(run.nccl_version == "2.21.5");
    REQUIRE(run.points.size() == 2);
    CHECK(run.points[1].size_B == 268435456);
  }
  CHECK(log.runs[0].points[0].count == 16384);  // 1 MiB gathered from 16 ranks: 65536 B = 16384 floats each
  CHECK(log.runs[1].points[1].out_of_place.time_us == 2700.0);
}

TEST_CASE("nccl-tests: Slurm srun -l prefixes and a log without version or program lines", "[nccl-tests]") {
  NcclTestsLog log = data_log("srun-no-program.txt");
  REQUIRE(log.runs.size() == 1);
  const NcclTestsRun& run = log.runs[0];
  CHECK(run.program.empty());
  CHECK(run.tests_version.empty());
  CHECK(run.nccl_version.empty());
  REQUIRE(run.ranks.size() == 2);
  CHECK(run.ranks[1].bus_id == "0x1b");  // no Group column, a one-byte bus id
  CHECK(run.ranks[1].group == 0);
  CHECK(run.points.size() == 2);
  CHECK(input_error([&] { operation_of(run, "srun-no-program.txt", ""); }) ==
        "srun-no-program.txt:1: this run does not name its program (no '# Collective test starting:' line, util.cu:624, or "
        "-J args): give --op");
  CHECK(operation_of(run, "srun-no-program.txt", "allreduce") == "allreduce");
}

TEST_CASE("nccl-tests: MPICH's [rank] prefix, and old runs one after another", "[nccl-tests]") {
  std::string line = "           8             2     float     sum      -1    10.00    0.00    0.00       0    10.00    0.00    0.00       0";
  std::string run = one_gpu_run(line);
  std::string tagged;
  for (std::size_t at = 0; at < run.size();) {
    std::size_t end = run.find('\n', at);
    tagged += "[0] " + run.substr(at, end - at) + "\n";
    at = end + 1;
  }
  NcclTestsLog log = parse_nccl_tests_log(tagged + run, "x.log");
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].points.at(0).out_of_place.time_us == 10.0);
  CHECK(log.runs[1].program_line == 17);  // the second run's line 2, after the first's 15 lines
  // Without version lines, a second "# nThread" header starts a second run.
  std::string old = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
                    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n" +
                    line + "\n";
  CHECK(parse_nccl_tests_log(old + old, "x.log").runs.size() == 2);
}

TEST_CASE("nccl-tests: damaged lines name the line and what nccl-tests prints there", "[nccl-tests]") {
  CHECK(input_error([] { data_log("damaged.txt"); }) ==
        "damaged.txt:21: expected a result line of 13 fields (size count type redop root, then time algbw busbw #wrong "
        "out-of-place and in-place; util.cu:457, util.cu:507-511), got 7");
  std::string good = "           8             2     float     sum      -1    10.00    0.00    0.00       0    10.00    0.00    0.00       0";
  CHECK(log_error(one_gpu_run("           8             2     float     sum      -1    1O.00    0.00    0.00       0    10.00    0.00    0.00       0")) ==
        "x.log:11: time '1O.00' is not a number (util.cu:507-511)");
  CHECK(log_error(one_gpu_run("           8             2     float     sum      -1    10.00    0.00    0.00       x    10.00    0.00    0.00       0")) ==
        "x.log:11: #wrong 'x' is neither a count nor N/A (util.cu:507-511)");
  CHECK(log_error(one_gpu_run("         8.5             2     float     sum      -1    10.00    0.00    0.00       0    10.00    0.00    0.00       0")) ==
        "x.log:11: size '8.5' is not a byte count");
  std::string run = one_gpu_run(good);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = run;
    text.replace(text.find(from), from.size(), to);
    return log_error(text);
  };
  CHECK(replaced("nGpus 1", "nGpu 1") ==
        "x.log:3: expected '# nThread N nGpus N minBytes N maxBytes N step: N(factor|bytes) ...' (util.cu:625)");
  CHECK(replaced("nccl-library=22809", "nccl-library=") ==
        "x.log:1: expected '# nccl-tests version V nccl-headers=CODE nccl-library=CODE' (util.cu:623), got nccl-library=''");
  CHECK(replaced("Pid   4242", "Pid") == "x.log:6: expected '#  Rank N Group N Pid N on HOST device N [BUS ID] GPU NAME' (util.cu:687)");
  CHECK(replaced("Rank  0", "Rank  1") == "x.log:6: rank 1 where rank 0 was expected (nccl-tests prints the ranks in order, util.cu:705)");
  CHECK(replaced("   time   algbw   busbw  #wrong     time", "   tiem   algbw   busbw  #wrong     time") ==
        "x.log:9: expected '# size count type redop root time algbw busbw #wrong time algbw busbw #wrong' (util.cu:757), got "
        "'tiem' for the time column");
  CHECK(replaced("values : 0 OK", "values : OK") == "x.log:12: expected '# Out of bounds values : N OK|FAILED' (util.cu:777) after a result table");
  CHECK(replaced("concluded: all_reduce_perf", "concluded: all_gather_perf") ==
        "x.log:15: the run started as all_reduce_perf (line 2) but this line names all_gather_perf");
}

TEST_CASE("nccl-tests: an operation topsim does not model is named at its line", "[nccl-tests]") {
  NcclTestsLog log = data_log("unknown-op.txt");
  CHECK(input_error([&] { operation_of(log.runs.at(0), log.file, ""); }) ==
        "unknown-op.txt:2: operation 'gather_perf' is not one topsim models; it models all_reduce_perf, all_gather_perf, "
        "reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf");
}

TEST_CASE("nccl-tests: the -J JSON file", "[nccl-tests]") {
  NcclTestsLog log = data_log("allreduce-J.json");
  REQUIRE(log.runs.size() == 1);
  const NcclTestsRun& run = log.runs[0];
  CHECK(run.program == "all_reduce_perf");  // argv[0]'s file name
  CHECK(run.nccl_version == "2.28.9");
  CHECK(run.gpu_count() == 4);
  CHECK(run.ranks[3].bus_id == "0000:0a:00");
  REQUIRE(run.points.size() == 2);
  CHECK(run.points[1].size_B == 134217728);
  CHECK(run.points[1].root == -1);  // "    -1" as text
  CHECK(run.points[1].out_of_place.time_us == 900.0);
  // 134217728 B / 900 us = 149.130809 GB/s, busbw 1.5x (2(4-1)/4) = 223.696213, written with %lf.
  CHECK(run.points[1].out_of_place.busbw_GBps == Approx(223.696213).epsilon(1e-9));
  CHECK(run.points[1].in_place.time_us == 918.0);
  CHECK(*run.avg_busbw_GBps == 150.0);
  CHECK(input_error([] { parse_nccl_tests_json(R"({"version": 3, "nccl_version": 22809, "args": []})", "j.json"); }) ==
        "j.json: missing key 'config' (nccl-tests -J writes it; util.cu:317-794)");
  CHECK(input_error([] { parse_nccl_tests_json(R"({"version": 2})", "j.json"); }) ==
        "j.json:/version: JSON file version the number 2; topsim reads version 3 (util.cu:52)");
}

TEST_CASE("nccl-tests: validation rows, one per result line", "[nccl-tests]") {
  MeasuredRows rows = measured_rows({data_log("dgx-a100-allreduce.txt"), data_log("h100-2node-mpi.txt")}, "dgx-a100", 0, "");
  REQUIRE(rows.rows.size() == 9);  // 5 + 2 runs x 2 lines
  const ValidationRow& small = rows.rows[0];
  CHECK(small.id == "nccl-tests-dgx-a100-allreduce/allreduce/8gpu/1048576B");
  CHECK(small.metric == "time_us");  // below 64 MiB
  CHECK(small.measured() == 25.0);
  CHECK(small.gpus.size() == 8);
  CHECK(small.scale.nodes == 0);  // one host
  CHECK(small.nccl == "2.18.5");
  const ValidationRow& big = rows.rows[3];
  CHECK(big.metric == "busbw_GBps");  // from 64 MiB
  CHECK(big.measured() == 313.17);
  const ValidationRow& gathered = rows.rows[6];
  CHECK(gathered.id == "nccl-tests-h100-2node-mpi/run1/allgather/16gpu/268435456B");
  CHECK(gathered.scale.nodes == 2);  // node1 and node2
  CHECK(gathered.measured() == 93.21);
  CHECK(rows.rows[8].op == "reducescatter");
  CHECK(rows.sources.at("nccl-tests-h100-2node-mpi") ==
        "nccl-tests output h100-2node-mpi.txt: all_gather_perf -b 1048576 -e 268435456: 16 GPUs (NVIDIA H100 80GB HBM3) on 2 "
        "hosts (node1, node2), NCCL 2.21.5, nccl-tests 2.19.6; reduce_scatter_perf -b 1048576 -e 268435456: 16 GPUs (NVIDIA "
        "H100 80GB HBM3) on 2 hosts (node1, node2), NCCL 2.21.5, nccl-tests 2.19.6");
  // --nodes wins over the host count.
  CHECK(measured_rows({data_log("h100-2node-mpi.txt")}, "dgx-h100", 4, "").rows[0].scale.nodes == 4);
}

TEST_CASE("nccl-tests: the rows written read back as a validation file", "[nccl-tests]") {
  MeasuredRows rows = measured_rows({data_log("h100-2node-mpi.txt")}, "dgx-h100", 0, "");
  ValidationFile file = load_validation_file(write_temp("nccl-tests-rows.json", write_validation_json(rows)));
  REQUIRE(file.rows.size() == rows.rows.size());
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    const ValidationRow& got = file.rows[i];
    const ValidationRow& want = rows.rows[i];
    CHECK(got.id == want.id);
    CHECK(got.op == want.op);
    CHECK(got.size_B == want.size_B);
    CHECK(got.gpus == want.gpus);
    CHECK(got.scale.nodes == 2);
    CHECK(got.metric == want.metric);
    CHECK(got.measured() == want.measured());
    CHECK(got.nccl == "2.21.5");
    CHECK(got.citation == rows.sources.at(want.source));
  }
}

TEST_CASE("nccl-tests: -N cycles and two logs of one name keep row ids unique", "[nccl-tests]") {
  std::string line = "           8             2     float     sum      -1    10.00    0.00    0.00       0    10.00    0.00    0.00       0";
  std::string text = one_gpu_run(line + "\n" + line);  // -N 2 prints the table's lines twice (common.cu:934-943)
  NcclTestsLog log = parse_nccl_tests_log(text, "dir/x.log");
  REQUIRE(log.runs.at(0).points.size() == 2);
  MeasuredRows rows = measured_rows({log, log}, "dgx-h100", 0, "");
  REQUIRE(rows.rows.size() == 4);
  CHECK(rows.rows[0].id == "nccl-tests-x/allreduce/1gpu/8B");
  CHECK(rows.rows[1].id == "nccl-tests-x/allreduce/1gpu/8B/cycle2");
  CHECK(rows.rows[2].id == "nccl-tests-x-2/allreduce/1gpu/8B");
  CHECK(rows.rows[3].id == "nccl-tests-x-2/allreduce/1gpu/8B/cycle2");
  CHECK(rows.sources.size() == 2);
}

TEST_CASE("nccl-tests: counts past any machine are refused, found by fuzzing", "[nccl-tests]") {
  // nThread x nGpus overflowed a long long before it was bounded (UBSan, a mutated seed).
  CHECK(input_error([] { data_log("../fuzz/nccl_tests/nthread-times-ngpus-past-long-long.txt"); }) ==
        "../fuzz/nccl_tests/nthread-times-ngpus-past-long-long.txt:3: nThread 9223372036854775807 x nGpus 4 is more than "
        "the 1048576 ranks topsim reads");
  // strtoll's ERANGE is not a number.
  CHECK(input_error([] { data_log("../fuzz/nccl_tests/nthread-past-long-long.txt"); }) ==
        "../fuzz/nccl_tests/nthread-past-long-long.txt:3: expected '# nThread N nGpus N minBytes N maxBytes N step: "
        "N(factor|bytes) ...' (util.cu:625)");
}
