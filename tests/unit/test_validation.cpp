#include <catch2/catch.hpp>

#include <cmath>
#include <chrono>
#include <filesystem>
#include <thread>

#include "helpers.hpp"
#include "io/model_set.hpp"
#include "validate/calibrate.hpp"
#include "validate/isolated.hpp"
#include "validate/validation.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

ValidationResult result(const std::string& id, const std::string& role, const std::string& quantity, double error) {
  ValidationResult r;
  r.row.id = id;
  r.row.role = role;
  r.evaluated = true;
  r.quantity = quantity;
  r.error = error;
  r.error_cross = 2 * error;
  return r;
}

const char* kSources = R"("sources": {"s": "a citation"})";

std::string file_with(const std::string& rows) {
  return std::string(R"({"description": "d", )") + kSources + R"(, "rows": [)" + rows + "]}";
}

const char* kP2pRow =
    R"({"id": "x", "kind": "p2p", "topology": "dgx-a100", "metric": "uni_GBps", "src": 0, "dst": 1, "size": "160MB",
     "method": "write", "peer_access": true, "measured": [270, 275], "role": "check", "tolerance": 0.05, "source": "s"})";

// A models directory of two link models whose efficiencies are fitted, and one cited.
std::string tiny_models() {
  auto dir = std::filesystem::path(write_temp("models-calib/x", "")).parent_path();
  std::filesystem::remove(dir / "x");
  std::string link = R"({"description": "l", "kind": "nvlink", "bandwidth": "20GBps", "efficiency": EFF, "latency": "0.2us",
    "sources": {"bandwidth": "datasheet", "latency": "datasheet", "efficiency": PROV}})";
  auto make = [&](const std::string& eff, const std::string& prov) {
    std::string t = link;
    t.replace(t.find("EFF"), 3, eff);
    t.replace(t.find("PROV"), 4, prov);
    return t;
  };
  std::string fitted = R"({"fitted": "how", "prior": 0.8, "prior_source": "NCCL"})";
  write_temp("models-calib/links.json", R"({"description": "d", "link_models": {"a": )" + make("0.5", fitted) +
                                            R"(, "b": )" + make("0.5", fitted) + R"(, "c": )" +
                                            make("0.9", "\"measured somewhere\"") + "}}");
  return dir.string();
}

ValidationRow calibration_row(const std::string& id, const std::string& pins, double measured, double tolerance) {
  ValidationRow row;
  row.id = id;
  row.role = "calibration";
  row.pins = pins;
  row.measured_low = row.measured_high = measured;
  row.tolerance = tolerance;
  row.source = id;
  row.where = SourceRef{"rows.json", "/rows/" + id};
  return row;
}

// A fake simulator: a row named "<link>..." predicts 20 GB/s x that link's efficiency, so the
// solution is measured / 20 exactly (no SimGrid involved).
Predict fake_predict() {
  return [](const std::vector<ValidationRow>& rows, const ModelSet& models) {
    std::vector<ValidationResult> out;
    for (const ValidationRow& row : rows) {
      ValidationResult r;
      r.row = row;
      r.evaluated = true;
      r.predicted = 20 * models.find("links:" + row.id.substr(0, 1) + ".efficiency")->value;
      r.error = r.predicted / row.measured() - 1;
      out.push_back(r);
    }
    return out;
  };
}

}  // namespace

TEST_CASE("validation: summaries per quantity over one role") {
  std::vector<ValidationResult> results = {result("a", "calibration", "p2p", 0.01), result("b", "check", "p2p", 0.10),
                                           result("c", "check", "p2p", -0.20), result("d", "check", "kernel", 0.05)};
  auto summaries = summarize(results, "check", false);
  REQUIRE(summaries.size() == 3);  // p2p, kernel, all
  CHECK(summaries[0].quantity == "p2p");
  // geometric mean of 1.10 and 1.20, minus 1: sqrt(1.32) - 1 = 0.148913; median of 0.10, 0.20: 0.15
  CHECK(summaries[0].geomean_error == Approx(0.148912529));
  CHECK(summaries[0].median_abs_error == Approx(0.15));
  CHECK(summaries[0].worst_abs_error == Approx(0.20));
  CHECK(summaries[0].worst_id == "c");
  CHECK(summaries[1].quantity == "kernel");
  CHECK(summaries[2].quantity == "all");
  CHECK(summaries[2].rows == 3);  // the calibration row is not counted
  // Cross: each error_cross is twice the error: sqrt(1.2 x 1.4) - 1 = 0.296148
  CHECK(summarize(results, "check", true)[0].geomean_error == Approx(0.296148352));
  // The median of an odd count is the middle |error|: 0.05, 0.10, 0.20 over "all".
  CHECK(summaries[2].median_abs_error == Approx(0.10));
}

