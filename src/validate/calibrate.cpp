#include "validate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

constexpr int kMaxSweeps = 12;
constexpr int kMaxSteps = 30;
constexpr double kProbeStep = 0.01;  ///< log-space step of the first finite difference (well above 4-digit rounding)
constexpr double kMaxStep = 1.0;     ///< largest log-space step per iteration (a factor e)

std::string percent(double fraction) { return (fraction >= 0 ? "+" : "") + fixed(100 * fraction, 2) + "%"; }

struct Problem {
  const ModelConstant* constant = nullptr;
  std::vector<ValidationRow> rows;
  std::optional<double> slope;  ///< d log(predicted) / d log(value) per row, averaged: from the last solve
  std::vector<double> history;  ///< values earlier sweeps settled on (a return to one ends the sweeps)
};

class Solver {
 public:
  Solver(ModelSet& models, const PredictEach& predict, CalibrationReport& report)
      : models_(models), predict_(predict), report_(report) {}

  /// log(predicted / measured) of each row with the constant at each of `values`, predicted
  /// together; the models are left at the first value.
  std::vector<std::vector<double>> errors(const Problem& p, const std::vector<double>& values) {
    std::vector<ModelSet> others;
    others.reserve(values.size());
    for (std::size_t i = 1; i < values.size(); ++i) {
      others.push_back(models_);
      others.back().set_value(p.constant->id, values[i]);
    }
    models_.set_value(p.constant->id, values.front());
    std::vector<PredictionAsk> asked = {{&p.rows, &models_}};
    for (const ModelSet& m : others) asked.push_back({&p.rows, &m});
    report_.predictions += static_cast<int>(values.size());
    std::vector<std::vector<double>> out;
    for (const std::vector<ValidationResult>& results : predict_(asked)) {
      std::vector<double> e;
      for (const ValidationResult& r : results) e.push_back(std::log(r.predicted / r.row.measured()));
      out.push_back(e);
    }
    return out;
  }
  std::vector<double> errors(const Problem& p, double value) { return errors(p, std::vector<double>{value}).front(); }

  /// One Gauss-Newton solve in log(value); returns the residuals at the value it settles on.
  std::vector<double> solve(Problem& p) {
    const ModelConstant& c = *p.constant;
    double x = models_.find(c.id)->value;
    std::vector<double> e;
    std::vector<double> slope;
    if (p.slope) {
      e = errors(p, x);
      slope.assign(e.size(), *p.slope);
    } else {
      // The first finite difference: both points are predicted at once.
      std::vector<std::vector<double>> both = errors(p, {x, probe_point(*p.constant, x)});
      e = both[0];
      slope = slopes(p, x, e, both[1]);
    }
    double previous = -1;
    std::vector<double> previous_e;
    auto sse = [](const std::vector<double>& v) {
      double sum = 0;
      for (double value : v) sum += value * value;
      return sum;
    };
    for (int step = 0; step < kMaxSteps; ++step) {
      double jj = 0, je = 0;
      for (std::size_t i = 0; i < e.size(); ++i) {
        jj += slope[i] * slope[i];
        je += slope[i] * e[i];
      }
      if (jj < 1e-12) no_dependence(p, x);
      double delta = std::clamp(-je / jj, -kMaxStep, kMaxStep);
      double next = rounded(c, x * std::exp(delta));
      if (next == x) break;  // settled
      if (next == previous) {  // the optimum lies between two written values: keep the better one
        if (sse(previous_e) < sse(e)) {
          x = previous;
          e = previous_e;
        }
        break;
      }
      std::vector<double> en = errors(p, next);
      double dx = std::log(next / x);
      for (std::size_t i = 0; i < e.size(); ++i) slope[i] = (en[i] - e[i]) / dx;
      if (std::all_of(slope.begin(), slope.end(), [](double s) { return std::abs(s) < 1e-9; })) {
        slope = slopes(p, next, en, errors(p, probe_point(c, next)));
        models_.set_value(c.id, next);
      }
      previous = x;
      previous_e = e;
      x = next;
      e = en;
    }
    if (models_.find(c.id)->value != x) e = errors(p, x);
    double mean = 0;
    for (double s : slope) mean += s / slope.size();
    p.slope = mean;
    return e;
  }

