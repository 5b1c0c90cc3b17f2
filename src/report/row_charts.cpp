#include "report/row_charts.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "report/chart.hpp"
#include "report/result_file.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Bars get crowded past this many categories: the chart is left out (the table keeps every row).
constexpr std::size_t kMaxBars = 48;

bool has(const ResultRow& r, const char* name) { return r.get(name) != nullptr; }

// A count field: an integer, a whole double, or text of one ("1" for ZeRO, older files); -1 if none.
long long count_of(const ResultRow& r, const char* name) {
  if (auto n = r.number(name)) return static_cast<long long>(*n);
  const std::string t = field_text(r, name);
  if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(t);
}

bool ok(const ResultRow& r) { return r.status() == "ok"; }

// A variant's name for a series: "-" (a scenario without variants) reads as the model's rows.
std::string series_name(const ResultRow& r, const std::string& otherwise) {
  std::string v = field_text(r, "variant");
  return v.empty() || v == "-" ? otherwise : v;
}

// Series in the order their first row came, points sorted by x.
struct SeriesSet {
  std::vector<std::string> order;
  std::map<std::string, Series> by_name;
  void add(const std::string& name, double x, double y) {
    if (!by_name.count(name)) order.push_back(name);
    by_name[name].name = name;
    by_name[name].points.emplace_back(x, y);
  }
  LineChart chart(const std::string& title, const std::string& x_label, const std::string& y_label) const {
    LineChart c{title, x_label, y_label, true, {}, true};
    for (const std::string& n : order) {
      Series s = by_name.at(n);
      std::stable_sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      c.series.push_back(s);
    }
    return c;
  }
};

// The layout of an LLM row in a few characters: "tp2 pp4 vp5 dp8 mb1" (vp, cp, ep when above 1;
// ZeRO and recomputation when not the defaults).
std::string layout_text(const ResultRow& r) {
  std::string out;
  for (const char* f : {"tp", "pp", "vp", "cp", "ep", "dp", "mb"}) {
    long long n = count_of(r, f);
    if (n < 0 || (n == 1 && (f[0] == 'v' || f[0] == 'c' || f[0] == 'e'))) continue;
    out += (out.empty() ? "" : " ") + std::string(f) + std::to_string(n);
  }
  long long zero = count_of(r, "zero");
  if (zero > 1) out += " z" + std::to_string(zero);
  std::string recompute = field_text(r, "recompute");
  if (!recompute.empty() && recompute != "none") out += " rc-" + recompute;
  return out;
}

// Parts of an iteration, in seconds, as train and plan rows carry them; they add up to iteration_s.
const std::vector<std::pair<const char*, const char*>>& llm_parts() {
  static const std::vector<std::pair<const char*, const char*>> parts = {
      {"compute_s", "compute"},       {"bubble_s", "pipeline bubble"},  {"tp_s", "tensor-parallel"},
      {"pp_s", "pipeline sends"},     {"dp_s", "data-parallel"},        {"cp_s", "context-parallel"},
      {"ep_s", "expert all-to-all"},  {"optimizer_s", "optimizer step"}};
  return parts;
}

// Stacked bars of `rows` over the fields `parts` (those not zero in every row), scaled by `scale`.
StackedBars stacked(const std::string& title, const std::string& y_label, const std::string& x_label,
                    const std::vector<const ResultRow*>& rows, const std::vector<std::string>& categories,
                    const std::vector<std::pair<const char*, const char*>>& parts, double scale) {
  StackedBars bars;
  bars.title = title;
  bars.y_label = y_label;
  bars.x_label = x_label;
  bars.categories = categories;
  bars.title_digits = 3;
  std::vector<const char*> kept;
  for (const auto& [field, name] : parts)
    for (const ResultRow* r : rows)
      if (r->number(field).value_or(0) > 0) {
        kept.push_back(field);
        bars.segments.push_back(name);
        break;
      }
  for (const ResultRow* r : rows) {
    bars.values.emplace_back();
    for (const char* field : kept) bars.values.back().push_back(r->number(field).value_or(0) * scale);
  }
  return bars;
}

// One bar per row, one segment: `field` x `scale`.
StackedBars single(const std::string& title, const std::string& y_label, const std::string& x_label,
                   const std::string& segment, const std::vector<const ResultRow*>& rows,
                   const std::vector<std::string>& categories, const char* field) {
  StackedBars bars;
  bars.title = title;
  bars.y_label = y_label;
  bars.x_label = x_label;
  bars.categories = categories;
  bars.segments = {segment};
  bars.title_digits = 3;
  for (const ResultRow* r : rows) bars.values.push_back({r->number(field).value_or(0)});
  return bars;
}

}  // namespace

