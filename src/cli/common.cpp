#include "cli/common.hpp"

#include <filesystem>

#include "io/io.hpp"
#include "topology/flat.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

Catalog Context::catalog() const { return load_catalog(models()); }

std::string Context::topology_path(const std::string& path_or_name) const {
  std::error_code ec;
  if (std::filesystem::exists(path_or_name, ec)) return path_or_name;
  bool bare_name = path_or_name.find('/') == std::string::npos && path_or_name.find('.') == std::string::npos;
  std::string bundled = data_dir + "/topologies/" + path_or_name + ".json";
  if (bare_name && std::filesystem::exists(bundled, ec)) return bundled;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir + "/topologies", ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::string message = "no such file";
  if (bare_name) message = unknown_name_message("topology", path_or_name, names) + " (or give a path to a file)";
  throw InputError(path_or_name, "", message);
}

Topology Context::topology(const std::string& path_or_name) const {
  Catalog models = catalog();
  if (is_flat_name(path_or_name)) return Topology::build(flat_topology(path_or_name, models), models);
  return Topology::build(load_topology_spec(topology_path(path_or_name)), models);
}

double size_option(const std::string& text, const char* option) {
  try {
    return parse_cli_size_B(text);
  } catch (const ParseError& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
}

void add_format_option(CLI::App& command, std::string& format) {
  command.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->default_val("table");
}

}  // namespace topsim
