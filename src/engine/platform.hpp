#pragma once
// The engine's own view of a platform: what Simulator builds in SimGrid for one topology, and
// what the representative run (representative_run.cpp) builds for one schedule's classes of
// identical work. Engine-private: only src/engine includes it.
#include <simgrid/s4u.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "routing/route_table.hpp"
#include "schedule/schedule.hpp"

namespace topsim {

namespace sg4 = simgrid::s4u;

// A delay is an Exec of `delay_s` flops on a host of 1 flop/s. The timer host has so many cores
// that concurrent delays never share one: each runs at full speed, like independent GPU streams.
constexpr double kTimerFlopsPerSecond = 1.0;
constexpr int kTimerCores = 1 << 30;

// Flows (composites) per full zone: a full zone's route table is quadratic in its hosts, two per
// flow, so 256 flows keep each at 512^2 entries and the tables linear in flows in all. One zone
// for every flow's end points made 12,288 communicators' composites a 1 GB table.
constexpr std::size_t kFlowsPerZone = 256;

struct PairRoute {
  double latency_s = 0;
  double bottleneck_Bps = 0;  ///< narrowest resource: no flow on the route can go faster
  std::vector<ConstraintKey> keys;  ///< constraints crossed, in order, repeats kept
};

// A link direction as link_usage() reports it.
struct TrackedLink {
  std::string name;
  double capacity_Bps = 0;
  std::size_t order = 0;  ///< lowest member link index x 2 + direction: topology order
};

using LinkIds = std::vector<std::uint32_t>;  ///< TrackedLink indices a route crosses, repeats kept

// Link tracking: bytes one flow moved between two consecutive engine events.
struct Segment {
  double start_s, end_s;  ///< since the run began
  const LinkIds* links;
  double bytes_B;
};

struct Platform {
  std::string prefix;
  bool tracked = false;
  std::vector<TrackedLink> links;
  std::map<std::pair<int, int>, LinkIds> pair_links;
  std::vector<LinkIds> composite_links;
  int gpus = 0;
  std::vector<sg4::Host*> hosts;                    ///< by GPU ordinal
  std::map<std::pair<int, int>, PairRoute> pairs;   ///< declared routes
  std::vector<std::pair<sg4::Host*, sg4::Host*>> composites;
  std::vector<double> composite_bottleneck_Bps;  ///< by composite: its narrowest resource or cap
  // What the representative run needs: every constraint a flow crosses, before reduction.
  std::vector<std::vector<ConstraintKey>> composite_keys;  ///< by composite, repeats kept
  std::vector<double> composite_cap_Bps;                   ///< by composite; 0 when uncapped
  std::vector<double> key_capacity_Bps;                    ///< by constraint key
  std::shared_ptr<const RouteTable> table;                 ///< names the keys
};

/// Gives `zone`, made without a parent, the models of `lender` (the engine's root zone): the
/// root is sealed at the first run and takes no children after it.
void lend_models(sg4::NetZone* zone, const sg4::NetZone* lender);

/// The full zone for flow `flow`'s two end points, kFlowsPerZone flows to a zone:
/// zones[flow / kFlowsPerZone], made on first use, named `name` and its number, and handed to
/// `attach` (a parent, or lent models) before anything is made in it.
sg4::NetZone* flow_zone(std::vector<sg4::NetZone*>& zones, std::size_t flow, const std::string& name,
                        const std::function<void(sg4::NetZone*)>& attach);

/// Timer hosts shared by every platform and representative run of the process, made as runs
/// need them: timer g runs the delays of GPU ordinal g (of class g in a representative run).
/// Runs never overlap, and a timer only runs its delays, so one run's timers can be the next
/// one's. SimGrid never destroys a host, making one is dear, and sealing a zone scans every host
/// of the engine: a timer per GPU per platform (16,384 each in a plan's layouts) was a fifth of a
/// plan. Each growth makes a zone of its own without a parent (models lent by the engine's root)
/// and seals it and its hosts.
class TimerPool {
 public:
  /// Makes timers up to `count` where missing.
  void reserve(std::size_t count, const sg4::NetZone* lender);
  sg4::Host* at(std::size_t timer) const { return hosts_.at(timer); }

 private:
  static constexpr std::size_t kFirstTimers = 64;
  std::vector<sg4::Host*> hosts_;
  std::size_t zones_ = 0;
};

/// One schedule's classes of identical work as a platform and schedule of their own: one flow
/// per op class over one link per constraint class, crossed as often as the class's ops cross
/// one of its constraints (representatives.hpp). A transfer's class is a delay (its route
/// latency) then a flow, as the engine runs a transfer.
struct RepresentativeRun {
  Platform platform;
  Schedule schedule;
  std::vector<std::uint32_t> class_of_op;  ///< by op of the full schedule
  std::vector<std::size_t> first_op;       ///< by class: its first op in `schedule`
  std::vector<std::size_t> last_op;        ///< by class: its last op (the flow, for transfers)
};

/// The representative run of `schedule` (validated) on `full`, or nullopt where refinement does
/// not converge or leaves every op a class of its own (the full run is then no dearer).
/// `prefix` names its SimGrid resources apart; `tracked`: list its links for the invariants.
std::optional<RepresentativeRun> representative_run(const Platform& full, const Schedule& schedule,
                                                    const std::string& prefix, const sg4::NetZone* lender, bool tracked);

/// The full schedule's timings from the representative run's: each op has its class's.
std::vector<OpTiming> expand(const RepresentativeRun& run, const std::vector<OpTiming>& timings);

}  // namespace topsim
