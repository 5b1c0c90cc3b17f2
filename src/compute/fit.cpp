#include "compute/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace topsim {

namespace {

// Stopping and step rules of the Levenberg-Marquardt loop. Chosen for constants that are read to 4
// significant digits: a relative loss change of 1e-12 or a step of 1e-10 (log space, relative)
// leaves nothing to print.
constexpr int kFitMaxIterations = 200;
constexpr int kFitMaxRejections = 12;     ///< damping raised this many times in a row without progress
constexpr double kFitLossTolerance = 1e-12;
constexpr double kFitStepTolerance = 1e-10;
constexpr double kFitDampingStart = 1e-3;
constexpr double kFitDampingUp = 10;
constexpr double kFitDampingDown = 0.3;
constexpr double kFitDifferenceStep = 1e-6;  ///< forward difference, in the search variable

// A parameter is searched as log(value) when its lower bound is positive (scale-free: fractions
// and times alike), else linearly in units of its range.
struct FitAxis {
  bool log = false;
  double lower = 0, upper = 0;
  double range() const { return upper > lower ? upper - lower : 1; }
  double to_search(double value) const { return log ? std::log(value) : (value - lower) / range(); }
  double to_value(double x) const { return log ? std::exp(x) : lower + x * range(); }
  double low() const { return to_search(lower); }
  double high() const { return to_search(upper); }
};

class Fitter {
 public:
  explicit Fitter(const FitProblem& problem) : p_(problem) {
    if (p_.measured.size() != p_.rows) throw std::invalid_argument("fit: measured has the wrong length");
    if (!p_.predict) throw std::invalid_argument("fit: no model");
    for (const KernelParameter& k : p_.parameters) {
      if (!(k.lower <= k.upper)) throw std::invalid_argument("fit: " + k.name + " has lower > upper");
      axes_.push_back({k.lower > 0, k.lower, k.upper});
    }
    for (double m : p_.measured)
      if (!(m > 0)) throw std::invalid_argument("fit: a measured time is not positive");
  }

  FitResult run() {
    std::size_t count = p_.parameters.size();
    std::vector<double> x(count);
    for (std::size_t j = 0; j < count; ++j) {
      double v = p_.start.empty() ? p_.parameters[j].prior : p_.start.at(j);
      const KernelParameter& k = p_.parameters[j];
      if (!(v >= k.lower && v <= k.upper))
        throw std::invalid_argument("fit: start " + std::to_string(v) + " of " + k.name + " is outside [" +
                                    std::to_string(k.lower) + ", " + std::to_string(k.upper) + "]");
      x[j] = axes_[j].to_search(v);
    }
    FitResult result;
    std::vector<double> r = residuals(x);
    double loss = total(r);
    result.start_loss = loss;
    double damping = kFitDampingStart;
    int rejections = 0;
    std::vector<std::vector<double>> jacobian(count, std::vector<double>(p_.rows));
    while (result.iterations < kFitMaxIterations && count > 0 && p_.rows > 0) {
      fill_jacobian(x, r, jacobian);
      // IRLS: soft-L1's weight psi(r)/r = 1/sqrt(1 + (r/s)^2) turns each step into a weighted
      // Gauss-Newton step; Levenberg-Marquardt damps it on the diagonal.
      std::vector<double> weight(p_.rows);
      for (std::size_t i = 0; i < p_.rows; ++i) weight[i] = 1 / std::sqrt(1 + std::pow(r[i] / kFitLossScale, 2));
      std::vector<double> normal(count * count, 0), gradient(count, 0);
      for (std::size_t a = 0; a < count; ++a) {
        for (std::size_t i = 0; i < p_.rows; ++i) gradient[a] += jacobian[a][i] * weight[i] * r[i];
        for (std::size_t b = 0; b <= a; ++b) {
          double sum = 0;
          for (std::size_t i = 0; i < p_.rows; ++i) sum += jacobian[a][i] * weight[i] * jacobian[b][i];
          normal[a * count + b] = normal[b * count + a] = sum;
        }
      }
      // A parameter at a bound that the descent direction pushes outward is held there, so that
      // the others move freely (a projected step would otherwise stall the search).
      std::vector<bool> held(count, false);
      for (std::size_t j = 0; j < count; ++j)
        held[j] = (x[j] <= axes_[j].low() && gradient[j] > 0) || (x[j] >= axes_[j].high() && gradient[j] < 0);
      bool accepted = false;
      double step_size = 0;
      while (rejections < kFitMaxRejections) {
        std::vector<double> trial = x;
        std::vector<double> step = solve_damped(normal, gradient, held, damping, count);
        step_size = 0;
        for (std::size_t j = 0; j < count; ++j) {
          trial[j] = std::clamp(x[j] - step[j], axes_[j].low(), axes_[j].high());
          step_size = std::max(step_size, std::abs(trial[j] - x[j]));
        }
        std::vector<double> trial_r = residuals(trial);
        double trial_loss = total(trial_r);
        if (trial_loss < loss) {
          double gain = (loss - trial_loss) / std::max(loss, std::numeric_limits<double>::min());
          x = trial;
          r = std::move(trial_r);
          loss = trial_loss;
          damping = std::max(damping * kFitDampingDown, 1e-12);
          rejections = 0;
          accepted = true;
          ++result.iterations;
          if (gain < kFitLossTolerance) step_size = 0;
          break;
        }
        damping *= kFitDampingUp;
        ++rejections;
        if (step_size < kFitStepTolerance) break;
      }
      if (!accepted || step_size < kFitStepTolerance || loss == 0) break;
    }
    for (std::size_t j = 0; j < count; ++j)
      result.values.push_back(std::clamp(axes_[j].to_value(x[j]), p_.parameters[j].lower, p_.parameters[j].upper));
    result.loss = loss;
    return result;
  }

