#pragma once
// Identical work once, at the level of the flows (issue 29). On a cluster of identical servers
// an alltoall is 65,280 pair flows at 256 GPUs, but under the fabric's symmetry they fall into a
// few hundred classes whose members start together, cross constraints of the same capacities
// the same number of times, and share every constraint with the same numbers of each other class.
//
// The classes are the coarsest equitable partition of the schedule's ops and the constraints
// they cross, found by colour refinement (1-dimensional Weisfeiler-Leman) from an initial
// colouring by what the engine sees of each: an op's kind, bytes, delay and route latency; a
// constraint's capacity. An op's colour is refined by its predecessors' colours (it starts
// when they have all finished) and by the summed crossings of each constraint colour; a
// constraint's by the summed crossings of each op colour. The partition is stable when a round
// splits nothing.
//
// Why one representative per class is exact (docs/limits.md, "Identical work once"): SimGrid's
// max-min sharing is progressive filling. Suppose every op of a class has started at the same
// instant and holds the same rate. A constraint c of class C then carries sum_F M(C,F) r_F,
// where M(C,F) is how often the ops of class F cross c, the same for every c in C; so the
// constraints of a class saturate together and freeze the same classes, and every op of a class
// keeps the same rate. Ops of a class move the same bytes, so they finish together; their
// successors, whose predecessors' classes agree, start together. By induction over the engine's
// events every op of a class has its representative's start and finish. The representative
// system has one flow per op class and one constraint per constraint class, each op class
// crossing it M(C,F) times; its rates are the full system's, to the solver's rounding.
//
// Where symmetry breaks (a failed NIC, a straggler's longer delay, an ECMP collision, uneven
// placement), the initial colours or the crossings differ and refinement splits the classes
// that differ, and only those: the cost grows with the distinct situations, not the GPUs.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "routing/route_table.hpp"
#include "schedule/schedule.hpp"

namespace topsim {

/// What the max-min system sees of one op of a schedule, besides its kind, bytes and delay.
struct OpConstraints {
  static constexpr ConstraintKey kNoKey = UINT32_MAX;
  const std::vector<ConstraintKey>* keys = nullptr;  ///< constraints crossed, repeats kept; null for delays
  ConstraintKey also = kNoKey;  ///< one more crossed once (a composite's own cap, which its ops share)
  double latency_s = 0;  ///< transfers: route latency paid before the bytes move (0 when not)
};

struct Representatives {
  bool stable = false;                     ///< refinement converged within its rounds
  std::vector<std::uint32_t> class_of_op;  ///< by op: its class, numbered by lowest op index
  std::vector<std::size_t> representative; ///< by class: its lowest op index
  /// By constraint class: its lowest key, numbered in order of first crossing by the
  /// representatives.
  std::vector<ConstraintKey> constraint;
  /// By op class: (constraint class, times the ops of the class cross one constraint of that
  /// class in all), constraint class ascending. Empty for delays.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> crossings;
};

/// The coarsest stable partition of `schedule`'s ops and the constraints they cross, refined from
/// kinds, sizes, delays, latencies and `key_capacity_Bps` (by key), within `max_rounds`
/// rounds (stable false otherwise: simulate in full). `ops` is indexed like schedule.ops.
Representatives representatives(const Schedule& schedule, const std::vector<OpConstraints>& ops,
                                const std::vector<double>& key_capacity_Bps, int max_rounds);

}  // namespace topsim
