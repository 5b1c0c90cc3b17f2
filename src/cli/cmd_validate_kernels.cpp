// topsim validate --kernels: the kernel model against measured kernel tables, per GPU, family,
// dtype and size class: in-sample with the committed constants (calibration), and held out by
// a k-fold over shapes (check).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>

#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/validation.hpp"

namespace topsim {

namespace {

constexpr double kGiga = 1e9;
// GEMM size classes by 2 m n k: launch- and latency-bound, mid, and large (math-bound) kernels.
constexpr double kSmallGemmFlops = 1 * kGiga;
constexpr double kMidGemmFlops = 100 * kGiga;

std::string size_class(const KernelRow& row) {
  if (row.family != KernelFamily::gemm) return family_name(row.family);
  double flops = 2 * row.gemm.m * row.gemm.n * row.gemm.k;
  return flops < kSmallGemmFlops ? "<1GFLOP" : flops < kMidGemmFlops ? "<100GFLOP" : ">=100GFLOP";
}

struct ClassErrors {
  std::vector<double> calibration, check;
  double worst = -1;
  std::string worst_row;  ///< file:line of the worst check row
};

}  // namespace

std::string kernel_validation_report(Context& context, const KernelCommandArgs& args) {
  std::vector<KernelTable> tables = load_kernel_tables(args.files, true);
  const Catalog& catalog = context.workspace().catalog();
  KernelGroups groups = group_kernel_rows(catalog, tables, args.gpu, true);
  std::vector<std::vector<double>> check = cross_validated_times(groups.groups, args.folds, args.threads);

  // (gpu, family, dtype, class) in the order first read; class "all" is the headline.
  std::vector<std::vector<std::string>> order;
  std::map<std::vector<std::string>, ClassErrors> errors;
  std::size_t rows = 0;
  std::map<std::string, int> gpus;
  for (std::size_t g = 0; g < groups.groups.size(); ++g) {
    const KernelGroup& group = groups.groups[g];
    KernelConstants committed{group.start};
    for (std::size_t i = 0; i < group.samples.size(); ++i) {
      const KernelSample& s = group.samples[i];
      const KernelOrigin& o = groups.origin[g][i];
      double calibration = kernel_error(predict_kernel_s(*s.gpu, committed, s.row), s.row.measured_s);
      double held_out = kernel_error(check[g][i], s.row.measured_s);
      ++rows;
      ++gpus[s.gpu->name];
      for (const std::string& cls : {std::string("all"), size_class(s.row)}) {
        std::vector<std::string> key = {s.gpu->name, family_name(group.family), group.dtype, cls};
        auto [it, added] = errors.try_emplace(key);
        if (added) order.push_back(key);
        it->second.calibration.push_back(calibration);
        it->second.check.push_back(held_out);
        if (std::abs(held_out) > it->second.worst) {
          it->second.worst = std::abs(held_out);
          it->second.worst_row = kernel_table_name(tables[o.table].file) + ":" + std::to_string(tables[o.table].rows[o.row].line);
        }
      }
    }
  }
  // By GPU, then gemm, prefill, decode; dtypes and classes in the order read.
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    auto rank = [](const std::string& family) {
      return family == family_name(KernelFamily::gemm) ? 0 : family == family_name(KernelFamily::prefill) ? 1 : 2;
    };
    return std::make_pair(a[0], rank(a[1])) < std::make_pair(b[0], rank(b[1]));
  });
  Table table({{"gpu"}, {"family"}, {"dtype"}, {"class"}, {"rows"}, {"calibration_pct", 1}, {"check_pct", 1},
               {"check_median_pct", 1}, {"check_worst_pct", 1}, {"worst_row"}});
  // Headlines first, then the size classes (attention's class is its phase: the headline again).
  for (bool headline : {true, false})
    for (const auto& key : order) {
      if ((key[3] == "all") != headline || (!headline && key[1] != family_name(KernelFamily::gemm))) continue;
      const ClassErrors& e = errors.at(key);
      AccuracySummary calibration = accuracy_of(e.calibration), held_out = accuracy_of(e.check);
      table.add_row({key[0], key[1], key[2], key[3], static_cast<long long>(e.check.size()),
                     100 * calibration.geomean_error, 100 * held_out.geomean_error, 100 * held_out.median_abs_error,
                     100 * held_out.worst_abs_error, e.worst_row});
    }
  Format format = args.format == "markdown" ? Format::table : parse_format(args.format);
  for (const std::string& note : groups.notes) std::cerr << "note: " << note << "\n";
  std::string about =
      std::to_string(rows) + " kernel rows on " + std::to_string(gpus.size()) + (gpus.size() == 1 ? " GPU" : " GPUs") + ". Errors in the guide's metric, " +
      "geo-mean(1+|error|)-1. calibration: every row with the committed constants of models/compute.json (in-sample). " +
      "check: " + std::to_string(args.folds) + "-fold by shape (fold = FNV-1a-64 of \"20261206|\" + the shape, mod " +
      std::to_string(args.folds) + "), each row predicted with constants fitted without its fold; median and worst " +
      "|error| of the check rows.\n";
  if (args.format == "markdown") return table.to_markdown() + "\n" + about;
  std::string out = table.render(format);
  return format == Format::table ? out + "\n" + about : out;
}

}  // namespace topsim
