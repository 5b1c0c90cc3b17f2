// topsim_bench: the speed targets of the collectives model, measured as whole cases.
//   topsim_bench sweep8      DGX A100, 8 GPUs, every operation, 8 B .. 8 GiB by factor 2
//   topsim_bench ring N      1 GiB ring allreduce on N H100 on one flat switch (flow model)
//   topsim_bench steps N     the same with the per-step reference model
//   topsim_bench nodes N     1 GiB ring allreduce (Simple) on N DGX A100 on their HDR rail fabric
// Each prints what it simulated, the predicted figure, wall-clock seconds split into setup and
// simulation, and the process's peak resident memory. Run each case as its own process (one
// SimGrid engine per process); time whole runs with a benchmark tool for medians.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "io/io.hpp"
#include "topology/cluster.hpp"
#include "topology/flat.hpp"
#include "util/error.hpp"

#ifndef TOPSIM_DATA_DIR
#error "TOPSIM_DATA_DIR must name the directory holding models/ and topologies/"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double peak_rss_MiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
}

int run(const std::string& which, int gpus) {
  using namespace topsim;
  std::string data = TOPSIM_DATA_DIR;
  auto start = Clock::now();
  Catalog catalog = load_catalog(data + "/models");
  TopologySpec spec;
  if (which == "sweep8") {
    spec = load_topology_spec(data + "/topologies/dgx-a100.json");
  } else if (which == "nodes") {
    ScaleOut scale;
    scale.nodes = gpus;
    spec = replicate_server(load_topology_spec(data + "/topologies/dgx-a100.json"), scale, catalog);
  } else {
    spec = flat_topology("flat:" + std::to_string(gpus) + ":h100", catalog);
  }
  Topology topology = Topology::build(spec, catalog);
  std::vector<int> ranks(topology.gpu_count());
  for (int i = 0; i < topology.gpu_count(); ++i) ranks[i] = i;
  Communicator comm(topology, ranks, catalog.nccl_version(""));
  std::vector<CollRequest> requests;
  if (which == "sweep8") {
    for (CollOp op : all_ops())
      for (double size = 8; size <= 8.0 * 1073741824.0; size *= 2) {
        CollRequest r;
        r.op = op;
        r.size_B = size;
        requests.push_back(r);
      }
  } else {
    CollRequest r;
    r.size_B = 1073741824.0;
    r.algo = Algo::ring;
    r.proto = Proto::simple;
    r.model = which == "steps" ? CollModel::steps : CollModel::flow;
    requests.push_back(r);
  }
  RouteOptions options;
  options.mode = TransferMode::sm;
  Simulator simulator;
  PlatformRunner runner(simulator, simulator.add_platform(topology, options, comm.needs(requests)));
  double setup_s = seconds_since(start);
  auto simulate = Clock::now();
  double busbw_sum = 0;
  CollResult last;
  for (const auto& r : requests) {
    last = comm.run(r, runner);
    busbw_sum += last.busbw_Bps;
  }
  double simulate_s = seconds_since(simulate);
  std::printf("case %s  gpus %d  servers %d  collectives %zu  last busbw %.2f GB/s  mean busbw %.2f GB/s  setup %.3f s  "
              "simulation %.3f s  total %.3f s  peak memory %.0f MiB\n",
              which.c_str(), topology.gpu_count(), topology.node_count(), requests.size(), last.busbw_Bps / 1e9,
              busbw_sum / requests.size() / 1e9, setup_s, simulate_s, setup_s + simulate_s, peak_rss_MiB());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "";
  int gpus = argc > 2 ? std::atoi(argv[2]) : 0;
  if (which != "sweep8" && !((which == "ring" || which == "steps" || which == "nodes") && gpus >= 2)) {
    std::fprintf(stderr, "usage: topsim_bench sweep8 | ring N | steps N | nodes N\n");
    return 2;
  }
  try {
    return run(which, gpus);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
