#pragma once
// --heatmap, --link-usage and --bins: the per-link load of one simulated run, shared by the
// commands that run one (run, coll).
#include <CLI/CLI.hpp>
#include <string>

#include "engine/simulator.hpp"

namespace topsim {

struct LinkUsageArgs {
  std::string heatmap;  ///< SVG path
  std::string json;     ///< JSON path
  int bins = 60;
  bool any() const { return !heatmap.empty() || !json.empty(); }
};

void add_link_usage_options(CLI::App& command, LinkUsageArgs& args);

/// Writes what was asked of the simulator's most recent run, each file whole or not at all.
void write_link_usage(const LinkUsageArgs& args, const Simulator& simulator, const std::string& source);

}  // namespace topsim
