// topsim report: one self-contained HTML page with the table and charts of a run, comparison,
// collective sweep or training sweep (any JSON rows topsim wrote). Charts are inline SVG: busbw
// against message size for collectives; throughput efficiency against GPUs and the
// iteration-time breakdown for training sweeps; MFU, iteration time and its parts for train and
// plan rows, throughput per watt and per dollar for infer and compare rows (report/row_charts).
#include <map>
#include <memory>
#include <set>

#include "cli/common.hpp"
#include "io/io.hpp"
#include "report/chart.hpp"
#include "report/link_usage.hpp"
#include "report/result_file.hpp"
#include "report/row_charts.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

bool ok(const ResultRow& row) { return row.status() == "ok"; }

// Collectives: one chart per topology and operation, a series per count and override.
std::vector<std::string> collective_charts(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::map<std::string, Series>> charts;  // title -> series name -> series
  for (const ResultRow& r : rows) {
    auto size = r.number("size_B"), busbw = r.number("busbw_GBps");
    if (!ok(r) || !size || !busbw) continue;
    std::string count = r.get("nodes") ? field_text(r, "nodes") + " servers" : field_text(r, "gpus") + " GPUs";
    std::string title = field_text(r, "topology") + ": " + field_text(r, "op");
    std::string name = count + (r.get("override") ? " " + field_text(r, "override") : "") +
                       (r.get("algo") && !r.get("override") ? " " + field_text(r, "algo") : "");
    Series& s = charts[title][name];
    s.name = name;
    s.points.emplace_back(*size, *busbw);
  }
  std::vector<std::string> out;
  for (auto& [title, series] : charts) {
    LineChart chart{title + " busbw against message size", "message size (B)", "busbw (GB/s)", true, {}};
    for (auto& [name, s] : series) {
      std::sort(s.points.begin(), s.points.end());
      chart.series.push_back(s);
    }
    out.push_back(svg(chart));
  }
  return out;
}

// Training: efficiency against GPUs per variant, and each point's iteration breakdown.
std::vector<std::string> training_charts(const std::vector<ResultRow>& rows) {
  std::map<std::string, Series> by_variant;
  std::vector<std::string> order;
  StackedBars bars{"iteration time by part", "ms", {}, {"forward", "backward", "optimizer", "exposed communication"}, {}};
  for (const ResultRow& r : rows) {
    auto gpus = r.number("gpus"), efficiency = r.number("efficiency");
    if (!ok(r) || !gpus || !efficiency) continue;
    std::string v = field_text(r, "variant");
    if (!by_variant.count(v)) order.push_back(v);
    by_variant[v].name = v;
    by_variant[v].points.emplace_back(*gpus, *efficiency);
    // Seconds in sweeps and JSON rows; milliseconds are what the chart shows.
    auto part = [&](const char* name) { return r.number(name).value_or(0) * 1e3; };
    bars.categories.push_back(v + " " + field_text(r, "gpus"));
    bars.values.push_back({part("forward_s"), part("backward_s"), part("optimizer_s"), part("exposed_comm_s")});
  }
  std::vector<std::string> out;
  if (by_variant.empty()) return out;
  LineChart eff{"scaling efficiency against GPUs", "GPUs", "efficiency (speedup / GPUs)", true, {}};
  for (const auto& v : order) eff.series.push_back(by_variant[v]);
  out.push_back(svg(eff));
  if (bars.categories.size() <= 48) out.push_back(svg(bars));
  return out;
}

// A page: title line, charts, then a table of `columns` x `cells`.
std::string page(const std::string& source, const std::string& summary, const std::vector<std::string>& charts,
                 const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& cells) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>topsim report: " +
                     html_escape(source) + "</title>\n<style>\nbody{font-family:sans-serif;margin:2em}"
                     "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
                     "text-align:right}th{background:#eee}.charts svg{margin:0 1em 1em 0}\n</style>\n</head>\n<body>\n";
  html += "<h1>topsim report</h1>\n<p>" + html_escape(summary) + "</p>\n<div class=\"charts\">\n";
  for (const auto& c : charts) html += c;
  html += "</div>\n<table>\n<tr>";
  for (const auto& c : columns) html += "<th>" + html_escape(c) + "</th>";
  html += "</tr>\n";
  for (const auto& row : cells) {
    html += "<tr>";
    for (const auto& cell : row) html += "<td>" + html_escape(cell) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n</body>\n</html>\n";
}

// A run's link usage: the heat map, then every link's capacity, bytes and utilisation.
std::string link_usage_page(const std::string& path) {
  LinkUsage u = load_link_usage(path);
  std::vector<std::vector<std::string>> cells;
  for (const LinkLoad& l : u.links)
    cells.push_back({l.link, fixed(l.capacity_Bps / 1e9, 3), fixed(l.bytes_B, 0), fixed(l.mean_utilisation() * 100, 1),
                     fixed(l.peak_utilisation() * 100, 1)});
  std::string summary = u.source + ", " + fixed(u.duration_s * 1e3, 3) + " ms, " + std::to_string(u.links.size()) +
                        " link directions";
  return page(u.source, summary, {svg(heat_map(u))}, {"link", "capacity_GBps", "bytes_B", "mean_%", "peak_bin_%"}, cells);
}

}  // namespace

void add_report_command(CLI::App& app, Context& context) {
  CLI::App* report = app.add_subcommand("report", "One self-contained HTML page with the table and charts of topsim's JSON rows");
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  report->add_option("result", *input,
                     "JSON rows: what sweep, merge, run, compare, coll, train, plan or infer wrote (--format json), or a --link-usage file")
      ->required();
  report->add_option("-o,--output", *output, "The HTML page (default: standard output)");
  report->callback([input, output, &context]() {
    std::string html;
    if (is_link_usage_file(*input)) {
      html = link_usage_page(*input);
    } else {
      ResultFile f = load_result_rows(*input);
      std::vector<std::string> charts = collective_charts(f.rows);
      for (auto* kind : {&training_charts, &llm_charts, &inference_charts, &compare_charts}) {
        std::vector<std::string> more = (*kind)(f.rows);
        charts.insert(charts.end(), more.begin(), more.end());
      }
      std::vector<std::string> columns;
      std::set<std::string> seen;
      for (const ResultRow& r : f.rows)
        for (const auto& [key, value] : r.fields)
          if (seen.insert(key).second) columns.push_back(key);
      std::vector<std::vector<std::string>> cells;
      for (const ResultRow& r : f.rows) {
        cells.emplace_back();
        for (const auto& c : columns) cells.back().push_back(field_text(r, c.c_str()));
      }
      html = page(f.source, f.source + (f.grid.empty() ? "" : ", grid " + f.grid) + ", " + std::to_string(f.rows.size()) +
                                " rows",
                  charts, columns, cells);
    }
    if (output->empty()) {
      context.out = html;
      return;
    }
    write_file_whole(*output, html, "-o");
  });
}

}  // namespace topsim