  static double rounded(const ModelConstant& c, double value) {
    double upper = fraction(c) ? 1.0 : 1e30;
    return std::stod(significant_text(std::clamp(value, 1e-12, upper), ModelSet::kSignificantDigits));
  }

 private:
  // Plain numbers whose prior is at most 1 are fractions (efficiencies): they stay in (0, 1].
  static bool fraction(const ModelConstant& c) {
    return c.unit.empty() && c.provenance.prior && *c.provenance.prior <= 1.0;
  }

  // The value a finite difference from x probes: one step up, or down for a fraction near 1.
  static double probe_point(const ModelConstant& c, double x) {
    double sign = fraction(c) && x * std::exp(kProbeStep) > 1.0 ? -1.0 : 1.0;
    return rounded(c, x * std::exp(sign * kProbeStep));
  }

  // d log(predicted) / d log(value) per row, from the errors at x and at probe_point(x).
  static std::vector<double> slopes(const Problem& p, double x, const std::vector<double>& e,
                                    const std::vector<double>& ep) {
    std::vector<double> slope(e.size());
    double dx = std::log(probe_point(*p.constant, x) / x);
    for (std::size_t i = 0; i < e.size(); ++i) slope[i] = (ep[i] - e[i]) / dx;
    return slope;
  }

  [[noreturn]] void no_dependence(const Problem& p, double x) {
    const ValidationRow& row = p.rows.front();
    throw InputError(row.where.file, row.where.pointer + "/pins",
                     "the prediction of this row does not change when " + p.constant->id + " moves from " +
                         shortest(x) + p.constant->unit + ", so the row cannot pin it (topsim chooses a path that "
                         "does not use it; force the algorithm or protocol the measurement ran, or pin another constant)");
  }

  ModelSet& models_;
  const PredictEach& predict_;
  CalibrationReport& report_;
};

double rms(const std::vector<double>& log_errors) {
  double sum = 0;
  for (double e : log_errors) sum += std::pow(std::exp(e) - 1, 2);
  return log_errors.empty() ? 0 : std::sqrt(sum / log_errors.size());
}

void check_fit(const Problem& p, const std::vector<double>& e, double value) {
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    const ValidationRow& row = p.rows[i];
    double off = std::exp(e[i]) - 1;
    double tolerance = row.tolerance.value_or(kDefaultCalibrationTolerance);
    if (std::abs(off) <= tolerance) continue;
    std::string at = p.constant->id + " = " + shortest(value) + p.constant->unit;
    if (p.rows.size() == 1)
      throw InputError(row.where.file, row.where.pointer + "/measured",
                       "no value of " + p.constant->id + " reproduces this row within its tolerance (" +
                           fixed(100 * tolerance, 0) + "%): the closest, " + at + ", predicts " + percent(off) +
                           " (the constant reached its bound, or topsim's choice changes before the figure is met)");
    std::string others;
    for (std::size_t j = 0; j < p.rows.size(); ++j)
      if (j != i) others += (others.empty() ? "" : ", ") + p.rows[j].id + " " + percent(std::exp(e[j]) - 1);
    throw InputError(row.where.file, row.where.pointer + "/measured",
                     "the rows that pin " + p.constant->id + " disagree beyond their tolerance: at the least-squares " +
                         at + " this row is off by " + percent(off) + " (tolerance " + fixed(100 * tolerance, 0) +
                         "%), " + others);
  }
}

}  // namespace

