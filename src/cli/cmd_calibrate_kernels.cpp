// topsim calibrate --kernels: the kernel model's constants per (architecture, family, dtype)
// solved from measured kernel tables and written into models/compute.json "kernels".
#include <algorithm>
#include <iostream>
#include <limits>

#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/validation.hpp"

namespace topsim {

namespace {

// The kernel model is piecewise (tile choice, waves), so a fit restarted from constants rounded to
// 4 digits may wander by a unit of the last digit without fitting better. Committed constants
// stay unless the fit lowers the loss by more than this fraction: calibrate is then idempotent
// and --check fails only when the rows or a real improvement say so.
constexpr double kKeepCommittedGain = 1e-3;

// "gemm-h100_sxm.csv (torch_flow), gemm-b200_sxm.csv (torch_flow, deepgemm)": the files of a
// group's rows with the kernels each timed, in the order read.
std::string group_files_text(const KernelGroups& groups, std::size_t g, const std::vector<KernelTable>& tables,
                             std::vector<std::string>& files) {
  std::vector<std::pair<std::string, std::vector<std::string>>> per_file;
  for (const KernelOrigin& o : groups.origin[g]) {
    std::string name = kernel_table_name(tables[o.table].file);
    auto it = std::find_if(per_file.begin(), per_file.end(), [&](const auto& f) { return f.first == name; });
    if (it == per_file.end()) it = per_file.insert(per_file.end(), {name, {}});
    std::vector<std::string>& sources = it->second;
    const std::string& source = tables[o.table].rows[o.row].kernel_source;
    if (!source.empty() && std::find(sources.begin(), sources.end(), source) == sources.end()) sources.push_back(source);
  }
  std::vector<std::string> parts;
  for (const auto& [name, sources] : per_file) {
    files.push_back(name);
    parts.push_back(name + (sources.empty() ? std::string() : " (" + join(sources, ", ") + ")"));
  }
  return join(parts, ", ");
}

}  // namespace

void run_kernel_calibration(Context& context, const KernelCommandArgs& args) {
  if (context.workspace().models_are_overlay())
    throw UsageError("--models " + context.models_dir + " is an overlay; calibrate --kernels writes a whole models folder");
  std::vector<KernelTable> tables = load_kernel_tables(args.files, true);
  const Catalog& catalog = context.workspace().catalog();
  KernelGroups groups = group_kernel_rows(catalog, tables, args.gpu, false);
  std::vector<FitResult> fits = fit_kernel_groups(groups.groups, args.threads);
  ModelSet committed = context.workspace().model_set();
  ModelSet models = committed;
  Table table({{"architecture"}, {"group"}, {"constant"}, {"old"}, {"new"}, {"rows"}, {"residual_pct", 2}});
  std::string differences;
  for (std::size_t g = 0; g < groups.groups.size(); ++g) {
    const KernelGroup& group = groups.groups[g];
    const std::vector<KernelParameter>& parameters = kernel_parameters(group.family);
    // The residual is the one of the constants as written (4 significant digits), as validate sees them.
    const ComputeModel& model = catalog.compute(group.architecture, {});
    auto old = model.kernels.find(group.key());
    bool keep = old != model.kernels.end() && old->second.values == group.start &&
                fits[g].start_loss - fits[g].loss <= kKeepCommittedGain * fits[g].start_loss;
    const std::vector<double>& solution = keep ? group.start : fits[g].values;
    std::vector<double> written;
    std::vector<std::pair<std::string, double>> named;
    for (std::size_t j = 0; j < parameters.size(); ++j) {
      written.push_back(std::stod(significant_text(solution[j], ModelSet::kSignificantDigits)));
      named.emplace_back(parameters[j].name, written.back());
    }
    std::vector<double> errors;
    for (const KernelSample& s : group.samples)
      errors.push_back(kernel_error(predict_kernel_s(*s.gpu, KernelConstants{written}, s.row), s.row.measured_s));
    KernelConstantSources sources;
    sources.rows = static_cast<long long>(group.samples.size());
    sources.residual = accuracy_of(errors).geomean_error;
    sources.fitted = "soft-L1 least squares (scale 0.1) of log(predicted/measured), Levenberg-Marquardt, over " + std::to_string(sources.rows) + " rows of " +
                     group_files_text(groups, g, tables, sources.files);
    models.set_kernel_group(group.architecture, group.key(), named, sources);
    for (std::size_t j = 0; j < parameters.size(); ++j) {
      double before = old == model.kernels.end() ? std::numeric_limits<double>::quiet_NaN() : old->second.values[j];
      table.add_row({group.architecture, group.key(), parameters[j].name,
                     old == model.kernels.end() ? std::string("-") : shortest(before), shortest(written[j]),
                     static_cast<long long>(sources.rows), 100 * sources.residual});
      if (before != written[j])
        differences += "  " + group.architecture + " " + group.key() + "." + parameters[j].name + ": " +
                       (old == model.kernels.end() ? std::string("none") : shortest(before)) + " -> " +
                       shortest(written[j]) + "\n";
    }
    auto was = model.kernel_sources.find(group.key());
    double residual = std::stod(significant_text(sources.residual, ModelSet::kSignificantDigits));
    if (was != model.kernel_sources.end() &&
        (was->second.rows != sources.rows || was->second.files != sources.files ||
         was->second.fitted != sources.fitted || was->second.residual != residual))
      differences += "  " + group.architecture + " " + group.key() + ".sources: rows " +
                     std::to_string(was->second.rows) + " -> " + std::to_string(sources.rows) + ", residual " +
                     shortest(was->second.residual) + " -> " + shortest(residual) + ", files [" +
                     join(was->second.files, ", ") + "] -> [" + join(sources.files, ", ") + "]\n";
  }
  Format format = parse_format(args.format);
  context.out = table.render(format);
  auto changed = models.changed_files();
  if (format == Format::table)
    context.out += "\n" + std::to_string(groups.groups.size()) + " groups fitted; " +
                   (changed.empty() ? std::string("models/compute.json already equals the solution")
                                    : std::string(args.check ? "models/compute.json differs" : "models/compute.json written")) +
                   "\n";
  for (const std::string& note : groups.notes) std::cerr << "note: " << note << "\n";
  if (args.check) {
    if (!changed.empty())
      throw ExitStatus(1, "committed kernel constants differ from what calibrate --kernels solves (run topsim calibrate "
                          "--kernels):\n" + differences);
    return;
  }
  for (const auto& [path, text] : changed) write_file_whole(path, text, "calibrate");
}

}  // namespace topsim
