#include "study/data_dir.hpp"

#include <filesystem>

#include "util/error.hpp"

namespace topsim {

namespace {

bool holds_models(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(std::filesystem::path(dir) / "models", ec);
}

}  // namespace

DataDir find_data_dir(const DataDirSearch& search) {
  DataDir found;
  if (!search.env.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(search.env, ec))
      throw InputError(search.env, "",
                       "TOPSIM_DATA_DIR names no directory (it must hold models/, topologies/ and scenarios/; unset it "
                       "to use the installed or built-in data)");
    found.path = search.env;
    found.origin = "TOPSIM_DATA_DIR";
    return found;
  }
  std::string tried;
  if (!search.executable.empty() && !search.install_relative.empty()) {
    std::filesystem::path prefix =
        (std::filesystem::path(search.executable).parent_path() / search.install_relative).lexically_normal();
    if (holds_models(prefix.string())) {
      found.path = prefix.string();
      found.origin = "install prefix";
      return found;
    }
    tried += prefix.string() + " (the install prefix: no models/)";
  }
  if (!search.source_tree.empty()) {
    if (holds_models(search.source_tree)) {
      found.path = search.source_tree;
      found.origin = "source tree";
      return found;
    }
    tried += (tried.empty() ? "" : ", ") + search.source_tree + " (the source tree it was built from: no models/)";
  }
  found.tried = tried.empty() ? "nowhere (no binary path and no source tree known)" : tried;
  return found;
}

}  // namespace topsim
