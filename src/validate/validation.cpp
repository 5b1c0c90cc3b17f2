#include "validate/validation.hpp"

#include <cmath>
#include <map>

namespace topsim {

namespace {
// |error| is floored so that a row matched to the last digit does not drag the geometric mean to 0.
constexpr double kErrorFloor = 1e-4;
}  // namespace

bool TargetResult::pass() const {
  return rows > 0 && (!target.geomean || geomean_abs_error <= *target.geomean) &&
         (!target.worst || worst_abs_error <= *target.worst);
}

std::vector<TargetResult> check_targets(const std::vector<ValidationTarget>& targets,
                                        const std::vector<ValidationResult>& results) {
  std::vector<TargetResult> out;
  for (const ValidationTarget& target : targets) {
    TargetResult t;
    t.target = target;
    double log_sum = 0;
    for (const auto& r : results) {
      if (r.row.metric != target.metric || !r.row.tolerance) continue;  // informational rows are not gated
      ++t.rows;
      log_sum += std::log(std::max(std::abs(r.error), kErrorFloor));
      t.worst_abs_error = std::max(t.worst_abs_error, std::abs(r.error));
    }
    if (t.rows > 0) t.geomean_abs_error = std::exp(log_sum / t.rows);
    out.push_back(t);
  }
  return out;
}

std::vector<RoleSummary> summarize(const std::vector<ValidationResult>& results) {
  std::map<std::string, RoleSummary> by_role;
  std::map<std::string, double> log_sum;
  for (const auto& result : results) {
    for (const std::string& role : {result.row.role, std::string("all")}) {
      RoleSummary& s = by_role[role];
      s.role = role;
      ++s.rows;
      double e = std::abs(result.error);
      log_sum[role] += std::log(std::max(e, kErrorFloor));
      if (e > s.worst_abs_error || s.worst_id.empty()) {
        s.worst_abs_error = e;
        s.worst_id = result.row.id;
      }
    }
  }
  std::vector<RoleSummary> out;
  for (const char* role : {"calibration", "check", "all"}) {
    auto it = by_role.find(role);
    if (it == by_role.end()) continue;
    it->second.geomean_abs_error = std::exp(log_sum[role] / it->second.rows);
    out.push_back(it->second);
  }
  return out;
}

}  // namespace topsim