void check_declarations(const ModelSet& models, const std::vector<ValidationRow>& rows) {
  std::map<std::string, const ValidationRow*> by_id;
  for (const ValidationRow& row : rows) by_id[row.id] = &row;
  std::map<std::string, int> pinned;
  std::vector<std::string> fitted;
  for (const ModelConstant& c : models.constants())
    if (c.provenance.kind == Provenance::Kind::fitted) fitted.push_back(c.id);
  for (const ValidationRow& row : rows) {
    if (row.role != "calibration") continue;
    const ModelConstant* c = models.find(row.pins);
    if (c == nullptr)
      throw InputError(row.where.file, row.where.pointer + "/pins",
                       unknown_name_message("fitted constant", row.pins, fitted) +
                           " (a cited fact is not solved from rows; mark a parameter {\"fitted\": ...} in models/ to pin it)");
    if (c->provenance.kind != Provenance::Kind::fitted)
      throw InputError(row.where.file, row.where.pointer + "/pins",
                       row.pins + " has no fitted provenance (it is " + to_string(c->provenance.kind) + " at " +
                           c->provenance_at.file + ":" + c->provenance_at.pointer +
                           "); only constants marked {\"fitted\": ...} are solved from rows");
    ++pinned[row.pins];
  }
  for (const ModelConstant& c : models.constants()) {
    if (c.provenance.kind == Provenance::Kind::fitted && pinned[c.id] == 0)
      throw InputError(c.provenance_at.file, c.provenance_at.pointer,
                       "fitted constant " + c.id + " is pinned by no calibration row; add a row with \"pins\": \"" +
                           c.id + "\", or cite its source as a fact or an assumption");
    if (c.provenance.kind != Provenance::Kind::carried) continue;
    const ModelConstant* from = models.find(c.provenance.carried_from);
    if (from == nullptr || from->provenance.kind != Provenance::Kind::fitted)
      throw InputError(c.provenance_at.file, c.provenance_at.pointer + "/carried_from",
                       "'" + c.provenance.carried_from + "' is not a fitted constant; a constant is carried from one that rows pin");
    for (std::size_t i = 0; i < c.provenance.backed_by.size(); ++i) {
      auto it = by_id.find(c.provenance.backed_by[i]);
      if (it == by_id.end() || it->second->role != "check")
        throw InputError(c.provenance_at.file, c.provenance_at.pointer + "/backed_by/" + std::to_string(i),
                         "'" + c.provenance.backed_by[i] + "' is no check row; a carried constant is backed by check rows on its own hardware");
    }
  }
}

PredictEach in_turn(Predict predict) {
  return [predict = std::move(predict)](const std::vector<PredictionAsk>& asked) {
    std::vector<std::vector<ValidationResult>> out;
    for (const PredictionAsk& a : asked) out.push_back(predict(*a.rows, *a.models));
    return out;
  };
}

namespace {

// Gauss-Seidel over `problems` until a whole sweep changes no written digit; returns each solved
// constant's log residuals. `before_sweep` runs at the start of each sweep (carried constants
// follow theirs). With `left_out` set, a constant whose remaining rows no longer depend on it takes
// its prior instead of failing.
std::map<std::string, std::vector<double>> solve_in_sweeps(ModelSet& models, std::vector<Problem>& problems, Solver& solver,
                                                           CalibrationReport& report, const std::function<void()>& before_sweep,
                                                           const std::string& left_out) {
  std::map<std::string, std::vector<double>> residuals;
  std::vector<std::string> moved;  // constants the last sweep changed
  for (;;) {
    if (report.sweeps == kMaxSweeps)
      throw InputError(problems.front().constant->provenance_at.file, "",
                       "calibration did not settle in " + std::to_string(kMaxSweeps) +
                           " sweeps over the fitted constants (they pull against each other; the last sweep moved " +
                           join(moved, ", ") + "); check which rows pin what");
    ++report.sweeps;
    before_sweep();
    moved.clear();
    for (Problem& p : problems) {
      if (p.rows.empty()) continue;
      double before = models.find(p.constant->id)->value;
      try {
        residuals[p.constant->id] = solver.solve(p);
      } catch (const InputError&) {
        if (left_out.empty()) throw;
        // Without the left-out source the remaining rows may no longer depend on the constant
        // (other constants fell back to priors): it cannot be identified, so it takes its prior too.
        p.rows.clear();
        models.set_value(p.constant->id, *p.constant->provenance.prior);
        moved.push_back(p.constant->id + " (unidentifiable without " + left_out + ")");
        continue;
      }
      double after = models.find(p.constant->id)->value;
      // Back to a value an earlier sweep settled on: the optimum lies between two written values
      // and the sweeps would flip between them; the last written digit is as far as it resolves.
      bool cycle = std::find(p.history.begin(), p.history.end(), after) != p.history.end();
      p.history.push_back(before);
      if (after != before && !cycle) moved.push_back(p.constant->id + " " + shortest(before) + " -> " + shortest(after));
    }
    if (moved.empty()) break;
  }
  return residuals;
}

}  // namespace

