// topsim compute --shapes FILE: the kernel model's time of every row of a kernel table on one GPU,
// in the table's order, beside the measured time when the table has one.
#include <stdexcept>

#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

constexpr double kSecondsPerUs = 1e-6;

// Columns that hold names; the rest are numbers (JSON writes them as numbers).
bool text_column(const std::string& column) {
  for (const char* name : {"gpu", "device", "framework", "version", "kernel_source", "gemm_dtype", "attn_dtype",
                           "kv_cache_dtype"})
    if (column == name) return true;
  return false;
}

Cell json_cell(const std::string& column, const std::string& text) {
  if (text_column(column)) return text;
  if (column == "latency_us") return std::stod(text);
  return std::stoll(text);
}

}  // namespace

std::string shapes_report(Context& context, const KernelCommandArgs& args) {
  Format format = parse_format(args.format);
  KernelTable table = load_kernel_table(args.files.at(0));
  const Catalog& catalog = context.workspace().catalog();
  const GpuModel* gpu = nullptr;
  try {
    gpu = &catalog.gpu(args.gpu, {});
  } catch (const InputError& e) {
    throw UsageError("--gpu: " + e.message());
  }
  const ComputeModel& model = catalog.compute(gpu->architecture, gpu->where);
  bool measured = std::find(table.header.begin(), table.header.end(), "latency_us") != table.header.end();
  std::vector<Column> columns;
  if (format == Format::json) columns.push_back({"time_s", 9});
  for (const std::string& column : table.header) columns.push_back({column});
  if (format != Format::json) {
    columns.push_back({"predicted_us", 3});
    if (measured) columns.push_back({"error_pct", 1});
  }
  Table out(columns);
  for (const KernelTable::Row& row : table.rows) {
    std::string key = kernel_group_key(row.row.family, kernel_row_dtype(row.row));
    auto constants = model.kernels.find(key);
    if (constants == model.kernels.end())
      throw InputError(table.file, std::to_string(row.line),
                       gpu->name + " (" + gpu->architecture + ") has no " + key +
                           " constants in models/compute.json; it has: " + committed_groups(model));
    double time_s = 0;
    try {
      time_s = predict_kernel_s(*gpu, constants->second, row.row);
    } catch (const std::invalid_argument& e) {
      throw InputError(table.file, std::to_string(row.line), gpu->name + " cannot run this row: " + e.what());
    }
    std::vector<Cell> cells;
    if (format == Format::json) {
      cells.push_back(time_s);
      for (std::size_t c = 0; c < table.header.size(); ++c) cells.push_back(json_cell(table.header[c], row.cells[c]));
    } else {
      cells.assign(row.cells.begin(), row.cells.end());
      cells.push_back(time_s / kSecondsPerUs);
      if (measured) cells.push_back(100 * kernel_error(time_s, row.row.measured_s));
    }
    out.add_row(cells);
  }
  return out.render(format);
}

}  // namespace topsim
