#include <map>
#include <memory>

#include "engine/simulator.hpp"
#include "p2p/p2p.hpp"
#include "util/error.hpp"
#include "validate/validation.hpp"

namespace topsim {

std::vector<ValidationResult> evaluate(const std::vector<ValidationRow>& rows,
                                       const std::function<Topology(const std::string&)>& load) {
  std::map<std::string, std::unique_ptr<Topology>> topologies;
  for (const auto& row : rows)
    if (!topologies.count(row.topology)) topologies[row.topology] = std::make_unique<Topology>(load(row.topology));

  Simulator simulator;
  std::map<std::pair<std::string, bool>, std::size_t> platforms;
  for (const auto& row : rows) {
    const Topology& t = *topologies[row.topology];
    for (int gpu : {row.src, row.dst})
      if (gpu >= t.gpu_count())
        throw InputError(row.where.file, row.where.pointer + "/" + (gpu == row.src ? "src" : "dst"),
                         "GPU " + std::to_string(gpu) + " does not exist: " + t.name() + " has " +
                             std::to_string(t.gpu_count()) + " GPUs");
    auto key = std::make_pair(row.topology, row.peer_access);
    if (!platforms.count(key)) {
      P2pOptions options;
      options.peer_access = row.peer_access;
      platforms[key] = simulator.add_platform(t, route_options(options));
    }
  }

  std::vector<ValidationResult> results;
  for (const auto& row : rows) {
    const Topology& t = *topologies[row.topology];
    PlatformRunner runner(simulator, platforms[{row.topology, row.peer_access}]);
    P2pOptions options;
    options.peer_access = row.peer_access;
    options.method = parse_copy_method(row.method);
    P2pBench bench(t, runner, options);
    ValidationResult result;
    result.row = row;
    if (row.metric == "latency_us") {
      result.predicted = bench.copy_time_s(row.src, row.dst, row.size_B) * 1e6;
    } else {
      P2pPoint point = bench.measure(row.src, row.dst, row.size_B);
      result.predicted = (row.metric == "uni_GBps" ? point.uni_Bps : point.bi_Bps) / 1e9;
    }
    result.error = (result.predicted - row.measured()) / row.measured();
    results.push_back(result);
  }
  return results;
}

}  // namespace topsim
