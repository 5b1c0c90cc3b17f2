#include "workload/scenario.hpp"

#include <algorithm>

#include "util/error.hpp"
#include "workload/training.hpp"

namespace topsim {

namespace {

}  // namespace

struct ScenarioRunner::Pending {
  ScenarioPoint point;
  std::unique_ptr<Topology> topology;
  std::unique_ptr<TraceSpec> trace;
  std::unique_ptr<Replay> replay;
  std::unique_ptr<Runner> runner;
  bool baseline = false;  ///< the variant's one-GPU point, kept only for speedup
};

namespace {

TrainingSpec variant_training(const ScenarioSpec& scenario, const Variant& v) {
  TrainingSpec t = scenario.training;
  if (v.sparsity) t.sparsity = *v.sparsity;
  if (v.batch_per_gpu) t.batch_per_gpu = *v.batch_per_gpu;
  if (v.tensor_parallel) t.tensor_parallel = *v.tensor_parallel;
  return t;
}

}  // namespace

ScenarioRunner::~ScenarioRunner() = default;

std::vector<ScenarioPoint> run_scenario(const ScenarioSpec& scenario, const Catalog& catalog,
                                        const TopologyFactory& topologies, const PlatformFactory& platforms) {
  ScenarioRunner runner(scenario, catalog, topologies, platforms);
  return runner.run();
}

ScenarioRunner::ScenarioRunner(const ScenarioSpec& scenario, const Catalog& catalog, const TopologyFactory& topologies,
                               const PlatformFactory& platforms) {
  const SourceRef training_at = scenario.where.at("training");
  TrainingSetup setup;
  setup.network = &catalog.network(scenario.training.network, training_at.at("network"));
  setup.framework = &catalog.framework(scenario.training.framework, training_at.at("framework"));
  setup.optimizer = &catalog.optimizer(scenario.training.optimizer, training_at.at("optimizer"));
  std::string nccl;  // the modelled line of the scenario's NCCL release, for every point
  try {
    nccl = catalog.nccl_version(scenario.nccl).name;
  } catch (const UsageError& e) {
    throw InputError(scenario.where.file, scenario.where.at("nccl").pointer, e.what());
  }

  // A measured one-GPU step scales every modelled kernel of the scenario's own GPU so that its
  // one-GPU iteration takes that long; other GPUs keep their modelled ratio to it.
  double compute_scale = 1;
  if (scenario.training.step_time_s) {
    Topology base = topologies(scenario.topology, {}, "");
    TraceSpec one = training_trace(scenario.training, setup, 1);
    Replay replay(base, catalog, one);
    compute_scale = *scenario.training.step_time_s / replay.rank0_compute_s();
  }

  auto add = [&](const Variant& v, const ScaleOut& scale, int ranks, int nodes, bool baseline) {
    auto owned = std::make_unique<Pending>();
    Pending& p = *owned;
    p.baseline = baseline;
    std::string topology = v.topology.empty() ? scenario.topology : v.topology;
    p.topology = std::make_unique<Topology>(topologies(topology, scale, v.gpu));
    if (ranks > p.topology->gpu_count())
      throw InputError(scenario.where.file, scenario.gpus.empty() ? "/nodes" : "/gpus",
                       std::to_string(ranks) + " GPUs asked; " + p.topology->name() + " has " +
                           std::to_string(p.topology->gpu_count()));
    if (ranks < 0) ranks = p.topology->gpu_count();
    TrainingSpec training = variant_training(scenario, v);
    if (baseline) training.tensor_parallel = 1;  // speedup is over one GPU running the whole model
    if (ranks % training.tensor_parallel != 0)
      throw InputError(training_at.file, (v.tensor_parallel ? v.where : training_at).at("tensor_parallel").pointer,
                       std::to_string(ranks) + " GPUs do not divide into tensor-parallel groups of " +
                           std::to_string(training.tensor_parallel));
    if (training.tensor_parallel > 1 &&
        std::none_of(setup.network->layers.begin(), setup.network->layers.end(),
                     [](const Layer& l) { return l.tp != Layer::Split::none; }))
      throw InputError(training_at.file, training_at.at("tensor_parallel").pointer,
                       "network " + setup.network->name + " has no tensor-parallel layers (\"tp\" in models/networks.json)");
    p.trace = std::make_unique<TraceSpec>(training_trace(training, setup, ranks));
    p.trace->where = scenario.where;
    // A kernel the GPU cannot run comes from the scenario's precision or its sparsity switch.
    const SourceRef sparsity_at = v.sparsity ? v.where.at("sparsity").at("math") : training_at.at("sparsity").at("math");
    for (TraceOp& op : p.trace->ops) op.where = op.sparse ? sparsity_at : training_at.at("precision");
    ReplayOptions options;
    options.compute_scale = compute_scale;
    options.nccl = nccl;
    p.replay = std::make_unique<Replay>(*p.topology, catalog, *p.trace, options);
    p.runner = platforms(*p.topology, p.replay->routes(), p.replay->needs());
    p.point.variant = v.name;
    p.point.topology = p.topology->name();
    p.point.gpu = p.topology->gpu_model(0).name;
    p.point.gpus = ranks;
    p.point.count = scenario.gpus.empty() ? nodes : ranks;
    p.point.nodes = nodes;
    p.point.batch_per_gpu = training.batch_per_gpu;
    p.point.gradient_B = gradient_bytes(training, setup);
    p.point.memory_B = training_memory(training, setup).total_B();
    p.point.capacity_B = p.topology->gpu_model(0).memory_B;
    pending_.push_back(std::move(owned));
  };
  for (const Variant& v : scenario.variants) {
    ScaleOut what_if;
    what_if.nic = v.nic;
    what_if.nics_per_node = v.nics_per_node;
    bool one_gpu_first = !scenario.gpus.empty() && scenario.gpus.front() == 1;
    if (!one_gpu_first) add(v, {}, 1, 1, true);
    if (!scenario.gpus.empty()) {
      for (int g : scenario.gpus) add(v, what_if.any() ? what_if : ScaleOut{}, g, 1, false);
    } else {
      for (int n : scenario.nodes) {
        ScaleOut scale = what_if;
        scale.nodes = n;
        add(v, scale, -1, n, false);
      }
    }
  }

}

std::vector<ScenarioPoint> ScenarioRunner::run() {
  std::vector<ScenarioPoint> points;
  double one_gpu = 0;
  for (auto& owned : pending_) {
    Pending& p = *owned;
    p.point.replay = p.replay->run(*p.runner);
    const double samples = p.trace->samples;  // batch per GPU x data-parallel replicas
    p.point.throughput = p.point.replay.iteration_s > 0 ? samples / p.point.replay.iteration_s : 0;
    if (p.point.gpus == 1) one_gpu = p.point.throughput;
    p.point.speedup = one_gpu > 0 ? p.point.throughput / one_gpu : 0;
    p.point.efficiency = p.point.speedup / p.point.gpus;
    if (!p.baseline) points.push_back(p.point);
  }
  return points;
}

}  // namespace topsim
