#include "validate/measured_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

constexpr double kProbeFactor = 0.99;  ///< each candidate is predicted at 99% of its value

double size_of(const std::string& text, const std::string& whole) {
  try {
    return parse_cli_size_B(text);
  } catch (const std::exception& e) {
    throw UsageError("--leave-out " + whole + ": '" + text + "' is not a size (" + e.what() +
                     "); give SIZE or MIN-MAX as nccl-tests' -b/-e take them, e.g. 64M-8G");
  }
}

// What each row ran ("ring/ll"), for the reason a constant is not pinned.
std::string paths_run(const std::vector<ValidationResult>& results) {
  std::set<std::string> paths;
  for (const ValidationResult& r : results) paths.insert(r.detail.empty() ? "-" : r.detail);
  return join(std::vector<std::string>(paths.begin(), paths.end()), ", ");
}

}  // namespace

HoldOut parse_leave_out(const std::string& text) {
  HoldOut h;
  h.range = true;
  h.text = text;
  std::size_t dash = text.find('-');
  h.low_B = size_of(text.substr(0, dash), text);
  h.high_B = dash == std::string::npos ? h.low_B : size_of(text.substr(dash + 1), text);
  if (h.high_B < h.low_B) throw UsageError("--leave-out " + text + ": the range ends below where it starts; give MIN-MAX");
  return h;
}

void split_rows(const std::vector<ValidationRow>& rows, const HoldOut& hold, std::vector<ValidationRow>& fit,
                std::vector<ValidationRow>& held) {
  std::vector<double> sizes;
  for (const ValidationRow& r : rows) sizes.push_back(r.size_B);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const ValidationRow& r : rows) {
    bool out = false;
    if (hold.range) out = r.size_B >= hold.low_B && r.size_B <= hold.high_B;
    if (hold.split) out = (std::lower_bound(sizes.begin(), sizes.end(), r.size_B) - sizes.begin()) % 2 == 1;
    (out ? held : fit).push_back(r);
  }
  if (!hold.range && !hold.split) return;
  std::string what = hold.split ? "--split" : "--leave-out " + hold.text;
  if (held.empty())
    throw UsageError(what + " holds out no row: the logs' sizes are " + format_size(sizes.front()) + " to " +
                     format_size(sizes.back()));
  if (fit.empty()) throw UsageError(what + " holds out every row; nothing is left to calibrate on");
}

PinChoice choose_pins(const ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict) {
  PinChoice out;
  out.before = predict({PredictionAsk{&rows, &models}}).front();
  ++out.predictions;
  std::set<std::string> things;
  for (const ValidationResult& r : out.before) things.insert(r.things.begin(), r.things.end());
  std::vector<const ModelConstant*> candidates;
  for (const ModelConstant& c : models.constants()) {
    if (!things.count(c.thing) || !c.has_value) continue;
    if (c.provenance.kind == Provenance::Kind::fitted) {
      candidates.push_back(&c);
    } else if (c.provenance.kind == Provenance::Kind::carried) {
      out.unpinned.push_back({c.id, "carried from " + c.provenance.carried_from +
                                        " (other hardware): only fitted constants, which have a prior and bounds, are solved"});
    } else {
      out.unpinned.push_back({c.id, "an assumption of the models: only fitted constants, which have a prior and bounds, are solved"});
    }
  }
  std::vector<ModelSet> probes(candidates.size(), models);
  std::vector<PredictionAsk> asks;
  std::vector<double> step;  // log(probe / value) of each candidate
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const ModelConstant& c = *candidates[k];
    probes[k].set_value(c.id, c.value * kProbeFactor);
    step.push_back(std::log(probes[k].find(c.id)->value / c.value));
    asks.push_back({&rows, &probes[k]});
  }
  std::vector<std::vector<ValidationResult>> moved = predict(asks);
  out.predictions += static_cast<int>(asks.size());
  // slope[k][i] = d log(predicted_i) / d log(value_k)
  std::vector<int> owner(rows.size(), -1);
  std::vector<double> best(rows.size(), kMinPinSlope);
  std::vector<int> moves(candidates.size(), 0);
  for (std::size_t k = 0; k < candidates.size(); ++k)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      double s = std::abs(std::log(moved[k][i].predicted / out.before[i].predicted) / step[k]);
      if (s >= kMinPinSlope) ++moves[k];
      if (s > best[i]) {
        best[i] = s;
        owner[i] = static_cast<int>(k);
      }
    }
  std::vector<int> pinned(candidates.size(), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (owner[i] < 0) {
      out.loose.push_back(rows[i].id);
      continue;
    }
    ValidationRow row = rows[i];
    row.pins = candidates[static_cast<std::size_t>(owner[i])]->id;
    row.role = "calibration";
    out.rows.push_back(row);
    ++pinned[static_cast<std::size_t>(owner[i])];
  }
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (pinned[k] > 0) continue;
    std::string reason;
    if (moves[k] == 0) {
      reason = "no row's prediction moves by " + fixed(kMinPinSlope, 2) + "% when it changes by 1%: no size ran a path that "
               "depends on it (the rows ran " + paths_run(out.before) + ")";
    } else {
      reason = "the " + std::to_string(moves[k]) + (moves[k] == 1 ? " row" : " rows") +
               " it moves depend more on other constants (each row pins the constant it moves most)";
    }
    out.unpinned.push_back({candidates[k]->id, reason});
  }
  return out;
}

}  // namespace topsim