 private:
  std::vector<double> values_of(const std::vector<double>& x) const {
    std::vector<double> values(x.size());
    for (std::size_t j = 0; j < x.size(); ++j)
      values[j] = std::clamp(axes_[j].to_value(x[j]), p_.parameters[j].lower, p_.parameters[j].upper);
    return values;
  }

  std::vector<double> residuals(const std::vector<double>& x) const {
    std::vector<double> values = values_of(x);
    std::vector<double> r(p_.rows);
    for (std::size_t i = 0; i < p_.rows; ++i) {
      double predicted = p_.predict(values, i);
      if (!(predicted > 0) || !std::isfinite(predicted))
        throw std::invalid_argument("fit: the model predicts " + std::to_string(predicted) + " s for row " +
                                    std::to_string(i));
      r[i] = std::log(predicted / p_.measured[i]);
    }
    return r;
  }

  static double total(const std::vector<double>& r) {
    double sum = 0;
    for (double v : r) sum += soft_l1(v);
    return sum;
  }

  // Forward differences, stepping backwards where the forward step would leave the bounds.
  void fill_jacobian(const std::vector<double>& x, const std::vector<double>& r,
                     std::vector<std::vector<double>>& jacobian) const {
    for (std::size_t j = 0; j < x.size(); ++j) {
      std::vector<double> moved = x;
      double h = moved[j] + kFitDifferenceStep > axes_[j].high() ? -kFitDifferenceStep : kFitDifferenceStep;
      moved[j] += h;
      std::vector<double> shifted = residuals(moved);
      for (std::size_t i = 0; i < p_.rows; ++i) jacobian[j][i] = (shifted[i] - r[i]) / h;
    }
  }

  // (N + damping diag(N)) step = gradient by Gaussian elimination with partial pivoting; a
  // parameter the rows do not move (a zero column) gets no step.
  static std::vector<double> solve_damped(const std::vector<double>& normal, const std::vector<double>& gradient,
                                          const std::vector<bool>& held, double damping, std::size_t n) {
    std::vector<double> a(n * (n + 1));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) a[i * (n + 1) + j] = held[i] || held[j] ? 0 : normal[i * n + j];
      double diagonal = normal[i * n + i];
      a[i * (n + 1) + i] = held[i] ? 1 : a[i * (n + 1) + i] + damping * (diagonal > 0 ? diagonal : 1);
      a[i * (n + 1) + n] = held[i] ? 0 : gradient[i];
    }
    for (std::size_t c = 0; c < n; ++c) {
      std::size_t pivot = c;
      for (std::size_t i = c + 1; i < n; ++i)
        if (std::abs(a[i * (n + 1) + c]) > std::abs(a[pivot * (n + 1) + c])) pivot = i;
      if (pivot != c)
        for (std::size_t j = 0; j <= n; ++j) std::swap(a[c * (n + 1) + j], a[pivot * (n + 1) + j]);
      double head = a[c * (n + 1) + c];
      if (head == 0) continue;
      for (std::size_t i = c + 1; i < n; ++i) {
        double f = a[i * (n + 1) + c] / head;
        for (std::size_t j = c; j <= n; ++j) a[i * (n + 1) + j] -= f * a[c * (n + 1) + j];
      }
    }
    std::vector<double> step(n, 0);
    for (std::size_t c = n; c-- > 0;) {
      double head = a[c * (n + 1) + c];
      if (head == 0) continue;
      double sum = a[c * (n + 1) + n];
      for (std::size_t j = c + 1; j < n; ++j) sum -= a[c * (n + 1) + j] * step[j];
      step[c] = sum / head;
    }
    return step;
  }

  const FitProblem& p_;
  std::vector<FitAxis> axes_;
};

}  // namespace

double soft_l1(double residual) {
  double s = kFitLossScale;
  return 2 * s * s * (std::sqrt(1 + std::pow(residual / s, 2)) - 1);
}

FitResult fit_constants(const FitProblem& problem) { return Fitter(problem).run(); }

}  // namespace topsim
