#include "study/scenarios.hpp"

#include <map>

namespace topsim {

TopologyFactory topology_factory(const Workspace& workspace) {
  return [&workspace](const std::string& topology, const ScaleOut& scale, const std::string& gpu) {
    return workspace.topology(topology, scale, gpu);
  };
}

std::vector<ScenarioPoint> run_scenario_points(const ScenarioSpec& scenario, const Workspace& workspace, Batch& batch) {
  return run_scenario(scenario, workspace.catalog(), topology_factory(workspace), batch.platforms());
}

Table scenario_table(const std::vector<ScenarioPoint>& points, Format format) {
  const bool seconds = format != Format::table;
  const double unit = seconds ? 1 : 1e3;
  const std::string suffix = seconds ? "_s" : "_ms";
  const int digits = seconds ? 6 : 2;
  Table table({{"variant"},
               {"topology"},
               {"gpu"},
               {"gpus"},
               {"nodes"},
               {"batch_per_gpu", 0},
               {"iteration" + suffix, digits},
               {"compute" + suffix, digits},
               {"forward" + suffix, digits},
               {"backward" + suffix, digits},
               {"optimizer" + suffix, digits},
               {"exposed_comm" + suffix, digits},
               {"comm" + suffix, digits},
               {"throughput", 1},
               {"speedup", 3},
               {"efficiency", 3},
               {"vs_first", 3},
               {"memory_GiB", 1},
               {"fits"}});
  std::map<int, double> first;  // the scenario's count -> first variant's throughput
  for (const ScenarioPoint& p : points) first.emplace(p.count, p.throughput);
  for (const ScenarioPoint& p : points) {
    double base = first.at(p.count);
    auto phase = [&](const char* name) {
      auto it = p.replay.phase_s.find(name);
      return it == p.replay.phase_s.end() ? 0.0 : it->second;
    };
    table.add_row({p.variant, p.topology, p.gpu, static_cast<long long>(p.gpus), static_cast<long long>(p.nodes),
                   p.batch_per_gpu, p.replay.iteration_s * unit, p.replay.compute_s * unit, phase("fwd") * unit,
                   phase("bwd") * unit, phase("optimizer") * unit,
                   p.replay.exposed_comm_s * unit, p.replay.comm_s * unit, p.throughput, p.speedup, p.efficiency,
                   base > 0 ? p.throughput / base : 0.0, p.memory_B / (1 << 30),
                   std::string(p.memory_B <= p.capacity_B ? "yes" : "no")});
  }
  return table;
}

}  // namespace topsim
