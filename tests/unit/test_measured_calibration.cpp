// calibrate --measured's parts on a fake simulator whose predictions are arithmetic of the
// constants, so what the solve must recover is derived by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "helpers.hpp"
#include "io/model_overlay.hpp"
#include "io/model_set.hpp"
#include "validate/calibrate.hpp"
#include "validate/measured_calibration.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

constexpr double kMebibyte_B = 1024.0 * 1024.0;

// Links a, b, d with fitted efficiencies (0.5, prior 0.8), c with a cited one.
std::string measured_models() {
  auto dir = std::filesystem::path(write_temp("models-measured/x", "")).parent_path();
  std::filesystem::remove(dir / "x");
  std::string link = R"({"description": "l", "kind": "nvlink", "bandwidth": "20GBps", "efficiency": 0.5, "latency": "0.2us",
    "sources": {"bandwidth": "datasheet", "latency": "datasheet", "efficiency": PROV}})";
  auto make = [&](const std::string& prov) { return std::string(link).replace(link.find("PROV"), 4, prov); };
  std::string fitted = R"({"fitted": "how", "prior": 0.8, "prior_source": "NCCL"})";
  write_temp("models-measured/links.json", R"({"description": "d", "link_models": {"a": )" + make(fitted) + R"(, "b": )" +
                                              make(fitted) + R"(, "c": )" + make("\"measured somewhere\"") + R"(, "d": )" +
                                              make(fitted) + "}}");
  return dir.string();
}

ValidationRow row_of(const std::string& id, double size_B, double measured) {
  ValidationRow row;
  row.id = id;
  row.size_B = size_B;
  row.metric = size_B >= 64 * kMebibyte_B ? "busbw_GBps" : "time_us";
  row.measured_low = row.measured_high = measured;
  row.role = "check";
  row.note = "log.txt:" + id + ": ...";
  return row;
}

// From 64 MiB a row's busbw is 20 GB/s x links:a's efficiency; below, its time is
// 2 us + 10 us / links:b's efficiency. Every row uses links a, b and d (d moves nothing).
Predict fake_simulator() {
  return [](const std::vector<ValidationRow>& rows, const ModelSet& models) {
    std::vector<ValidationResult> out;
    for (const ValidationRow& row : rows) {
      ValidationResult r;
      r.row = row;
      r.evaluated = true;
      r.detail = "ring/simple";
      r.things = {"links:a", "links:b", "links:c", "links:d"};
      r.predicted = row.size_B >= 64 * kMebibyte_B ? 20 * models.find("links:a.efficiency")->value
                                            : 2 + 10 / models.find("links:b.efficiency")->value;
      r.error = r.predicted / row.measured() - 1;
      out.push_back(r);
    }
    return out;
  };
}

}  // namespace

TEST_CASE("calibrate --measured: each row pins the constant it moves, and the solve recovers it") {
  ModelSet models = ModelSet::load(measured_models());
  // The log is the fake simulator's prediction at efficiencies a = 0.9, b = 0.625:
  // busbw 20 x 0.9 = 18 GB/s at 256M and 1G; time 2 + 10 / 0.625 = 18 us at 1M and 4M.
  std::vector<ValidationRow> rows = {row_of("1", 1 * kMebibyte_B, 18), row_of("2", 4 * kMebibyte_B, 18), row_of("3", 256 * kMebibyte_B, 18),
                                     row_of("4", 1024 * kMebibyte_B, 18)};
  PinChoice choice = choose_pins(models, rows, in_turn(fake_simulator()));
  REQUIRE(choice.rows.size() == 4);
  CHECK(choice.rows[0].pins == "links:b.efficiency");
  CHECK(choice.rows[2].pins == "links:a.efficiency");
  // One prediction of all rows, then one per fitted candidate (a, b, d).
  CHECK(choice.predictions == 4);
  REQUIRE(choice.unpinned.size() == 1);
  CHECK(choice.unpinned[0].id == "links:d.efficiency");
  CHECK(choice.unpinned[0].reason.find("no row's prediction moves") != std::string::npos);
  CalibrationReport report = calibrate_chosen(models, choice.rows, in_turn(fake_simulator()));
  REQUIRE(report.constants.size() == 2);
  // Written with 4 significant digits: recovered to within half a unit of the 4th digit.
  CHECK(models.find("links:a.efficiency")->value == Approx(0.9).margin(5e-5));
  CHECK(models.find("links:b.efficiency")->value == Approx(0.625).margin(5e-5));
  CHECK(models.find("links:d.efficiency")->value == 0.5);  // unpinned: kept as committed, not its prior 0.8
  for (const SolvedConstant& s : report.constants) CHECK(s.residual < 1e-3);
}

TEST_CASE("calibrate --measured: --leave-out and --split hold out sizes") {
  HoldOut h = parse_leave_out("64M-8G");
  CHECK(h.low_B == 64 * kMebibyte_B);
  CHECK(h.high_B == 8192 * kMebibyte_B);
  CHECK_THROWS_AS(parse_leave_out("8G-64M"), UsageError);
  CHECK_THROWS_AS(parse_leave_out("lots"), UsageError);
  std::vector<ValidationRow> rows = {row_of("1", 1 * kMebibyte_B, 1), row_of("2", 4 * kMebibyte_B, 1), row_of("3", 256 * kMebibyte_B, 1),
                                     row_of("4", 1024 * kMebibyte_B, 1)};
  std::vector<ValidationRow> fit, held;
  split_rows(rows, h, fit, held);
  CHECK(fit.size() == 2);
  REQUIRE(held.size() == 2);
  CHECK(held[0].id == "3");
  HoldOut split;
  split.split = true;
  fit.clear();
  held.clear();
  split_rows(rows, split, fit, held);  // sizes ascending 1M 4M 256M 1G: the 2nd and 4th are held out
  REQUIRE(held.size() == 2);
  CHECK(held[0].id == "2");
  CHECK(held[1].id == "4");
  fit.clear();
  held.clear();
  CHECK_THROWS_AS(split_rows(rows, parse_leave_out("16G-32G"), fit, held), UsageError);
}

TEST_CASE("overlay: values set on the bundled models; a constant without provenance is refused") {
  std::string models_dir = measured_models();
  auto dir = std::filesystem::path(write_temp("overlay-good/overlay.json",
                                              overlay_json("d", {OverlayConstant{"links:a.efficiency", 0.9, "", 0.5,
                                                                                 {"topsim calibrate ...", {"log.txt"}, {"r"}, {"log.txt:3"}, "exact", 0}}})))
                 .parent_path();
  ModelSet models = ModelSet::load(models_dir);
  CHECK(is_overlay_dir(dir.string()));
  apply_overlay(models, dir.string());
  CHECK(models.find("links:a.efficiency")->value == 0.9);
  CHECK(models.find("links:b.efficiency")->value == 0.5);
  auto bad = std::filesystem::path(write_temp("overlay-bad/overlay.json",
                                              R"({"description": "d", "constants": {"links:a.efficiency": {"value": 0.9}}})"))
                 .parent_path();
  ModelSet again = ModelSet::load(models_dir);
  CHECK_THROWS_AS(apply_overlay(again, bad.string()), InputError);
}
