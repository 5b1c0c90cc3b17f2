#include "validate/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.hpp"

namespace topsim {

namespace {
// |error| is floored so that a row matched to the last digit does not drag the geometric mean to 0.
constexpr double kErrorFloor = 1e-4;
}  // namespace

const std::vector<std::string>& quantity_order() {
  static const std::vector<std::string> order = {"busbw>=64MiB", "time<64MiB", "multinode", "p2p", "training", "llm", "kernel",
                                                   "inference", "mig", "sparsity"};
  return order;
}

std::vector<AccuracySummary> summarize(const std::vector<ValidationResult>& results, const std::string& role, bool cross) {
  std::map<std::string, AccuracySummary> by_quantity;
  std::map<std::string, double> log_sum;
  for (const auto& r : results) {
    if (!r.evaluated || r.row.role != role) continue;
    if (cross && !r.error_cross) continue;
    double e = std::abs(cross ? *r.error_cross : r.error);
    for (const std::string& q : {r.quantity, std::string("all")}) {
      AccuracySummary& s = by_quantity[q];
      s.quantity = q;
      ++s.rows;
      log_sum[q] += std::log(std::max(e, kErrorFloor));
      if (e > s.worst_abs_error || s.worst_id.empty()) {
        s.worst_abs_error = e;
        s.worst_id = r.row.id;
      }
    }
  }
  std::vector<AccuracySummary> out;
  std::vector<std::string> order = quantity_order();
  order.push_back("all");
  for (const std::string& q : order) {
    auto it = by_quantity.find(q);
    if (it == by_quantity.end()) continue;
    it->second.geomean_abs_error = std::exp(log_sum[q] / it->second.rows);
    out.push_back(it->second);
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
