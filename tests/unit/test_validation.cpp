#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "validate/validation.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {
ValidationResult result(const std::string& id, const std::string& role, double error) {
  ValidationResult r;
  r.row.id = id;
  r.row.role = role;
  r.row.tolerance = 0.05;
  r.error = error;
  return r;
}
}  // namespace

TEST_CASE("validation: summaries per role") {
  auto summaries = summarize({result("a", "calibration", 0.01), result("b", "check", 0.10), result("c", "check", -0.20)});
  REQUIRE(summaries.size() == 3);
  CHECK(summaries[0].role == "calibration");
  CHECK(summaries[0].geomean_abs_error == Approx(0.01));
  CHECK(summaries[1].role == "check");
  // geometric mean of 0.10 and 0.20 = sqrt(0.02)
  CHECK(summaries[1].geomean_abs_error == Approx(0.141421356));
  CHECK(summaries[1].worst_abs_error == Approx(0.20));
  CHECK(summaries[1].worst_id == "c");
  CHECK(summaries[2].role == "all");
  CHECK(summaries[2].rows == 3);
  CHECK_FALSE(result("c", "check", -0.20).pass());
}

TEST_CASE("validation: rows are read strictly") {
  std::string ok = R"({"description": "d", "rows": [
    {"id": "x", "kind": "p2p", "topology": "dgx-a100", "metric": "uni_GBps", "src": 0, "dst": 1, "size": "160MB",
     "method": "write", "peer_access": true, "measured": [270, 275], "role": "check", "tolerance": 0.05, "source": "s"}]})";
  auto rows = load_validation_file(write_temp("v.json", ok)).rows;
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].measured() == 272.5);
  CHECK(rows[0].size_B == 160e6);
  std::string bad = ok;
  bad.replace(bad.find("[270, 275]"), 10, "\"272\"");
  std::string path = write_temp("v-bad.json", bad);
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0/measured: expected a number or a [low, high] pair of numbers, got the string \"272\"");
  std::string metric = ok;
  metric.replace(metric.find("uni_GBps"), 8, "uni_GB");
  path = write_temp("v-metric.json", metric);
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0/metric: unknown metric 'uni_GB' (did you mean 'uni_GBps'?); known: bi_GBps, latency_us, uni_GBps");
}

TEST_CASE("validation: collective rows and summary targets") {
  std::string text = R"({"description": "d",
    "targets": [{"metric": "busbw_GBps", "geomean": 0.05, "worst": 0.15}],
    "rows": [{"id": "a", "kind": "coll", "topology": "dgx-a100", "op": "allreduce", "gpus": 4, "size": "1GiB",
              "dtype": "float", "peer_access": true, "metric": "busbw_GBps", "measured": 200, "role": "check",
              "source": "s"},
             {"id": "b", "kind": "coll", "topology": "dgx1-p100", "op": "allreduce", "gpus": [0, 1, 2, 3, 4], "size": "8B",
              "dtype": "half", "algo": "ring", "peer_access": true, "metric": "time_us", "measured": 30, "role": "check",
              "source": "s"}]})";
  ValidationFile file = load_validation_file(write_temp("coll.json", text));
  REQUIRE(file.rows.size() == 2);
  CHECK(file.rows[0].gpus == std::vector<int>{0, 1, 2, 3});
  CHECK(file.rows[1].gpus == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(file.rows[1].algo == "ring");
  REQUIRE(file.targets.size() == 1);
  // Two gated busbw rows with errors 0.02 and 0.08: geometric mean 0.04, worst 0.08, within
  // target; an informational row (no tolerance) at 0.60 is not counted; a gated one at 0.20
  // breaks the worst.
  std::vector<ValidationResult> results(3);
  results[0].row.metric = results[1].row.metric = results[2].row.metric = "busbw_GBps";
  results[0].row.tolerance = results[1].row.tolerance = 0.15;
  results[2].error = 0.60;
  results[0].error = 0.02;
  results[1].error = -0.08;
  auto checked = check_targets(file.targets, results);
  CHECK(checked[0].geomean_abs_error == Approx(0.04));
  CHECK(checked[0].worst_abs_error == Approx(0.08));
  CHECK(checked[0].pass());
  CHECK(checked[0].rows == 2);
  results.push_back(results[0]);
  results.back().error = 0.20;
  CHECK_FALSE(check_targets(file.targets, results)[0].pass());
}

TEST_CASE("validation: collective rows may replicate their server") {
  std::string row = R"({"id": "m", "kind": "coll", "topology": "dgx-a100", "nodes": 2, "nic": "hdr100", "nics_per_node": 4,
    "gpu_direct": false, "op": "allreduce", "gpus": 16, "size": "8GiB", "dtype": "float", "algo": "ring",
    "peer_access": true, "metric": "busbw_GBps", "measured": 60, "role": "check", "source": "s"})";
  ValidationFile file = load_validation_file(write_temp("multi.json", R"({"description": "d", "rows": [)" + row + "]}"));
  REQUIRE(file.rows.size() == 1);
  CHECK(file.rows[0].scale.nodes == 2);
  CHECK(file.rows[0].scale.nic == "hdr100");
  CHECK(file.rows[0].scale.nics_per_node == 4);
  CHECK_FALSE(file.rows[0].gpu_direct);
  CHECK_FALSE(file.rows[0].tolerance);
  std::string typo = row;
  typo.replace(typo.find("\"nodes\""), 7, "\"node\"");
  CHECK(input_error([&] { load_validation_file(write_temp("typo.json", R"({"description": "d", "rows": [)" + typo + "]}")); })
            .find("unknown key 'node' (did you mean 'nodes'?)") != std::string::npos);
}
