#include <catch2/catch.hpp>

#include "report/table.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {
Table sample() {
  Table t({{"name"}, {"GBps", 2}, {"count"}});
  t.add_row({std::string("a,b"), 272.519, 3LL});
  t.add_row({std::string("c"), -0.001, 12LL});
  return t;
}
}  // namespace

TEST_CASE("report: aligned text, numbers to the right") {
  CHECK(sample().to_text() ==
        "name    GBps  count\n"
        "a,b   272.52      3\n"
        "c       0.00     12\n");
}

TEST_CASE("report: CSV quotes what needs quoting") {
  CHECK(sample().to_csv() == "name,GBps,count\n\"a,b\",272.52,3\nc,0.00,12\n");
}

TEST_CASE("report: JSON rows with rounded numbers") {
  CHECK(sample().to_json() ==
        "[\n  {\n    \"name\": \"a,b\",\n    \"GBps\": 272.52,\n    \"count\": 3\n  },\n"
        "  {\n    \"name\": \"c\",\n    \"GBps\": 0.0,\n    \"count\": 12\n  }\n]\n");
}

TEST_CASE("report: Markdown tables") {
  CHECK(sample().to_markdown() == "| name | GBps | count |\n|---|---|---|\n| a,b | 272.52 | 3 |\n| c | 0.00 | 12 |\n");
}

TEST_CASE("report: formats by name") {
  CHECK(parse_format("json") == Format::json);
  CHECK_THROWS_WITH(parse_format("yaml"), "unknown format 'yaml'; valid: table, csv, json");
}
