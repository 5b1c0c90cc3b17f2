#pragma once
// Shared test fixtures: bundled data by absolute path (never relative to the working directory),
// temporary files, and checks of error messages verbatim.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "io/io.hpp"
#include "topology/cluster.hpp"
#include "topology/topology.hpp"
#include "util/error.hpp"

namespace topsim::test {

inline std::string data_path(const std::string& relative) { return std::string(TOPSIM_DATA_DIR) + "/" + relative; }
inline std::string test_data(const std::string& relative) { return std::string(TOPSIM_TEST_DATA_DIR) + "/" + relative; }

inline const Catalog& catalog() {
  static const Catalog models = load_catalog(data_path("models"));
  return models;
}

/// The NCCL release line models/ runs by default.
inline const NcclVersion& nccl() { return catalog().nccl_version(""); }

/// Ranks 0..n-1: every GPU of a topology, in order.
inline std::vector<int> all_gpus(const Topology& t) {
  std::vector<int> gpus(static_cast<std::size_t>(t.gpu_count()));
  for (int g = 0; g < t.gpu_count(); ++g) gpus[static_cast<std::size_t>(g)] = g;
  return gpus;
}

inline Topology bundled(const std::string& name) {
  return Topology::build(load_topology_spec(data_path("topologies/" + name + ".json")), catalog());
}

/// A bundled server's spec replicated `nodes` times under its default fabric, as `--nodes` does
/// (before faults are applied to it).
inline TopologySpec replicated_spec(const std::string& name, int nodes, const std::string& nic = "", int nics_per_node = 0) {
  ScaleOut scale;
  scale.nodes = nodes;
  scale.nic = nic;
  scale.nics_per_node = nics_per_node;
  return replicate_server(load_topology_spec(data_path("topologies/" + name + ".json")), scale, catalog());
}

/// The same, built.
inline Topology replicated(const std::string& name, int nodes, const std::string& nic = "", int nics_per_node = 0) {
  return Topology::build(replicated_spec(name, nodes, nic, nics_per_node), catalog());
}

/// A file under a fresh temporary directory; returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / ("topsim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

/// The message of the InputError that `action` throws, "" if it throws none.
template <typename Action>
std::string input_error(Action&& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// tests/data/tiny.json with one substring replaced, written to a temporary file.
inline std::string tiny_with(const std::string& from, const std::string& to) {
  std::string text = read_text(test_data("tiny.json"));
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return write_temp("tiny-variant.json", text);
}

}  // namespace topsim::test