TEST_CASE("validation: quantities split collectives at 64 MiB and across servers") {
  ValidationRow row;
  row.kind = "coll";
  row.size_B = 64.0 * 1024 * 1024;
  CHECK(quantity_of(row, 1) == "busbw>=64MiB");
  row.size_B -= 1;
  CHECK(quantity_of(row, 1) == "time<64MiB");
  CHECK(quantity_of(row, 2) == "multinode");
  row.kind = "p2p";
  CHECK(quantity_of(row, 1) == "p2p");
}

TEST_CASE("validation: rows are read strictly") {
  auto rows = load_validation_file(write_temp("v.json", file_with(kP2pRow))).rows;
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].measured() == 272.5);
  CHECK(rows[0].size_B == 160e6);
  CHECK(rows[0].citation == "a citation");
  std::string bad = file_with(kP2pRow);
  bad.replace(bad.find("[270, 275]"), 10, "\"272\"");
  std::string path = write_temp("v-bad.json", bad);
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0/measured: expected a number or a [low, high] pair of numbers, got the string \"272\"");
  std::string metric = file_with(kP2pRow);
  metric.replace(metric.find("uni_GBps"), 8, "uni_GB");
  path = write_temp("v-metric.json", metric);
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0/metric: unknown metric 'uni_GB' (did you mean 'uni_GBps'?); known: bi_GBps, latency_us, uni_GBps");
  std::string source = file_with(kP2pRow);
  source.replace(source.find("\"source\": \"s\""), 13, "\"source\": \"t\"");
  path = write_temp("v-source.json", source);
  CHECK(input_error([&] { load_validation_file(path); }).find(":/rows/0/source: unknown source 't'") != std::string::npos);
}

TEST_CASE("validation: roles and the keys that belong to them") {
  std::string row = kP2pRow;
  std::string calibration = row;
  calibration.replace(calibration.find("\"role\": \"check\""), 15, "\"role\": \"calibration\"");
  std::string path = write_temp("v-pins.json", file_with(calibration));
  // A calibration row that pins nothing.
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0: a calibration row pins a constant: add \"pins\" with the id of the fitted constant it pins");
  std::string check_with_pins = row;
  check_with_pins.replace(check_with_pins.find("\"role\": \"check\""), 15, "\"role\": \"check\", \"pins\": \"links:a.efficiency\"");
  path = write_temp("v-check-pins.json", file_with(check_with_pins));
  CHECK(input_error([&] { load_validation_file(path); }) ==
        path + ":/rows/0/pins: \"pins\" belongs to calibration rows only; this row's role is check");
  // Pending rows may be of kinds topsim does not predict; they are kept, not simulated.
  std::string pending = R"json({"id": "p", "kind": "inference", "gpu": "l4", "metric": "samples_per_s", "measured": 10,
    "role": "pending", "missing": "inference (issue 17)", "source": "s"})json";
  auto rows = load_validation_file(write_temp("v-pending.json", file_with(pending))).rows;
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].missing == "inference (issue 17)");
  // A repeat names a row that is counted.
  std::string repeat = R"({"id": "r", "kind": "p2p", "topology": "dgx-a100", "metric": "uni_GBps", "src": 0, "dst": 7,
    "size": "160MB", "method": "write", "peer_access": true, "measured": 272, "role": "repeat", "repeats": "nope", "source": "s"})";
  auto both = load_validation_file(write_temp("v-repeat.json", file_with(std::string(kP2pRow) + ", " + repeat))).rows;
  CHECK(input_error([&] { check_rows(both); }).find("/rows/1/repeats: 'nope' is no other row's id") != std::string::npos);
}

