#include "validate/ratchet.hpp"

#include <cmath>
#include <filesystem>
#include <map>

#include "util/text.hpp"

namespace topsim {

AccuracyRatchet ratchet_of(const std::vector<ClassSummary>& classes) {
  AccuracyRatchet out;
  for (const ClassSummary& c : classes) {
    RatchetEntry e;
    e.accuracy_class = c.accuracy_class;
    e.rows = c.simulated.rows;
    e.geomean_pct = 100 * c.simulated.geomean_error;
    e.median_pct = 100 * c.simulated.median_abs_error;
    e.worst_pct = 100 * c.simulated.worst_abs_error;
    e.nccl_rows = c.nccl.rows;
    e.nccl_geomean_pct = 100 * c.nccl.geomean_error;
    e.simulated_on_nccl_rows_pct = 100 * c.simulated_on_nccl_rows.geomean_error;
    out.classes.push_back(e);
  }
  return out;
}

bool behind_nccl(const RatchetEntry& entry) {
  return entry.nccl_rows >= kNcclFloorRows && entry.simulated_on_nccl_rows_pct > entry.nccl_geomean_pct;
}

std::vector<std::string> ratchet_failures(const AccuracyRatchet& committed, const AccuracyRatchet& measured,
                                          bool every_class) {
  std::map<std::string, const RatchetEntry*> now;
  for (const RatchetEntry& e : measured.classes) now[e.accuracy_class] = &e;
  std::vector<std::string> failures;
  std::map<std::string, bool> seen;
  for (const RatchetEntry& was : committed.classes) {
    seen[was.accuracy_class] = true;
    auto it = now.find(was.accuracy_class);
    if (it == now.end()) {
      if (every_class)
        failures.push_back(was.accuracy_class + ": no check rows now (committed: " + std::to_string(was.rows) + " rows)");
      continue;
    }
    const RatchetEntry& is = *it->second;
    // Some validation files only: a class with other rows than the committed ones is another
    // figure, not comparable.
    if (!every_class && is.rows != was.rows) continue;
    if (is.geomean_pct > was.geomean_pct + kRatchetTolerancePct)
      failures.push_back(was.accuracy_class + ": " + fixed(is.geomean_pct, 2) + "% over " + std::to_string(is.rows) +
                         " rows, committed " + fixed(was.geomean_pct, 2) + "% over " + std::to_string(was.rows) +
                         " (more than " + fixed(kRatchetTolerancePct, 0) + " point worse)");
    if (behind_nccl(is) && !behind_nccl(was))
      failures.push_back(was.accuracy_class + ": " + fixed(is.simulated_on_nccl_rows_pct, 2) + "% against NCCL's own estimate's " +
                         fixed(is.nccl_geomean_pct, 2) + "% on the same " + std::to_string(is.nccl_rows) +
                         " rows (the committed entry was not behind it)");
  }
  if (every_class)
    for (const RatchetEntry& e : measured.classes)
      if (!seen.count(e.accuracy_class))
        failures.push_back(e.accuracy_class + ": a class the ratchet does not hold (" + std::to_string(e.rows) +
                           " rows, " + fixed(e.geomean_pct, 2) + "%); add it with --write-ratchet");
  return failures;
}

std::vector<SetSummary> summarize_sets(const std::vector<ValidationResult>& results) {
  std::map<std::string, std::vector<double>> simulated, nccl;
  std::map<std::string, std::pair<double, std::string>> worst;
  for (const ValidationResult& r : results) {
    if (!r.evaluated || r.row.role != "check" || !r.error_cross || r.row.kind != "coll") continue;
    // The file's stem names the set; sizes split as the classes do.
    const std::string size = size_quantity(r.row.size_B);
    const std::string set = std::filesystem::path(r.row.where.file).stem().string() + " " + size;
    simulated[set].push_back(*r.error_cross);
    if (std::abs(*r.error_cross) > worst[set].first || worst[set].second.empty()) worst[set] = {std::abs(*r.error_cross), r.row.id};
    if (r.nccl_predicted) nccl[set].push_back((*r.nccl_predicted - r.row.measured()) / r.row.measured());
  }
  std::vector<SetSummary> out;
  for (const auto& [set, errors] : simulated) {
    SetSummary s;
    s.set = set;
    s.simulated = accuracy_of(errors);
    s.simulated.worst_id = worst[set].second;
    s.nccl = accuracy_of(nccl[set]);
    out.push_back(s);
  }
  return out;
}

}  // namespace topsim
