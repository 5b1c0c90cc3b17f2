// topsim regress: a sweep's rows against a baseline's, point by point. Exits 1 when a point is
// worse than the tolerance, 2 when the files cannot be compared; --update accepts the current.
#include <cmath>
#include <map>
#include <memory>

#include "cli/common.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct RegressArgs {
  std::string baseline, current, tolerance = "2%", format;
  bool update = false;
};

// The figures a curve is made of, and which way is better.
struct Metric {
  const char* name;
  bool higher_is_better;
};
constexpr Metric kMetrics[] = {{"busbw_GBps", true}, {"throughput", true}, {"time_us", false}, {"iteration_s", false}};

double tolerance_of(const std::string& text) {
  std::string t = text;
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end == nullptr || *end != '\0' || !(v >= 0) || !std::isfinite(v))
    throw UsageError("--tolerance: expected a relative change such as 2% or 0.02, got '" + text + "'");
  return percent ? v / 100 : v;
}

std::string id_of(const ResultRow& row) { return std::get<std::string>(*row.get("id")); }

}  // namespace

void add_regress_command(CLI::App& app, Context& context) {
  CLI::App* regress = app.add_subcommand("regress", "Compare a sweep's rows with a baseline's; exit 1 when a point got worse");
  auto args = std::make_shared<RegressArgs>();
  regress->add_option("--baseline", args->baseline, "Baseline rows (what topsim sweep wrote)")->required();
  regress->add_option("--current", args->current, "Current rows of the same sweep")->required();
  regress->add_option("--tolerance", args->tolerance, "Largest change for the worse that passes: 2% or 0.02")->default_val("2%");
  regress->add_flag("--update", args->update, "Accept the current rows: rewrite the baseline with them");
  add_format_option(*regress, args->format);
  regress->callback([args, &context]() {
    Format format = parse_format(args->format);
    double tolerance = tolerance_of(args->tolerance);
    ResultFile current = load_result_file(args->current);
    if (args->update) {
      write_file_whole(args->baseline, read_text_file(args->current), "--baseline");
      context.out = "baseline " + args->baseline + " updated from " + args->current + " (" +
                    std::to_string(current.rows.size()) + " points)\n";
      return;
    }
    ResultFile baseline = load_result_file(args->baseline);
    if (baseline.grid != current.grid || baseline.points != current.points)
      throw InputError(args->current, "", "points do not match the baseline's: grid " + current.grid + " (" +
                                              std::to_string(current.points) + " points, from " + current.source +
                                              ") against " + baseline.grid + " (" + std::to_string(baseline.points) +
                                              " points, from " + baseline.source + ")");
    std::map<std::string, const ResultRow*> base_rows;
    for (const ResultRow& r : baseline.rows) base_rows[id_of(r)] = &r;
    std::vector<std::string> unmatched;
    for (const ResultRow& r : current.rows)
      if (!base_rows.count(id_of(r))) unmatched.push_back(id_of(r));
    if (!unmatched.empty() || baseline.rows.size() != current.rows.size())
      throw InputError(args->current, "", "points do not match the baseline's (" + std::to_string(current.rows.size()) +
                                              " rows against " + std::to_string(baseline.rows.size()) + ")" +
                                              (unmatched.empty() ? "" : "; not in the baseline: " + unmatched.front()));

    Table table({{"id"}, {"metric"}, {"baseline", 3}, {"current", 3}, {"change_pct", 2}, {"verdict"}});
    int worse = 0, moved = 0;
    for (const ResultRow& cur : current.rows) {
      const ResultRow& base = *base_rows.at(id_of(cur));
      if (base.status() != cur.status()) {
        ++moved;
        bool lost = cur.status() != "ok";
        worse += lost ? 1 : 0;
        table.add_row({id_of(cur), std::string("status"), 0.0, 0.0, 0.0,
                       std::string(lost ? "worse: " : "better: ") + base.status() + " -> " + cur.status()});
        continue;
      }
      for (const Metric& m : kMetrics) {
        auto b = base.number(m.name), c = cur.number(m.name);
        if (!b || !c || *b == *c) continue;
        ++moved;
        double change = *b != 0 ? (*c - *b) / *b : 1;
        bool is_worse = m.higher_is_better ? change < -tolerance : change > tolerance;
        bool is_better = m.higher_is_better ? change > 0 : change < 0;
        worse += is_worse ? 1 : 0;
        table.add_row({id_of(cur), std::string(m.name), *b, *c, 100 * change,
                       std::string(is_worse ? "worse" : is_better ? "better" : "within")});
      }
    }
    std::string summary = std::to_string(current.rows.size()) + " points, " + std::to_string(moved) +
                          " figures moved, " + std::to_string(worse) + " worse than " + args->tolerance + "\n";
    context.out = format == Format::table ? "# topsim regress: " + args->current + " against " + args->baseline + "\n" +
                                                table.to_text() + summary
                                          : table.render(format);
    if (worse > 0) throw ExitStatus(1, std::to_string(worse) + " figures worse than " + args->tolerance + "\n");
  });
}

}  // namespace topsim
