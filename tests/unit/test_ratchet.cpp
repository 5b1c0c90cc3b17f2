#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.hpp"
#include "io/io.hpp"
#include "validate/ratchet.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

ValidationResult check_row(const std::string& id, const std::string& cls, double measured, double cross,
                           std::optional<double> nccl) {
  ValidationResult r;
  r.row.id = id;
  r.row.role = "check";
  r.row.kind = "coll";
  r.row.measured_low = r.row.measured_high = measured;
  r.evaluated = true;
  r.accuracy_class = cls;
  r.predicted_cross = cross;
  r.error_cross = (cross - measured) / measured;
  r.nccl_predicted = nccl;
  return r;
}

RatchetEntry entry(const std::string& cls, int rows, double gm_pct, int nccl_rows = 0, double nccl_pct = 0,
                   double sim_on_nccl_pct = 0) {
  RatchetEntry e;
  e.accuracy_class = cls;
  e.rows = rows;
  e.geomean_pct = gm_pct;
  e.nccl_rows = nccl_rows;
  e.nccl_geomean_pct = nccl_pct;
  e.simulated_on_nccl_rows_pct = sim_on_nccl_pct;
  return e;
}

}  // namespace

TEST_CASE("ratchet: classes summarize check rows beside NCCL's estimate on the same rows") {
  // Class a: errors +10% and -20% -> geo-mean sqrt(1.1 x 1.2) - 1 = 14.891%; NCCL on the first
  // row only: 100 -> 150, 50%; the simulation on that row alone 10%.
  std::vector<ValidationResult> rows = {check_row("r1", "a", 100, 110, 150.0), check_row("r2", "a", 100, 80, std::nullopt),
                                        check_row("r3", "b", 10, 10, 10.0)};
  rows.push_back(check_row("cal", "a", 100, 500, std::nullopt));
  rows.back().row.role = "calibration";  // never counted
  std::vector<ClassSummary> classes = summarize_classes(rows);
  REQUIRE(classes.size() == 2);
  CHECK(classes[0].accuracy_class == "a");
  CHECK(classes[0].simulated.rows == 2);
  CHECK(classes[0].simulated.geomean_error == Approx(std::sqrt(1.1 * 1.2) - 1));
  CHECK(classes[0].simulated.worst_id == "r2");
  CHECK(classes[0].nccl.rows == 1);
  CHECK(classes[0].nccl.geomean_error == Approx(0.5));
  CHECK(classes[0].simulated_on_nccl_rows.geomean_error == Approx(0.1));
  AccuracyRatchet r = ratchet_of(classes);
  CHECK(r.classes[0].geomean_pct == Approx(100 * (std::sqrt(1.32) - 1)));
  CHECK(r.classes[1].geomean_pct == Approx(0));
}

TEST_CASE("ratchet: a class more than 1 point worse fails, 1 point or less holds") {
  AccuracyRatchet committed;
  committed.classes = {entry("a", 10, 20.0), entry("b", 10, 5.0)};
  AccuracyRatchet now;
  now.classes = {entry("a", 10, 21.0), entry("b", 10, 6.01)};
  std::vector<std::string> failures = ratchet_failures(committed, now, true);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0] == "b: 6.01% over 10 rows, committed 5.00% over 10 (more than 1 point worse)");
  now.classes[1].geomean_pct = 2;  // better is always fine
  CHECK(ratchet_failures(committed, now, true).empty());
}

TEST_CASE("ratchet: falling behind NCCL's estimate fails where 10 or more rows have it") {
  AccuracyRatchet committed;
  committed.classes = {entry("a", 12, 20.0, 12, 25.0, 20.0), entry("small", 9, 20.0, 9, 25.0, 20.0)};
  AccuracyRatchet now;
  // a: 20.5% (within 1 point) but behind NCCL's 20.4%; small: 9 rows, not held to the floor.
  now.classes = {entry("a", 12, 20.5, 12, 20.4, 20.5), entry("small", 9, 20.5, 9, 10.0, 20.5)};
  std::vector<std::string> failures = ratchet_failures(committed, now, true);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].rfind("a: 20.50% against NCCL's own estimate's 20.40% on the same 12 rows", 0) == 0);
  // A class committed behind NCCL's estimate stays allowed behind it (the ratchet holds its figure).
  committed.classes[0].nccl_geomean_pct = 15;
  CHECK(ratchet_failures(committed, now, true).empty());
}

TEST_CASE("ratchet: classes added or gone fail on every file, not on some files") {
  AccuracyRatchet committed;
  committed.classes = {entry("a", 10, 20.0), entry("gone", 3, 1.0)};
  AccuracyRatchet now;
  now.classes = {entry("a", 4, 90.0), entry("new", 2, 1.0)};
  std::vector<std::string> all = ratchet_failures(committed, now, true);
  REQUIRE(all.size() == 3);  // a worse, gone missing, new unheld
  CHECK(all[1] == "gone: no check rows now (committed: 3 rows)");
  CHECK(all[2] == "new: a class the ratchet does not hold (2 rows, 1.00%); add it with --write-ratchet");
  // Some files only: a with 4 of its 10 rows is another figure, and nothing is missing or new.
  CHECK(ratchet_failures(committed, now, false).empty());
}

TEST_CASE("ratchet: the file is read strictly and written back unchanged") {
  AccuracyRatchet r;
  r.classes = {entry("a/x", 3, 12.345, 3, 20.0, 12.345), entry("b/y", 1, 0)};
  std::string path = write_temp("ratchet/ratchet.json", accuracy_ratchet_json(r));
  AccuracyRatchet back = load_accuracy_ratchet(path);
  REQUIRE(back.classes.size() == 2);
  CHECK(back.classes[0].geomean_pct == Approx(12.35));  // written to 0.01 points
  CHECK(accuracy_ratchet_json(back) == accuracy_ratchet_json(r));
  std::string unsorted = write_temp("ratchet/unsorted.json", accuracy_ratchet_json(AccuracyRatchet{{r.classes[1], r.classes[0]}}));
  CHECK_THROWS_WITH(load_accuracy_ratchet(unsorted), Catch::Contains("/classes/1/class: classes must be sorted by name"));
  std::string typo = write_temp("ratchet/typo.json", R"({"description": "d", "classes": [{"class": "a", "rows": 1, "gm_pct": 1}]})");
  CHECK_THROWS_WITH(load_accuracy_ratchet(typo), Catch::Contains("/classes/0: missing required key 'geomean_pct'"));
}