TEST_CASE("validation: collective rows may replicate their server") {
  std::string row = R"({"id": "m", "kind": "coll", "topology": "dgx-a100", "nodes": 2, "nic": "hdr100", "nics_per_node": 4,
    "gpu_direct": false, "op": "allreduce", "gpus": 16, "size": "8GiB", "dtype": "float", "algo": "ring",
    "peer_access": true, "metric": "busbw_GBps", "measured": 60, "role": "check", "source": "s"})";
  ValidationFile file = load_validation_file(write_temp("multi.json", file_with(row)));
  REQUIRE(file.rows.size() == 1);
  CHECK(file.rows[0].scale.nodes == 2);
  CHECK(file.rows[0].scale.nic == "hdr100");
  CHECK(file.rows[0].scale.nics_per_node == 4);
  CHECK_FALSE(file.rows[0].gpu_direct);
  CHECK_FALSE(file.rows[0].tolerance);
  std::string typo = row;
  typo.replace(typo.find("\"nodes\""), 7, "\"node\"");
  CHECK(input_error([&] { load_validation_file(write_temp("typo.json", file_with(typo))); })
            .find("unknown key 'node' (did you mean 'nodes'?)") != std::string::npos);
}

TEST_CASE("calibrate: exact and least-squares solves, written with provenance") {
  ModelSet models = ModelSet::load(tiny_models());
  REQUIRE(models.constants().size() == 2);  // the cited efficiency of "c" is no constant
  // a: one row at 18.4 -> 18.4 / 20 = 0.92 exactly. b: rows at 15 and 17 -> least squares in
  // log space: sqrt(15 * 17) / 20 = 15.9687 / 20 = 0.79844 -> written 0.7984.
  std::vector<ValidationRow> rows = {calibration_row("a1", "links:a.efficiency", 18.4, 0.05),
                                     calibration_row("b1", "links:b.efficiency", 15, 0.1),
                                     calibration_row("b2", "links:b.efficiency", 17, 0.1)};
  CalibrationReport report = calibrate(models, rows, in_turn(fake_predict()));
  REQUIRE(report.constants.size() == 2);
  CHECK(report.constants[0].value == 0.92);
  CHECK(report.constants[0].method == "exact");
  CHECK(report.constants[1].value == 0.7984);
  CHECK(report.constants[1].method == "least_squares");
  CHECK(report.constants[1].rows == std::vector<std::string>{"b1", "b2"});
  // 15.968/15 - 1 = +6.45% and 15.968/17 - 1 = -6.07%: RMS sqrt((0.0645^2 + 0.0607^2) / 2) = 6.27%.
  CHECK(report.constants[1].residual == Approx(0.0627).margin(2e-4));
  auto files = models.changed_files();
  REQUIRE(files.size() == 1);
  CHECK(files[0].second.find("\"efficiency\": 0.92,") != std::string::npos);
  CHECK(files[0].second.find("\"solved_from\": [\n            \"b1\",\n            \"b2\"\n          ]") != std::string::npos);
}

TEST_CASE("calibrate: a changed row moves exactly the constant it pins") {
  ModelSet models = ModelSet::load(tiny_models());
  std::vector<ValidationRow> rows = {calibration_row("a1", "links:a.efficiency", 18.4, 0.05),
                                     calibration_row("b1", "links:b.efficiency", 16, 0.05)};
  CalibrationReport first = calibrate(models, rows, in_turn(fake_predict()));
  rows[0].measured_low = rows[0].measured_high = 17.0;
  CalibrationReport second = calibrate(models, rows, in_turn(fake_predict()));
  CHECK(first.constants[0].value == 0.92);
  CHECK(second.constants[0].value == 0.85);                          // 17 / 20
  CHECK(second.constants[1].value == first.constants[1].value);     // b untouched: 0.8
  // Leaving out a's source: a takes its prior (0.8), b is solved as before.
  ModelSet without = models;
  CalibrationReport left = calibrate(without, rows, in_turn(fake_predict()), "a1");
  CHECK(left.constants[0].method == "prior");
  CHECK(left.constants[0].value == 0.8);
  CHECK(left.constants[1].value == 0.8);
}

