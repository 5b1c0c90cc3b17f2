#include "infer/tensor_parallel.hpp"

#include <map>
#include <memory>

#include "engine/simulator.hpp"
#include "topology/topology.hpp"
#include "workload/replay.hpp"

namespace topsim {

AllReduceTime fabric_allreduce(const Topology& topology, const Catalog& catalog, int tp, const std::string& nccl) {
  auto cache = std::make_shared<std::map<double, double>>();
  return [&topology, &catalog, tp, nccl, cache](double size_B) {
    auto hit = cache->find(size_B);
    if (hit != cache->end()) return hit->second;
    TraceSpec trace;
    trace.ranks = tp;
    TraceOp op;
    op.name = "tp.allreduce";
    op.kind = TraceOp::Kind::collective;
    op.op = "allreduce";
    op.group = "world";
    op.size_B = size_B;
    op.dtype = "half";  // engines reduce tensor-parallel activations in 16 bits, int8 ones too
    trace.ops.push_back(op);
    ReplayOptions options;
    options.nccl = catalog.nccl_version(nccl).name;
    Replay replay(topology, catalog, trace, options);
    Simulator simulator;
    PlatformRunner runner(simulator, simulator.add_platform(topology, replay.routes(), replay.needs()));
    const double time_s = replay.run(runner).op_span_s.at(op.name);
    cache->emplace(size_B, time_s);
    return time_s;
  };
}

}  // namespace topsim
