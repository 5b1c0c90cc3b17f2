#pragma once
// Replays a trace on a topology: compute ops become delays on their GPU (kernel costs from the
// compute model), collectives become the flows NCCL would drive (algorithm and protocol chosen
// alone, as NCCL's tuner does, then run inside the whole iteration so that they share links
// with everything else in flight), sends become transfers. One Schedule, one engine run.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/workload_spec.hpp"
#include "schedule/schedule.hpp"

namespace topsim {

struct ReplayOptions {
  RouteOptions routes;         ///< peer access, GPUDirect
  double compute_scale = 1;    ///< multiplies modelled kernel times (not measured "time" ops)
  std::string nccl;            ///< NCCL release whose tuner chooses ("" for the default line)
};

struct ReplayResult {
  double iteration_s = 0;      ///< makespan of the trace
  double compute_s = 0;        ///< busiest rank: time on its compute stream
  double exposed_comm_s = 0;   ///< iteration_s - compute_s: communication and waits not hidden
  double comm_s = 0;           ///< rank 0: time with at least one collective or send in flight
  int collectives = 0;         ///< collective instances
  double collective_B = 0;     ///< bytes of all collectives, as nccl-tests counts them
  std::string algorithms;      ///< "allreduce ring/simple x12, ..."
  /// Rank 0's compute time by phase: the op name up to its first '.' ("fwd", "bwd", "optimizer").
  std::map<std::string, double> phase_s;
  /// Per collective or send op of the trace, by name: its first start to its last finish.
  std::map<std::string, double> op_span_s;
  /// Per collective or send op of the trace, by name: when it first starts.
  std::map<std::string, double> op_start_s;
  /// Per collective op of the trace, by name: the channels NCCL runs it on (one thread block,
  /// so one SM, per channel: enqueue.cc:1570@v2.28.9-1 launches a grid of nChannels).
  std::map<std::string, int> op_channels;
};

class Replay {
 public:
  /// Ranks are the topology's first `trace.ranks` GPUs. Throws InputError (at the op) for a
  /// kernel the GPU cannot run, a dependency on an op that does not run on a rank that needs
  /// it, or a dependency cycle; UsageError when the topology has too few GPUs.
  /// Keeps references to the topology, catalog and trace, which must outlive the replay.
  Replay(const Topology& topology, const Catalog& catalog, const TraceSpec& trace, ReplayOptions options = {});
  /// A temporary trace would dangle: the replay reads it until it is destroyed.
  Replay(const Topology& topology, const Catalog& catalog, TraceSpec&& trace, ReplayOptions options = {}) = delete;
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  const RouteOptions& routes() const { return options_.routes; }
  /// What the platform must carry: every group's collective flows and the sends' pairs.
  PlatformNeeds needs();
  /// Chooses each collective's algorithm on `runner` (one run per distinct collective), then
  /// replays the whole trace in one run.
  ReplayResult run(Runner& runner);
  /// Modelled time of every compute op on rank 0, before compute_scale (a trace's kernel time).
  double rank0_compute_s() const;

 private:
  struct Instance {
    std::size_t op = 0;         ///< index in trace ops
    int rank = -1;              ///< compute: its rank; -1 for collectives and sends
    std::vector<std::size_t> deps;  ///< instance indices
  };
  struct Group {
    std::vector<int> ranks;
    std::unique_ptr<Communicator> comm;
    std::size_t composite_offset = 0;
  };

  void layout();
  double compute_time(const TraceOp& op, int rank) const;
  CollRequest request_of(const TraceOp& op) const;

  const Topology& topology_;
  const Catalog& catalog_;
  const TraceSpec& trace_;
  ReplayOptions options_;
  std::map<std::string, Group> groups_;
  NcclRingGraphCache ring_graphs_;  ///< the groups' NCCL searches: identical servers search once
  std::vector<Instance> instances_;  ///< in a topological order
  std::vector<double> compute_s_;    ///< per instance, compute ops only (scaled)
  /// Set by needs(): per trace op, the key of its collective request ("" for other ops), and the
  /// request of each key (the collectives a run chooses algorithms for, once each).
  std::vector<std::string> op_keys_;
  std::map<std::string, CollRequest> requests_;
};

}  // namespace topsim
