#pragma once
// Whole-topology figures: bisection bandwidth (Boost.Graph max-flow) and Graphviz output.
#include <optional>
#include <ostream>

#include "topology/topology.hpp"

namespace topsim {

/// Largest GPU count for which bisection is computed exactly (all balanced splits).
constexpr int kMaxExactBisectionGpus = 20;

/// Bisection bandwidth, bytes/s, one direction, at line rate: the minimum over all splits of the
/// GPUs into two halves (sizes floor(n/2) and ceil(n/2)) of the max-flow from one half to the
/// other. Switches and CPUs carry flow; GPUs only send or receive. `nvlink_only` restricts the
/// fabric to NVLink. nullopt with one GPU or above kMaxExactBisectionGpus.
std::optional<double> bisection_Bps(const Topology& topology, bool nvlink_only);

/// Graphviz text of the topology (Boost write_graphviz): devices as nodes shaped by type, links
/// labelled with model and count.
void write_dot(std::ostream& out, const Topology& topology);

}  // namespace topsim