std::vector<std::string> llm_charts(const std::vector<ResultRow>& rows) {
  std::vector<const ResultRow*> mine;
  std::set<long long> counts;
  for (const ResultRow& r : rows)
    if (ok(r) && r.number("mfu") && r.number("iteration_s") && r.number("gpus")) {
      mine.push_back(&r);
      counts.insert(count_of(r, "gpus"));
    }
  std::vector<std::string> out;
  if (mine.empty()) return out;
  const std::string mfu_label = "MFU (model FLOP/s / dense peak)";
  std::vector<std::string> categories;
  std::string x_label;
  if (counts.size() > 1) {
    // Against GPUs: of several rows at one count in a series, the fastest (plan's pick).
    std::map<std::pair<std::string, long long>, const ResultRow*> best;
    for (const ResultRow* r : mine) {
      auto key = std::make_pair(series_name(*r, "all rows"), count_of(*r, "gpus"));
      auto it = best.find(key);
      if (it == best.end() || *r->number("iteration_s") < *it->second->number("iteration_s")) best[key] = r;
    }
    SeriesSet mfu, time;
    for (const ResultRow* r : mine) {
      auto key = std::make_pair(series_name(*r, "all rows"), count_of(*r, "gpus"));
      if (best.at(key) != r) continue;
      mfu.add(key.first, static_cast<double>(key.second), *r->number("mfu"));
      time.add(key.first, static_cast<double>(key.second), *r->number("iteration_s"));
    }
    out.push_back(svg(mfu.chart("MFU against GPUs", "GPUs", mfu_label)));
    out.push_back(svg(time.chart("iteration time against GPUs", "GPUs", "iteration time (s)")));
    std::vector<const ResultRow*> kept;
    for (const ResultRow* r : mine)
      if (best.at({series_name(*r, "all rows"), count_of(*r, "gpus")}) == r) {
        kept.push_back(r);
        std::string v = series_name(*r, "");
        categories.push_back((v.empty() ? "" : v + " ") + std::to_string(count_of(*r, "gpus")) + " GPUs");
      }
    mine = kept;
    x_label = "GPUs";
  } else {
    // One count: the rows as ranked (plan prints the fastest first).
    for (std::size_t i = 0; i < mine.size(); ++i)
      categories.push_back("#" + std::to_string(i + 1) + " " + layout_text(*mine[i]));
    x_label = "layout, by rank (" + std::to_string(*counts.begin()) + " GPUs)";
    if (mine.size() <= kMaxBars)
      out.push_back(svg(single("MFU by layout", mfu_label, x_label, "MFU", mine, categories, "mfu")));
  }
  if (mine.size() <= kMaxBars)
    out.push_back(svg(stacked("iteration time by part", "time per iteration (s)", x_label, mine, categories, llm_parts(), 1)));
  return out;
}

std::vector<std::string> inference_charts(const std::vector<ResultRow>& rows) {
  std::vector<const ResultRow*> mine;
  for (const ResultRow& r : rows)
    if (ok(r) && r.number("latency_ms") && r.number("throughput") && has(r, "unit")) mine.push_back(&r);
  std::vector<std::string> out;
  if (mine.empty() || mine.size() > kMaxBars) return out;
  // A bar's name: the fields that tell the rows apart (gpu and batch when none does).
  std::vector<const char*> naming;
  for (const char* f : {"model", "gpu", "mig", "tp", "precision", "sparsity", "scenario", "batch", "seq"}) {
    std::set<std::string> values;
    for (const ResultRow* r : mine) values.insert(field_text(*r, f));
    if (values.size() > 1) naming.push_back(f);
  }
  if (naming.empty()) naming = {"gpu", "batch"};
  std::vector<std::string> categories;
  for (const ResultRow* r : mine) {
    std::string name;
    for (const char* f : naming) {
      std::string v = field_text(*r, f);
      if (v.empty()) continue;
      if (std::string(f) == "batch") v = "b" + v;
      if (std::string(f) == "seq") v = "s" + v;
      name += (name.empty() ? "" : " ") + v;
    }
    categories.push_back(name);
  }
  // The rows' unit ("samples/s", "tokens/s"); mixed units get the neutral "items/s".
  std::set<std::string> units;
  for (const ResultRow* r : mine) units.insert(field_text(*r, "unit"));
  const std::string unit = units.size() == 1 ? *units.begin() : "items/s";
  const std::string per_s_item = unit.size() > 2 && unit.substr(unit.size() - 2) == "/s" ? unit.substr(0, unit.size() - 2) : unit;
  const std::string x_label = "configuration";
  auto any = [&](const char* f) {
    return std::any_of(mine.begin(), mine.end(), [&](const ResultRow* r) { return r->number(f).has_value(); });
  };
  if (any("per_W"))
    out.push_back(svg(single("throughput per watt", unit + " per W", x_label, "per W", mine, categories, "per_W")));
  if (any("per_usd"))
    out.push_back(svg(single("throughput per dollar", per_s_item + " per USD", x_label, "per USD", mine, categories, "per_usd")));
  static const std::vector<std::pair<const char*, const char*>> parts = {
      {"math_ms", "math"}, {"memory_ms", "memory"}, {"launch_ms", "launch"}, {"comm_ms", "communication"}};
  out.push_back(svg(stacked("latency by part", "latency (ms)", x_label, mine, categories, parts, 1)));
  return out;
}

std::vector<std::string> compare_charts(const std::vector<ResultRow>& rows) {
  SeriesSet throughput, per_W, per_usd;
  for (const ResultRow& r : rows) {
    auto gpus = r.number("gpus"), t = r.number("throughput");
    if (!ok(r) || !gpus || !t || !has(r, "variant") || has(r, "efficiency") || has(r, "mfu") || has(r, "latency_ms")) continue;
    const std::string name = series_name(r, "all rows");
    throughput.add(name, *gpus, *t);
    if (auto w = r.number("per_W")) per_W.add(name, *gpus, *w);
    if (auto d = r.number("per_usd")) per_usd.add(name, *gpus, *d);
  }
  std::vector<std::string> out;
  if (throughput.order.empty()) return out;
  out.push_back(svg(throughput.chart("throughput against GPUs", "GPUs", "throughput (samples/s)")));
  if (!per_W.order.empty()) out.push_back(svg(per_W.chart("throughput per watt against GPUs", "GPUs", "samples/s per W")));
  if (!per_usd.order.empty())
    out.push_back(svg(per_usd.chart("throughput per dollar against GPUs", "GPUs", "samples per USD")));
  return out;
}

}  // namespace topsim