TEST_CASE("calibrate: declarations and fits that cannot hold are input errors") {
  std::string dir = tiny_models();
  ModelSet models = ModelSet::load(dir);
  // Two rows that pin b inconsistently beyond their tolerance (15 and 30: +-33% at the solution).
  std::vector<ValidationRow> rows = {calibration_row("a1", "links:a.efficiency", 18.4, 0.05),
                                     calibration_row("b1", "links:b.efficiency", 10, 0.05),
                                     calibration_row("b2", "links:b.efficiency", 20, 0.05)};
  CHECK(input_error([&] { calibrate(models, rows, in_turn(fake_predict())); })
            .find("rows.json:/rows/b1/measured: the rows that pin links:b.efficiency disagree beyond their tolerance") !=
        std::string::npos);
  // A row pinning a cited constant: no fitted provenance.
  rows = {calibration_row("a1", "links:a.efficiency", 18.4, 0.05), calibration_row("b1", "links:b.efficiency", 16, 0.05),
          calibration_row("c1", "links:c.efficiency", 18, 0.05)};
  CHECK(input_error([&] { check_declarations(models, rows); })
            .find("rows.json:/rows/c1/pins: unknown fitted constant 'links:c.efficiency'") != std::string::npos);
  // A fitted constant that no row pins.
  rows.resize(1);
  CHECK(input_error([&] { check_declarations(models, rows); }) ==
        dir + "/links.json:/link_models/b/sources/efficiency: fitted constant links:b.efficiency is pinned by no "
              "calibration row; add a row with \"pins\": \"links:b.efficiency\", or cite its source as a fact or an "
              "assumption");
  // A row whose prediction does not depend on the constant it pins.
  rows = {calibration_row("a1", "links:a.efficiency", 18.4, 0.05), calibration_row("b1", "links:b.efficiency", 16, 0.05)};
  Predict flat = [](const std::vector<ValidationRow>& rs, const ModelSet&) {
    std::vector<ValidationResult> out;
    for (const ValidationRow& r : rs) {
      ValidationResult v;
      v.row = r;
      v.predicted = 17;
      out.push_back(v);
    }
    return out;
  };
  CHECK(input_error([&] { calibrate(models, rows, in_turn(flat)); })
            .find("rows.json:/rows/a1/pins: the prediction of this row does not change when links:a.efficiency moves") !=
        std::string::npos);
}

TEST_CASE("models: significant digits as written") {
  CHECK(significant_text(0.77372, 4) == "0.7737");
  CHECK(significant_text(9.5612, 4) == "9.561");
  CHECK(significant_text(124.54, 4) == "124.5");
  CHECK(significant_text(9.99996, 4) == "10");
  CHECK(significant_text(0.00012345, 4) == "0.0001235");
}

TEST_CASE("models: the bundled files are written back byte for byte, values changed in place") {
  ModelSet models = ModelSet::load(data_path("models"));
  const ModelConstant* c = models.find("nccl:ampere.protocols.ll.efficiency");
  REQUIRE(c != nullptr);
  CHECK(c->provenance.kind == Provenance::Kind::fitted);
  CHECK(c->value_at.pointer == "/nccl_models/ampere/protocols/ll/efficiency");
  // Setting every constant to its own value leaves every file as committed.
  for (const ModelConstant& k : models.constants())
    if (k.has_value) models.set_value(k.id, k.value);
  CHECK(models.changed_files().empty());
  // A quantity keeps its unit; only that value's text changes.
  std::string before = read_text_file(data_path("models/nccl.json"));
  models.set_value("nccl:pascal.protocols.simple.ring_base", 16.25);
  auto files = models.changed_files();
  REQUIRE(files.size() == 1);
  std::string expected = before;
  std::size_t at = expected.find("\"ring_base\": \"15.5us\"");
  REQUIRE(at != std::string::npos);
  expected.replace(at, 21, "\"ring_base\": \"16.25us\"");
  CHECK(files[0].second == expected);
}

