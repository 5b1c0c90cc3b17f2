#include "compute/kernel_calibration.hpp"

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace topsim {

namespace {

// The seed of the folds: a fixed string, so that folds never move between runs or machines.
constexpr const char* kKernelFoldSeed = "20261206|";

std::string shape_number(double value) { return std::to_string(static_cast<long long>(value)); }

// Runs task(0..count-1) on `threads` threads, each index once; the results are placed by index,
// so the output does not depend on the schedule.
void for_each_task(std::size_t count, int threads, const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (std::size_t i = next++; i < count; i = next++) task(i);
  };
  std::size_t extra = std::min<std::size_t>(count, static_cast<std::size_t>(std::max(threads, 1))) - (count > 0);
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto guarded = [&]() {
    try {
      worker();
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  for (std::size_t t = 0; t < extra; ++t) pool.emplace_back(guarded);
  guarded();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

std::string kernel_shape_key(const KernelRow& row) {
  if (row.family == KernelFamily::gemm)
    return row.gemm.dtype + "|" + shape_number(row.gemm.m) + "|" + shape_number(row.gemm.n) + "|" + shape_number(row.gemm.k);
  const AttentionShape& a = row.attention;
  bool prefill = a.phase == KernelFamily::prefill;
  return a.dtype + "|" + a.kv_dtype + "|" + shape_number(a.batch) + "|" + shape_number(prefill ? a.q_len : 1) + "|" +
         shape_number(prefill ? 0 : a.kv_len) + "|" + shape_number(a.heads) + "|" + shape_number(a.kv_heads) + "|" +
         shape_number(a.head_dim);
}

std::uint64_t fnv1a_64(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;  // FNV-1a 64-bit prime
  }
  return hash;
}

int kernel_fold(const KernelRow& row, int folds) {
  return static_cast<int>(fnv1a_64(kKernelFoldSeed + kernel_shape_key(row)) % static_cast<std::uint64_t>(folds));
}

FitResult fit_kernel_group(const KernelGroup& group, const std::vector<bool>& keep) {
  std::vector<const KernelSample*> rows;
  for (std::size_t i = 0; i < group.samples.size(); ++i)
    if (keep.empty() || keep[i]) rows.push_back(&group.samples[i]);
  FitProblem problem;
  problem.parameters = kernel_parameters(group.family);
  problem.start = group.start;
  problem.rows = rows.size();
  for (const KernelSample* s : rows) problem.measured.push_back(s->row.measured_s);
  problem.predict = [&rows](const std::vector<double>& values, std::size_t i) {
    return predict_kernel_s(*rows[i]->gpu, KernelConstants{values}, rows[i]->row);
  };
  return fit_constants(problem);
}

std::vector<FitResult> fit_kernel_groups(const std::vector<KernelGroup>& groups, int threads) {
  std::vector<FitResult> results(groups.size());
  for_each_task(groups.size(), threads, [&](std::size_t g) { results[g] = fit_kernel_group(groups[g]); });
  return results;
}

std::vector<std::vector<double>> cross_validated_times(const std::vector<KernelGroup>& groups, int folds, int threads) {
  std::vector<std::vector<int>> fold_of(groups.size());
  std::vector<std::vector<double>> times(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const KernelSample& s : groups[g].samples) fold_of[g].push_back(kernel_fold(s.row, folds));
    times[g].assign(groups[g].samples.size(), 0);
  }
  std::size_t tasks = groups.size() * static_cast<std::size_t>(folds);
  for_each_task(tasks, threads, [&](std::size_t task) {
    std::size_t g = task / folds;
    int fold = static_cast<int>(task % folds);
    const KernelGroup& group = groups[g];
    std::vector<bool> keep(group.samples.size());
    bool any = false;
    for (std::size_t i = 0; i < keep.size(); ++i) {
      keep[i] = fold_of[g][i] != fold;
      any = any || !keep[i];
    }
    if (!any) return;  // no row of this group in this fold
    FitResult fit = fit_kernel_group(group, keep);
    KernelConstants constants{fit.values};
    for (std::size_t i = 0; i < keep.size(); ++i)
      if (!keep[i]) times[g][i] = predict_kernel_s(*group.samples[i].gpu, constants, group.samples[i].row);
  });
  return times;
}

}  // namespace topsim