CalibrationReport calibrate(ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict,
                            const std::string& left_out) {
  check_declarations(models, rows);
  CalibrationReport report;
  Solver solver(models, predict, report);
  std::vector<Problem> problems;
  std::vector<const ModelConstant*> carried;
  std::map<std::string, double> committed;
  for (const ModelConstant& c : models.constants()) {
    committed[c.id] = c.value;
    if (c.provenance.kind == Provenance::Kind::carried) carried.push_back(&c);
    if (c.provenance.kind != Provenance::Kind::fitted) continue;
    Problem p;
    p.constant = &c;
    for (const ValidationRow& row : rows)
      if (row.role == "calibration" && row.pins == c.id && row.source != left_out) p.rows.push_back(row);
    problems.push_back(p);
  }
  auto set_carried = [&] {
    for (const ModelConstant* c : carried) models.set_value(c->id, models.find(c->provenance.carried_from)->value);
  };
  for (Problem& p : problems)
    if (p.rows.empty()) models.set_value(p.constant->id, *p.constant->provenance.prior);
  std::map<std::string, std::vector<double>> residuals =
      solve_in_sweeps(models, problems, solver, report, set_carried, left_out);
  set_carried();
  for (Problem& p : problems) {
    SolvedConstant s;
    s.id = p.constant->id;
    s.old_value = committed[s.id];
    s.value = models.find(s.id)->value;
    for (const ValidationRow& row : p.rows) s.rows.push_back(row.id);
    s.method = p.rows.empty() ? "prior" : p.rows.size() == 1 ? "exact" : "least_squares";
    if (!p.rows.empty()) {
      if (left_out.empty()) check_fit(p, residuals[s.id], s.value);
      s.residual = std::round(rms(residuals[s.id]) * 1e6) / 1e6;
    }
    if (left_out.empty()) models.set_solution(s.id, s.rows, s.method, s.residual);
    report.constants.push_back(s);
  }
  for (const ModelConstant* c : carried) {
    SolvedConstant s;
    s.id = c->id;
    s.old_value = committed[s.id];
    s.value = models.find(s.id)->value;
    s.method = "carried";
    report.constants.push_back(s);
  }
  return report;
}

CalibrationReport calibrate_chosen(ModelSet& models, const std::vector<ValidationRow>& rows, const PredictEach& predict) {
  CalibrationReport report;
  Solver solver(models, predict, report);
  std::vector<Problem> problems;
  std::map<std::string, double> committed;
  for (const ModelConstant& c : models.constants()) {
    Problem p;
    p.constant = &c;
    for (const ValidationRow& row : rows)
      if (row.pins == c.id) p.rows.push_back(row);
    if (p.rows.empty()) continue;
    committed[c.id] = c.value;
    problems.push_back(p);
  }
  for (const ValidationRow& row : rows)
    if (models.find(row.pins) == nullptr)
      throw InputError(row.where.file, row.where.pointer + "/pins", "'" + row.pins + "' is no constant of the models");
  if (problems.empty()) return report;
  std::map<std::string, std::vector<double>> residuals = solve_in_sweeps(models, problems, solver, report, [] {}, "");
  for (Problem& p : problems) {
    SolvedConstant s;
    s.id = p.constant->id;
    s.old_value = committed[s.id];
    s.value = models.find(s.id)->value;
    for (const ValidationRow& row : p.rows) s.rows.push_back(row.id);
    s.method = p.rows.size() == 1 ? "exact" : "least_squares";
    s.residual = std::round(rms(residuals[s.id]) * 1e6) / 1e6;
    report.constants.push_back(s);
  }
  return report;
}

}  // namespace topsim
