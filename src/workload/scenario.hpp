#pragma once
// A training scenario run point by point: every variant at every GPU or server count, each
// point one replay of a generated iteration, plus each variant's one-GPU baseline for speedup.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/workload_spec.hpp"
#include "workload/replay.hpp"

namespace topsim {

struct ScenarioPoint {
  std::string variant;
  std::string topology;     ///< the topology's name
  std::string gpu;          ///< GPU model of rank 0
  int count = 0;            ///< the scenario's count this point is for (a GPU or a server count)
  int gpus = 0;
  int nodes = 1;
  double batch_per_gpu = 0;
  ReplayResult replay;
  double gradient_B = 0;    ///< bytes all-reduced per iteration
  double memory_B = 0;      ///< estimated bytes one GPU holds (training_memory)
  double capacity_B = 0;    ///< the GPU's memory
  double throughput = 0;    ///< samples per second
  double speedup = 0;       ///< throughput over the variant's one-GPU throughput
  double efficiency = 0;    ///< speedup / gpus
};

/// Builds a topology (a bundled name or path) with a scale-out and a GPU what-if.
using TopologyFactory =
    std::function<Topology(const std::string& topology, const ScaleOut& scale, const std::string& gpu)>;
/// Adds a platform for a topology to the engine and returns a runner bound to it. Every
/// platform is added before the first run.
using PlatformFactory =
    std::function<std::unique_ptr<Runner>(const Topology& topology, const RouteOptions& routes, const PlatformNeeds& needs)>;

/// A scenario in two steps, because the engine seals its platforms at the first run: the
/// constructor lays out every point and adds its platform; run() replays them. Construct every
/// runner sharing an engine before running any. InputError at the scenario's keys for unknown
/// networks, frameworks, optimizers, or kernels a GPU cannot run.
class ScenarioRunner {
 public:
  ScenarioRunner(const ScenarioSpec& scenario, const Catalog& catalog, const TopologyFactory& topologies,
                 const PlatformFactory& platforms);
  ~ScenarioRunner();
  ScenarioRunner(const ScenarioRunner&) = delete;
  ScenarioRunner& operator=(const ScenarioRunner&) = delete;

  /// Every point, variants in file order, counts rising (each variant's one-GPU baseline for
  /// speedup is run but not returned unless it is one of the counts).
  std::vector<ScenarioPoint> run();

 private:
  struct Pending;
  std::vector<std::unique_ptr<Pending>> pending_;
};

/// Constructs a ScenarioRunner and runs it.
std::vector<ScenarioPoint> run_scenario(const ScenarioSpec& scenario, const Catalog& catalog,
                                        const TopologyFactory& topologies, const PlatformFactory& platforms);

}  // namespace topsim
