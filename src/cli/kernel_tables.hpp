#pragma once
// What calibrate --kernels, validate --kernels and compute --shapes share: kernel tables read,
// their rows put on modelled GPUs (by the table's device column, or --gpu for all), grouped by
// (architecture, family, dtype), and the guide's error metric over them.
#include <string>
#include <vector>

#include "compute/kernel_calibration.hpp"
#include "model/catalog.hpp"
#include "model/kernel_table.hpp"

namespace topsim {

/// Every file read (io/load_kernel_table); `measured`: each must carry latency_us (InputError otherwise).
std::vector<KernelTable> load_kernel_tables(const std::vector<std::string>& files, bool measured);

/// The GPU model a row ran on: `gpu` (the --gpu option) when given, else the model whose
/// device_names print as the row's device. InputError naming file:line when none or several do.
const GpuModel& kernel_row_gpu(const Catalog& catalog, const KernelTable& table, const KernelTable::Row& row,
                               const std::string& gpu);

/// Where a group's sample came from: tables[table].rows[row].
struct KernelOrigin {
  std::size_t table = 0, row = 0;
};

struct KernelGroups {
  std::vector<KernelGroup> groups;                ///< in the order their first row is read
  std::vector<std::vector<KernelOrigin>> origin;  ///< per group, per sample
  std::vector<std::string> notes;                 ///< rows left out, and why (stderr)
};

/// The rows of `tables` grouped by (architecture, family, dtype), each group starting from the
/// architecture's committed constants (ComputeModel::kernels), else the family's priors.
/// `committed_only`: rows whose group has no committed constants are left out with a note, or
/// are an InputError when `gpu` (--gpu) named their GPU. Every row is predicted once with its
/// start constants here, so that a GPU that cannot run a row (no peak for its dtype) is an
/// InputError naming the row rather than a failure inside a fit.
KernelGroups group_kernel_rows(const Catalog& catalog, const std::vector<KernelTable>& tables, const std::string& gpu,
                               bool committed_only);

/// "gemm/bf16, prefill/bf16" of an architecture's committed groups, or "none".
std::string committed_groups(const ComputeModel& model);

/// predicted / measured - 1.
inline double kernel_error(double predicted_s, double measured_s) { return predicted_s / measured_s - 1; }

/// The file part of a path ("gemm-h100_sxm.csv"): how sources name kernel tables.
std::string kernel_table_name(const std::string& path);

}  // namespace topsim

namespace topsim {

struct Context;

/// What the --kernels forms of calibrate and validate and compute --shapes are given.
struct KernelCommandArgs {
  std::vector<std::string> files;  ///< kernel tables (calibrate, validate) or the one --shapes file
  std::string gpu;                 ///< --gpu: every row on this model; "" maps rows by their device
  std::string format;
  int threads = 1;                 ///< fits at once (-j)
  bool check = false;              ///< calibrate --check
  int folds = 5;                   ///< validate --folds
};

/// calibrate --kernels: every group fitted on all its rows and written into models/compute.json
/// ("kernels"); with check, nothing is written and ExitStatus 1 lists the groups that differ.
void run_kernel_calibration(Context& context, const KernelCommandArgs& args);

/// validate --kernels: per GPU, family and dtype (then size class), the error of the committed
/// constants (calibration) and of a k-fold by shape (check).
std::string kernel_validation_report(Context& context, const KernelCommandArgs& args);

/// compute --shapes: one prediction per row of one table, in order.
std::string shapes_report(Context& context, const KernelCommandArgs& args);

}  // namespace topsim
