#pragma once
// Kernel constants solved from measured kernel tables: rows grouped by (architecture, family,
// dtype), each group fitted on its rows (compute/fit.hpp), and cross-validated by shape: a row's
// fold is drawn from its shape alone, so the same shape on two GPUs lands in the same fold.
#include <cstdint>
#include <string>
#include <vector>

#include "compute/fit.hpp"
#include "compute/kernel_fit.hpp"

namespace topsim {

/// One measured kernel on a modelled GPU.
struct KernelSample {
  const GpuModel* gpu = nullptr;
  KernelRow row;  ///< measured_s > 0
};

/// The rows of one (architecture, family, dtype) and the constants a fit starts from.
struct KernelGroup {
  std::string architecture;
  KernelFamily family = KernelFamily::gemm;
  std::string dtype;
  std::vector<double> start;  ///< committed constants, else the family's priors
  std::vector<KernelSample> samples;

  std::string key() const { return kernel_group_key(family, dtype); }
};

/// The row's shape without the GPU: gemm "dtype|m|n|k"; attention
/// "dtype|kv_dtype|batch|isl|step|heads|kv_heads|head_dim" (isl and step as the tables write
/// them: prefill isl = q_len, step 0; decode isl 1, step = kv_len), dtypes in topsim's names.
std::string kernel_shape_key(const KernelRow& row);

/// FNV-1a, 64 bits, of the bytes of `text`.
std::uint64_t fnv1a_64(const std::string& text);

/// The row's cross-validation fold in [0, folds): FNV-1a-64 of "20261206|" + its shape key, mod folds.
int kernel_fold(const KernelRow& row, int folds);

/// The group's constants fitted on every row whose `keep` is true (all rows when `keep` is empty).
FitResult fit_kernel_group(const KernelGroup& group, const std::vector<bool>& keep = {});

/// Every group fitted on all its rows, `threads` at a time; in the order of `groups`.
std::vector<FitResult> fit_kernel_groups(const std::vector<KernelGroup>& groups, int threads);

/// Per group and row, the time predicted with constants fitted on the other folds of its group
/// (each fit starting from the group's start): the check prediction of a k-fold by shape.
/// (group, fold) fits run `threads` at a time.
std::vector<std::vector<double>> cross_validated_times(const std::vector<KernelGroup>& groups, int folds, int threads);

}  // namespace topsim
