#include <catch2/catch.hpp>

#include "util/error.hpp"
#include "util/text.hpp"

using namespace topsim;

TEST_CASE("text: edit distance and closest match") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest_match("bandwith", {"bandwidth", "latency", "count"}) == "bandwidth");
  CHECK(closest_match("zzzzzz", {"bandwidth", "latency"}).empty());
}

TEST_CASE("text: unknown names list what is known, sorted") {
  CHECK(unknown_name_message("GPU model", "v1000", {"v100", "a100", "h100"}) ==
        "unknown GPU model 'v1000' (did you mean 'v100'?); known: a100, h100, v100");
  CHECK(unknown_name_message("format", "yaml", {"table", "csv"}) == "unknown format 'yaml'; known: csv, table");
}

TEST_CASE("text: fixed precision never prints negative zero") {
  CHECK(fixed(-0.001, 2) == "0.00");
  CHECK(fixed(272.519, 2) == "272.52");
  CHECK(shortest(0.9701) == "0.9701");
  CHECK(shortest(25e9) == "2.5e+10");
}

TEST_CASE("text: integer lists") {
  CHECK(parse_int_list("0,1,2,3,4") == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(parse_int_list("0-3,8,10-11") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK_THROWS_WITH(parse_int_list("0,x"), "'x' is not an integer or a range (expected a list like 0,1,2 or 0-3)");
  // 2^20 values in all (found fuzzing topo -m CPU affinities: 700 such ranges took 2.8 GB).
  CHECK_THROWS_WITH(parse_int_list("0-999999,0-999999"), "'0-999999' makes the list longer than 1048576 values");
  CHECK_THROWS_WITH(parse_int_list("0,,1"), "'' is not an integer or a range (expected a list like 0,1,2 or 0-3)");
  CHECK_THROWS_WITH(parse_int_list("4-2"), "'4-2' is an empty range (write low-high)");
  CHECK(int_ranges({0, 1, 2, 3, 4, 5, 6, 7}) == "0-7");
  CHECK(int_ranges({0, 1, 3, 5, 6, 7}) == "0,1,3,5-7");
  CHECK(int_ranges({3, 2, 1}) == "3,2,1");
  CHECK(int_ranges({}).empty());
}

TEST_CASE("text: input errors read file:pointer: message") {
  CHECK(std::string(InputError("t.json", "/links/3/bandwidth", "bad").what()) == "t.json:/links/3/bandwidth: bad");
  CHECK(std::string(InputError("t.json", "", "cannot open").what()) == "t.json: cannot open");
  CHECK(std::string(InputError("", "", "plain").what()) == "plain");
}
