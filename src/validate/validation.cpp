#include "validate/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.hpp"

namespace topsim {

const std::vector<std::string>& quantity_order() {
  static const std::vector<std::string> order = {"busbw>=64MiB", "time<64MiB", "multinode", "p2p", "training", "llm", "kernel",
                                                   "inference", "mig", "sparsity"};
  return order;
}

AccuracySummary accuracy_of(const std::vector<double>& errors) {
  AccuracySummary s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs_errors;
  double log_sum = 0;
  for (double e : errors) {
    abs_errors.push_back(std::abs(e));
    log_sum += std::log1p(std::abs(e));
  }
  s.geomean_error = std::expm1(log_sum / s.rows);
  std::sort(abs_errors.begin(), abs_errors.end());
  std::size_t mid = abs_errors.size() / 2;
  s.median_abs_error = abs_errors.size() % 2 ? abs_errors[mid] : (abs_errors[mid - 1] + abs_errors[mid]) / 2;
  s.worst_abs_error = abs_errors.back();
  return s;
}

ScaleTrend llm_error_by_data_parallel(const std::vector<ValidationResult>& results) {
  // Band edges in data-parallel ranks: [1], [2, 16), [16, 64), [64, 256), [256, inf).
  const std::vector<std::pair<int, std::string>> bands = {{1, "dp 1"}, {2, "dp 2-15"}, {16, "dp 16-63"}, {64, "dp 64-255"}, {256, "dp 256+"}};
  std::vector<std::vector<double>> errors(bands.size());
  std::vector<std::pair<double, double>> points;  // (log2 dp, signed speed error)
  std::vector<std::vector<double>> speed(bands.size());
  for (const ValidationResult& r : results) {
    if (!r.evaluated || r.row.role != "check" || r.data_parallel < 1 || !r.error_cross) continue;
    std::size_t band = 0;
    while (band + 1 < bands.size() && r.data_parallel >= bands[band + 1].first) ++band;
    errors[band].push_back(*r.error_cross);
    // Signed as speed: a time metric predicted short is a prediction too fast.
    const double e = *r.error_cross;
    points.emplace_back(std::log2(double(r.data_parallel)), r.row.metric == "iteration_s" ? -e / (1 + e) : e);
    speed[band].push_back(points.back().second);
  }
  ScaleTrend t;
  t.rows = static_cast<int>(points.size());
  for (std::size_t b = 0; b < bands.size(); ++b) {
    if (errors[b].empty()) continue;
    AccuracySummary a = accuracy_of(errors[b]);
    a.quantity = bands[b].second;
    t.bands.push_back(a);
    double sum = 0;
    for (double e : speed[b]) sum += e;
    t.mean_signed_error.push_back(sum / double(errors[b].size()));
  }
  if (points.size() >= 2) {
    double mx = 0, my = 0;
    for (const auto& [x, y] : points) mx += x, my += y;
    mx /= double(points.size());
    my /= double(points.size());
    double sxy = 0, sxx = 0;
    for (const auto& [x, y] : points) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx);
    t.slope_per_doubling = sxx > 0 ? sxy / sxx : 0;
  }
  return t;
}

std::vector<AccuracySummary> summarize(const std::vector<ValidationResult>& results, const std::string& role, bool cross) {
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, std::pair<double, std::string>> worst;  // |error|, the first row that has it
  for (const auto& r : results) {
    if (!r.evaluated || r.row.role != role) continue;
    if (cross && !r.error_cross) continue;
    double e = cross ? *r.error_cross : r.error;
    for (const std::string& q : {r.quantity, std::string("all")}) {
      errors[q].push_back(e);
      auto it = worst.find(q);
      if (it == worst.end() || std::abs(e) > it->second.first) worst[q] = {std::abs(e), r.row.id};
    }
  }
  std::vector<AccuracySummary> out;
  std::vector<std::string> order = quantity_order();
  order.push_back("all");
  for (const std::string& q : order) {
    auto it = errors.find(q);
    if (it == errors.end()) continue;
    AccuracySummary s = accuracy_of(it->second);
    s.quantity = q;
    s.worst_id = worst[q].second;
    out.push_back(s);
  }
  return out;
}

std::vector<ClassSummary> summarize_classes(const std::vector<ValidationResult>& results) {
  struct Errors {
    std::vector<double> simulated, nccl, simulated_on_nccl;
    std::pair<double, std::string> worst{-1, ""}, worst_nccl{-1, ""}, worst_on_nccl{-1, ""};
  };
  auto note_worst = [](std::pair<double, std::string>& worst, double e, const std::string& id) {
    if (std::abs(e) > worst.first) worst = {std::abs(e), id};
  };
  std::map<std::string, Errors> classes;
  for (const ValidationResult& r : results) {
    if (!r.evaluated || r.row.role != "check" || !r.error_cross) continue;
    Errors& c = classes[r.accuracy_class];
    c.simulated.push_back(*r.error_cross);
    note_worst(c.worst, *r.error_cross, r.row.id);
    if (!r.nccl_predicted) continue;
    double e = (*r.nccl_predicted - r.row.measured()) / r.row.measured();
    c.nccl.push_back(e);
    note_worst(c.worst_nccl, e, r.row.id);
    c.simulated_on_nccl.push_back(*r.error_cross);
    note_worst(c.worst_on_nccl, *r.error_cross, r.row.id);
  }
  std::vector<ClassSummary> out;
  for (const auto& [name, c] : classes) {
    ClassSummary s;
    s.accuracy_class = name;
    s.simulated = accuracy_of(c.simulated);
    s.simulated.quantity = name;
    s.simulated.worst_id = c.worst.second;
    s.nccl = accuracy_of(c.nccl);
    s.nccl.worst_id = c.worst_nccl.second;
    s.simulated_on_nccl_rows = accuracy_of(c.simulated_on_nccl);
    s.simulated_on_nccl_rows.worst_id = c.worst_on_nccl.second;
    out.push_back(s);
  }
  return out;
}

void check_rows(const std::vector<ValidationRow>& rows) {
  std::map<std::string, const ValidationRow*> by_id;
  std::map<std::string, const ValidationRow*> source_citation;
  for (const ValidationRow& row : rows) {
    auto [it, inserted] = by_id.emplace(row.id, &row);
    if (!inserted)
      throw InputError(row.where.file, row.where.pointer + "/id",
                       "row id '" + row.id + "' is also used at " + it->second->where.file + ":" + it->second->where.pointer);
    auto [cited, first] = source_citation.emplace(row.source, &row);
    if (!first && cited->second->citation != row.citation)
      throw InputError(row.where.file, row.where.pointer + "/source",
                       "source '" + row.source + "' is cited differently in " + cited->second->where.file +
                           "; one source id, one citation");
  }
  for (const ValidationRow& row : rows) {
    if (row.role != "repeat") continue;
    auto it = by_id.find(row.repeats);
    if (it == by_id.end() || it->second == &row)
      throw InputError(row.where.file, row.where.pointer + "/repeats",
                       "'" + row.repeats + "' is no other row's id; a repeat names the row whose published figure it repeats");
    if (it->second->role == "repeat" || it->second->role == "pending")
      throw InputError(row.where.file, row.where.pointer + "/repeats",
                       "row '" + row.repeats + "' is itself a " + it->second->role + " row; repeat the row that is counted");
  }
}

}  // namespace topsim
