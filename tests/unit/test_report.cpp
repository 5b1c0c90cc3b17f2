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

// --- charts of train, plan, infer and compare rows ------------------------------------------

#include "report/row_charts.hpp"

namespace row_charts_test {

// A plan row: `zero` as text (older files) or as an integer (since issue 47), same chart.
topsim::ResultRow plan_row(double iteration_s, double mfu, topsim::ResultValue zero) {
  topsim::ResultRow r;
  r.fields = {{"gpus", 16LL}, {"tp", 2LL}, {"pp", 1LL}, {"vp", 1LL}, {"cp", 1LL}, {"ep", 1LL}, {"dp", 8LL},
              {"mb", 1LL},    {"zero", zero}, {"recompute", std::string("none")}, {"iteration_s", iteration_s},
              {"mfu", mfu},   {"compute_s", iteration_s - 0.1}, {"tp_s", 0.0}, {"dp_s", 0.1}};
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace row_charts_test

TEST_CASE("report: plan rows at one GPU count are charted by rank, zero as text or integer") {
  using row_charts_test::plan_row;
  std::vector<topsim::ResultRow> rows = {plan_row(2.0, 0.7, std::string("3")), plan_row(2.5, 0.56, 3LL)};
  std::vector<std::string> charts = topsim::llm_charts(rows);
  REQUIRE(charts.size() == 2);  // MFU by rank, iteration by part
  CHECK(charts[0].find("MFU by layout") != std::string::npos);
  // Both rows name the same layout whatever type zero had.
  CHECK(row_charts_test::count(charts[0], "#1 tp2 pp1 dp8 mb1 z3<") == 1);
  CHECK(row_charts_test::count(charts[0], "#2 tp2 pp1 dp8 mb1 z3<") == 1);
  CHECK(charts[0].find("layout, by rank (16 GPUs)") != std::string::npos);
  // Parts that are zero in every row (tp_s) get no segment: compute and data-parallel, two rows.
  CHECK(row_charts_test::count(charts[1], "class=\"segment\"") == 4);
  CHECK(charts[1].find("tensor-parallel") == std::string::npos);
  // Tooltips at three decimals: compute 2.0 - 0.1 = 1.9 s.
  CHECK(charts[1].find("#1 tp2 pp1 dp8 mb1 z3: compute 1.900") != std::string::npos);
}

TEST_CASE("report: train rows over GPU counts chart MFU and iteration time against GPUs") {
  using row_charts_test::plan_row;
  std::vector<topsim::ResultRow> rows;
  for (long long gpus : {16LL, 32LL}) {
    rows.push_back(plan_row(32.0 / static_cast<double>(gpus), 0.5, 1LL));
    rows.back().fields[0].second = gpus;
  }
  std::vector<std::string> charts = topsim::llm_charts(rows);
  REQUIRE(charts.size() == 3);
  CHECK(charts[0].find("MFU against GPUs") != std::string::npos);
  CHECK(charts[1].find("iteration time (s)") != std::string::npos);
  CHECK(row_charts_test::count(charts[1], "class=\"point\"") == 2);  // a dot per GPU count
  CHECK(charts[2].find("16 GPUs") != std::string::npos);
  // Not LLM rows: nothing.
  CHECK(topsim::llm_charts({topsim::ResultRow{}}).empty());
}

TEST_CASE("report: infer rows chart per watt and per dollar only when they carry them") {
  topsim::ResultRow r;
  r.fields = {{"gpu", std::string("a100")}, {"batch", 8LL},       {"throughput", 100.0}, {"unit", std::string("tokens/s")},
              {"latency_ms", 2.0},          {"per_W", 0.25},      {"math_ms", 1.5},      {"memory_ms", 0.5}};
  std::vector<std::string> charts = topsim::inference_charts({r});
  REQUIRE(charts.size() == 2);  // per watt, latency by part; no price, no per-dollar chart
  CHECK(charts[0].find("tokens/s per W") != std::string::npos);
  CHECK(charts[0].find("a100 b8") != std::string::npos);
  r.fields.emplace_back("per_usd", 180000.0);  // 100 tokens/s x 3600 s / 2 USD per hour
  charts = topsim::inference_charts({r});
  REQUIRE(charts.size() == 3);
  CHECK(charts[1].find("tokens per USD") != std::string::npos);
  // The axis' top tick: 180,000 x 1.05 = 189,000, written 189k.
  CHECK(charts[1].find(">189k<") != std::string::npos);
}

TEST_CASE("report: compare rows chart throughput, per watt and per dollar against GPUs") {
  std::vector<topsim::ResultRow> rows;
  for (const char* variant : {"dgx-a100", "hgx-a800"})
    for (long long gpus : {8LL, 16LL}) {
      topsim::ResultRow r;
      r.fields = {{"variant", std::string(variant)}, {"gpu", std::string("a100")}, {"gpus", gpus},
                  {"throughput", 100.0 * static_cast<double>(gpus)}, {"per_W", 1.1}};
      rows.push_back(r);
    }
  std::vector<std::string> charts = topsim::compare_charts(rows);
  REQUIRE(charts.size() == 2);  // no per_usd: no dollar chart
  CHECK(row_charts_test::count(charts[0], "class=\"series\"") == 2);
  CHECK(charts[1].find("samples/s per W") != std::string::npos);
  CHECK(row_charts_test::count(charts[0], "class=\"point\"") == 4);
  // Training-sweep rows (efficiency) are not compare rows: three points left.
  rows[0].fields.emplace_back("efficiency", 1.0);
  CHECK(row_charts_test::count(topsim::compare_charts(rows)[0], "class=\"point\"") == 3);
}
