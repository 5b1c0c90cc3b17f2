#pragma once
// The invariants one engine run must keep, checked after the run when Simulator::check_invariants
// is on (the sanitizer and Debug builds): no op faster than its analytical lower bound, every
// byte moved, no link direction over its capacity between two events. Engine-private.
#include <vector>

#include "engine/platform.hpp"
#include "engine/simulator.hpp"

namespace topsim {

/// Throws std::logic_error naming the first invariant `timings` break. `segments`: the bytes each
/// tracked flow moved between consecutive events; `moved_B`: bytes moved by op.
void check_run(const Platform& p, const std::vector<Segment>& segments, const Schedule& schedule,
               const std::vector<OpTiming>& timings, const std::vector<double>& moved_B);

}  // namespace topsim
