#pragma once
// The discrete-event engine: topologies become SimGrid platforms (built in code), schedules
// become SimGrid activities with dependencies, and SimGrid's max-min solver shares every link
// among the flows that cross it. This is the only module that includes SimGrid.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "model/link_usage.hpp"
#include "routing/route.hpp"
#include "schedule/schedule.hpp"
#include "topology/topology.hpp"

namespace topsim {

class Simulator {
 public:
  /// Starts SimGrid with a network model whose times equal the link parameters: CM02 with no
  /// TCP corrections (no cross-traffic, no RTT-window bound, bandwidth factor 1). Latency factor
  /// 0: the engine adds each route's latency itself, so composite flows carry none.
  /// Any number per process, one after another or at once (their runs do not overlap): they
  /// share SimGrid's one engine, made on first use and never destroyed, each with its own
  /// platforms.
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Builds a platform: one host per GPU, one split-duplex link per topology link or bundle of
  /// striped NVSwitch-plane links (capacity under the route mode), shared links for switch
  /// cores, host memory and GPU-side limits, and the routes `needs` asks for. Every platform
  /// must be added before this Simulator's first run (it seals its platforms then).
  std::size_t add_platform(const Topology& topology, const RouteOptions& options, const PlatformNeeds& needs = {});

  /// Replays a schedule on a platform; timings relative to the schedule's start. Transfers pay
  /// their route's latency, then move their bytes; composite flows move bytes only. Successive
  /// runs do not overlap: each starts when the previous one has drained.
  std::vector<OpTiming> run(std::size_t platform, const Schedule& schedule);

  /// From now on, records how many bytes every flow moves between engine events, so that
  /// link_usage() can tell each link's load over time. Platforms must be added after this call
  /// (they keep each route's links). Costs time in proportion to flows in flight x events.
  void track_links();

  /// Load of every link direction the most recent run's platform routes over, in `bins` equal
  /// time bins of that run (exact: flows' rates are constant between engine events). Throws
  /// std::logic_error when tracking is off or nothing has run, std::invalid_argument for bins < 1.
  LinkUsage link_usage(int bins) const;

  /// Checks every run (on by default in builds configured with TOPSIM_INVARIANTS): no op beats
  /// its analytical lower bound (latency + bytes at its route's narrowest resource), every
  /// flow moves exactly its bytes, and no link direction carries more than its capacity in any
  /// interval between events. A violation is a bug: std::logic_error. Platforms must be added
  /// after turning it on (it needs each route's links).
  void check_invariants(bool on);

  /// On by default: of the capacity constraints composite flows cross, SimGrid gets one per set
  /// of constraints crossed by the same flows the same number of times, the narrowest (exact:
  /// src/engine/distinct_constraints.hpp). Off gives it every link, for comparing the two.
  /// Applies to platforms added after the call.
  void reduce_identical(bool on);

  /// On by default: each run simulates one op per class of identical work, each class's flow
  /// crossing one link per class of identical constraints as often as the class's ops cross one
  /// of them, and gives every op its class's times (exact: src/engine/representatives.hpp).
  /// Runs whose ops are all distinct, and every run while links are tracked (track_links), are
  /// simulated in full. Off simulates every op, for comparing the two.
  void represent_identical(bool on);

  /// Ops SimGrid ran in the most recent run: the schedule's, or its representative run's
  /// (transfers there are two: latency, then bytes). 0 before any run.
  std::size_t simulated_ops() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A Runner bound to one platform of a Simulator.
class PlatformRunner : public Runner {
 public:
  PlatformRunner(Simulator& simulator, std::size_t platform) : simulator_(simulator), platform_(platform) {}
  std::vector<OpTiming> run(const Schedule& schedule) override { return simulator_.run(platform_, schedule); }

 private:
  Simulator& simulator_;
  std::size_t platform_;
};

}  // namespace topsim