// Child processes side by side (validate/isolated.hpp): each body's results come back in the
// order asked, whatever order the children end in, and the first failure in that order is the
// one reported.
TEST_CASE("validation: predictions in several child processes at once come back in the order asked") {
  std::vector<std::vector<ValidationRow>> rows;
  for (int i = 0; i < 5; ++i) rows.push_back({calibration_row("r" + std::to_string(i), "links:a.efficiency", 10.0 + i, 0.05)});
  auto answer = [](const std::vector<ValidationRow>& rs, double predicted, int sleep_ms) {
    return [&rs, predicted, sleep_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      ValidationResult r;
      r.row = rs.front();
      r.evaluated = true;
      r.predicted = predicted;
      r.quantity = "p2p";
      r.detail = "tab\there, newline\nthere";
      r.things = {"links:a", "gpus:b"};
      return std::vector<ValidationResult>{r};
    };
  };
  std::vector<ChildPrediction> asked;
  // The earlier children sleep longer, so they end after the later ones.
  for (int i = 0; i < 5; ++i) asked.push_back({&rows[i], answer(rows[i], 1.0 / 3 + i, 40 * (5 - i))});
  for (int parallel : {1, 2, 5}) {
    std::vector<std::vector<ValidationResult>> got = evaluate_in_children(asked, parallel);
    REQUIRE(got.size() == 5);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(got[i].size() == 1);
      CHECK(got[i][0].row.id == "r" + std::to_string(i));
      CHECK(got[i][0].predicted == 1.0 / 3 + i);  // bit for bit: written as a hex float
      CHECK(got[i][0].error == (1.0 / 3 + i - (10.0 + i)) / (10.0 + i));
      CHECK(got[i][0].detail == "tab\there, newline\nthere");
      CHECK(got[i][0].things == std::set<std::string>{"gpus:b", "links:a"});
    }
  }
  // Bodies 1 and 3 fail; 3 ends first, but 1 comes first in the order asked.
  asked[1].body = []() -> std::vector<ValidationResult> {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    throw InputError("one.json", "/rows/1", "first in order");
  };
  asked[3].body = []() -> std::vector<ValidationResult> { throw UsageError("second in order"); };
  CHECK(input_error([&] { evaluate_in_children(asked, 3); }) == "one.json:/rows/1: first in order");
  asked[1].body = []() -> std::vector<ValidationResult> { ::_exit(3); };
  CHECK_THROWS_WITH(evaluate_in_children(asked, 2), Catch::Contains("ended abnormally"));
  asked[1].body = answer(rows[1], 1, 0);
  CHECK_THROWS_WITH(evaluate_in_children(asked, 2), "second in order");
}

TEST_CASE("validation: with parallel 2, two children run at the same time") {
  // Each child announces itself with a file and waits for the other's: with one child at a time
  // the first would wait out its 20 s and fail, with two both see each other at once.
  std::string dir = std::filesystem::path(write_temp("children/marker", "")).parent_path().string();
  std::vector<std::vector<ValidationRow>> rows = {{calibration_row("a", "links:a.efficiency", 1, 0.05)},
                                                  {calibration_row("b", "links:a.efficiency", 1, 0.05)}};
  auto meet = [&dir](const std::vector<ValidationRow>& rs, const std::string& me, const std::string& other) {
    return [&rs, dir, me, other] {
      std::ofstream(dir + "/" + me) << me;
      ValidationResult r;
      r.row = rs.front();
      r.evaluated = true;
      for (int i = 0; i < 2000 && !std::filesystem::exists(dir + "/" + other); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      r.predicted = std::filesystem::exists(dir + "/" + other) ? 1 : 0;
      return std::vector<ValidationResult>{r};
    };
  };
  std::vector<std::vector<ValidationResult>> got =
      evaluate_in_children({{&rows[0], meet(rows[0], "a", "b")}, {&rows[1], meet(rows[1], "b", "a")}}, 2);
  CHECK(got[0][0].predicted == 1);
  CHECK(got[1][0].predicted == 1);
  CHECK(usable_cpus() >= 1);
}
