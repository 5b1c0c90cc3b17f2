#pragma once
// Robust least squares for kernel constants: Levenberg-Marquardt over the parameters (in log space
// where a parameter's lower bound is positive), each kept within its [lower, upper], on residuals
// r = log(predicted / measured) under a soft-L1 loss, so a few odd rows of a table do not pull
// the constants that fit the rest. Deterministic: the same inputs give the same bits.
#include <cstddef>
#include <functional>
#include <vector>

#include "compute/kernel_fit.hpp"

namespace topsim {

struct FitProblem {
  std::vector<KernelParameter> parameters;  ///< bounds, and the prior where `start` is empty
  std::vector<double> start;                ///< starting values (committed constants); empty: the priors
  std::size_t rows = 0;
  std::vector<double> measured;             ///< per row, > 0 (seconds)
  /// The model's time of row `row` with constants `values` (seconds, > 0).
  std::function<double(const std::vector<double>& values, std::size_t row)> predict;
};

struct FitResult {
  std::vector<double> values;
  double loss = 0;        ///< sum over rows of rho(r) at `values`
  double start_loss = 0;  ///< the same at the start
  int iterations = 0;   ///< accepted steps
};

/// Soft-L1 loss scale of the residual log(predicted / measured): about 10% error, past which a
/// row's pull grows like |r| rather than r^2.
constexpr double kFitLossScale = 0.1;

/// rho(r) = 2 s^2 (sqrt(1 + (r/s)^2) - 1), s = kFitLossScale: r^2 near 0, 2 s |r| far out.
double soft_l1(double residual);

/// Minimises sum_rows rho(log(predict / measured)). std::invalid_argument when the problem is
/// malformed (lengths, bounds, a start outside them, a prediction that is not positive).
FitResult fit_constants(const FitProblem& problem);

}  // namespace topsim
