#pragma once
// Shared by the fuzz harnesses: the bundled catalog and servers (read once per process), and the
// rule every harness applies: topsim's expected errors (bad input, bad usage, unparsable values)
// are the right answer to a bad file; anything else that escapes (logic_error, out_of_range,
// bad_alloc, a sanitizer report) is a bug and must reach libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io/io.hpp"
#include "util/error.hpp"

namespace topsim::fuzz {

/// Largest expanded cluster a harness builds (devices); see fuzz_topology.cpp.
constexpr std::size_t max_built_devices = 2048;

inline std::string data_path(const std::string& relative) { return std::string(TOPSIM_DATA_DIR) + "/" + relative; }

inline const Catalog& catalog() {
  static const Catalog models = load_catalog(data_path("models"));
  return models;
}

/// Every bundled server (not clusters), in name order, as `topsim import` sees them.
inline const std::vector<TopologySpec>& bundled_servers() {
  static const std::vector<TopologySpec> servers = [] {
    std::vector<std::string> paths;
    for (const auto& entry : std::filesystem::directory_iterator(data_path("topologies")))
      if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    std::vector<TopologySpec> out;
    for (const std::string& path : paths)
      if (!is_cluster_file(path)) out.push_back(load_topology_spec(path));
    return out;
  }();
  return servers;
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `action`, swallowing only the errors that mean "this input is invalid".
template <typename Action>
int expect_valid_or_input_error(Action&& action) {
  try {
    action();
  } catch (const InputError&) {
  } catch (const UsageError&) {
  } catch (const ParseError&) {
  }
  return 0;
}

}  // namespace topsim::fuzz
