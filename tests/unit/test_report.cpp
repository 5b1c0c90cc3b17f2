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

TEST_CASE("report: JSON rows at full precision, integers as integers") {
  // Text and CSV round to the column's decimals (272.52, 0.00 above); JSON writes the doubles
  // themselves, in the shortest text that reads back as the same double, and -0 as 0.
  CHECK(sample().to_json() ==
        "[\n  {\n    \"name\": \"a,b\",\n    \"GBps\": 272.519,\n    \"count\": 3\n  },\n"
        "  {\n    \"name\": \"c\",\n    \"GBps\": -0.001,\n    \"count\": 12\n  }\n]\n");
  Table t({{"size_B", 0}, {"time_s", 3}, {"zero"}});
  t.add_row({whole(1073741824.0), 0.1 + 0.2, -0.0});
  CHECK(t.to_json() == "[\n  {\n    \"size_B\": 1073741824,\n    \"time_s\": 0.30000000000000004,\n    \"zero\": 0.0\n  }\n]\n");
  CHECK(t.to_text() == "    size_B  time_s  zero\n1073741824   0.300  0.00\n");
}

TEST_CASE("report: Markdown tables") {
  CHECK(sample().to_markdown() == "| name | GBps | count |\n|---|---|---|\n| a,b | 272.52 | 3 |\n| c | 0.00 | 12 |\n");
}

TEST_CASE("report: formats by name") {
  CHECK(parse_format("json") == Format::json);
  CHECK_THROWS_WITH(parse_format("yaml"), "unknown format 'yaml'; valid: table, csv, json");
}

// --- link usage: file and heat map -------------------------------------------------------

#include <fstream>

#include "helpers.hpp"
#include "io/io.hpp"
#include "report/link_usage.hpp"

namespace {

topsim::LinkUsage two_links() {
  topsim::LinkUsage u;
  u.source = "test run";
  u.duration_s = 0.004;
  u.bin_s = 0.001;
  // 25 GB/s for 4 bins of 1 ms: 25e6 B per bin at 100%. Bytes 25e6 x (1 + 0.5) = 37.5e6.
  u.links.push_back({"gpu0 -nvlink1-> gpu1", 25e9, 37.5e6, {1.0, 0.5, 0.0, 0.0}});
  u.links.push_back({"gpu1 -nvlink1-> gpu0", 25e9, 0, {0.0, 0.0, 0.0, 0.0}});
  return u;
}

}  // namespace

TEST_CASE("report: link usage summary figures") {
  topsim::LinkUsage u = two_links();
  CHECK(u.links[0].mean_utilisation() == Approx(0.375));  // (1 + 0.5) / 4
  CHECK(u.links[0].peak_utilisation() == Approx(1.0));
  CHECK(u.links[1].mean_utilisation() == 0.0);
}

TEST_CASE("report: link usage file round trip") {
  topsim::LinkUsage u = two_links();
  std::string text = topsim::link_usage_json(u);
  CHECK(text.find("{\"link\":\"gpu0 -nvlink1-> gpu1\",\"capacity_GBps\":25.0,\"bytes_B\":37500000,"
                  "\"mean_utilisation\":0.375,\"peak_utilisation\":1.0,\"utilisation\":[1.0,0.5,0.0,0.0]}") !=
        std::string::npos);
  std::string path = topsim::test::write_temp("links.json", text);
  CHECK(topsim::is_link_usage_file(path));
  topsim::LinkUsage back = topsim::load_link_usage(path);
  CHECK(back.source == "test run");
  CHECK(back.duration_s == Approx(0.004));
  REQUIRE(back.links.size() == 2);
  CHECK(back.links[0].capacity_Bps == Approx(25e9));
  CHECK(back.links[0].utilisation == std::vector<double>{1.0, 0.5, 0.0, 0.0});
  CHECK(topsim::link_usage_json(back) == text);  // what is read writes the same bytes
  // A bin beyond 100% is refused where it is.
  std::ofstream(path) << R"({"link_usage": {"source": "x", "duration_s": 1, "bin_s": 1, "links": [
    {"link": "a", "capacity_GBps": 1, "bytes_B": 1, "mean_utilisation": 1, "peak_utilisation": 1, "utilisation": [1.5]}]}})";
  CHECK_THROWS_WITH(topsim::load_link_usage(path),
                    path + ":/link_usage/links/0/utilisation/0: expected a utilisation in [0, 1], got the number 1.5");
}

TEST_CASE("report: heat map of link usage") {
  topsim::LinkUsage u = two_links();
  topsim::HeatMap map = topsim::heat_map(u);
  // The idle direction is left out and the title says so.
  REQUIRE(map.rows == std::vector<std::string>{"gpu0 -nvlink1-> gpu1"});
  CHECK(map.title == "link utilisation: test run (1 idle not shown)");
  CHECK(map.x_max == Approx(4.0));  // milliseconds
  std::string svg = topsim::svg(map);
  // Two non-zero cells: 100% is viridis' last stop, 50% its middle one.
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("class=\"cell\"") == 2);
  CHECK(count("fill=\"#fde725\"") == 1);
  CHECK(count("fill=\"#21918c\"") == 1);
  // Only the busiest rows are kept when there are too many, in topology order.
  u.links.push_back({"gpu2 -nvlink1-> gpu3", 25e9, 50e6, {1.0, 1.0, 0.0, 0.0}});
  topsim::HeatMap one = topsim::heat_map(u, 1);
  CHECK(one.rows == std::vector<std::string>{"gpu2 -nvlink1-> gpu3"});
  CHECK(one.title == "link utilisation: test run (1 less busy, 1 idle not shown)");
}
