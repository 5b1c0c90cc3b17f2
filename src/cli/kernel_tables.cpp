#include "cli/kernel_tables.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>
#include <tuple>

#include "interop/gpu_names.hpp"
#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

std::vector<KernelTable> load_kernel_tables(const std::vector<std::string>& files, bool measured) {
  std::vector<KernelTable> tables;
  for (const std::string& file : files) {
    tables.push_back(load_kernel_table(file));
    const auto& header = tables.back().header;
    if (measured && std::find(header.begin(), header.end(), "latency_us") == header.end())
      throw InputError(file, "1", "no latency_us column: calibrating and validating need measured rows");
  }
  return tables;
}

const GpuModel& kernel_row_gpu(const Catalog& catalog, const KernelTable& table, const KernelTable::Row& row,
                               const std::string& gpu) {
  if (!gpu.empty()) {
    try {
      return catalog.gpu(gpu, {});
    } catch (const InputError& e) {
      throw UsageError("--gpu: " + e.message());
    }
  }
  std::string where = std::to_string(row.line);
  if (row.device.empty())
    throw InputError(table.file, where, "the table has no device column; give --gpu MODEL");
  std::vector<const GpuModel*> exact;
  for (const auto& entry : catalog.gpus())
    if (gpu_prints_as(entry.second, row.device)) exact.push_back(&entry.second);
  if (exact.size() == 1) return *exact.front();
  std::vector<std::string> names;
  for (const GpuModel* m : exact) names.push_back(m->name);
  if (!exact.empty())
    throw InputError(table.file, where, "column device: '" + row.device + "' is printed by " + join(names, ", ") +
                                            "; give --gpu MODEL");
  names = gpu_models_printing(catalog, row.device);
  throw InputError(table.file, where,
                   "column device: no GPU model of models/gpus.json prints as '" + row.device + "' (device_names)" +
                       (names.empty() ? std::string() : "; the same chip: " + join(names, ", ")) +
                       "; give --gpu MODEL");
}

std::string committed_groups(const ComputeModel& model) {
  std::vector<std::string> keys;
  for (const auto& entry : model.kernels) keys.push_back(entry.first);
  return keys.empty() ? std::string("none") : join(keys, ", ");
}

std::string kernel_table_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

KernelGroups group_kernel_rows(const Catalog& catalog, const std::vector<KernelTable>& tables, const std::string& gpu,
                               bool committed_only) {
  KernelGroups out;
  std::map<std::tuple<std::string, int, std::string>, std::size_t> index;
  std::map<std::string, std::size_t> skipped;  // "file: architecture group" -> rows left out
  // The device column maps the same names over and over: look each up once.
  std::map<std::string, const GpuModel*> by_device;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const KernelTable& table = tables[t];
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const KernelTable::Row& row = table.rows[r];
      const GpuModel*& model = by_device[gpu.empty() ? row.device : gpu];
      if (model == nullptr) model = &kernel_row_gpu(catalog, table, row, gpu);
      const ComputeModel& compute = catalog.compute(model->architecture, model->where);
      std::string dtype = kernel_row_dtype(row.row);
      std::string key = kernel_group_key(row.row.family, dtype);
      auto committed = compute.kernels.find(key);
      if (committed_only && committed == compute.kernels.end()) {
        if (!gpu.empty())
          throw InputError(table.file, std::to_string(row.line),
                           "--gpu " + gpu + " (" + model->architecture + ") has no " + key +
                               " constants in models/compute.json; it has: " + committed_groups(compute));
        ++skipped[kernel_table_name(table.file) + ": " + model->name + " (" + model->architecture + ") has no " + key];
        continue;
      }
      auto slot = std::make_tuple(model->architecture, static_cast<int>(row.row.family), dtype);
      auto found = index.find(slot);
      if (found == index.end()) {
        KernelGroup group;
        group.architecture = model->architecture;
        group.family = row.row.family;
        group.dtype = dtype;
        if (committed != compute.kernels.end()) group.start = committed->second.values;
        else
          for (const KernelParameter& p : kernel_parameters(row.row.family)) group.start.push_back(p.prior);
        found = index.emplace(slot, out.groups.size()).first;
        out.groups.push_back(group);
        out.origin.emplace_back();
      }
      KernelGroup& group = out.groups[found->second];
      try {
        predict_kernel_s(*model, KernelConstants{group.start}, row.row);
      } catch (const std::invalid_argument& e) {
        throw InputError(table.file, std::to_string(row.line), model->name + " cannot run this row: " + e.what());
      }
      group.samples.push_back({model, row.row});
      out.origin[found->second].push_back({t, r});
    }
  }
  for (const auto& [what, rows] : skipped)
    out.notes.push_back(what + " constants in models/compute.json: " + std::to_string(rows) + " rows left out");
  return out;
}

}  // namespace topsim
