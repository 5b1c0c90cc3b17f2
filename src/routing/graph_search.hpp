#pragma once
// Shortest paths on a filtered view of the topology graph (Boost.Graph BFS).
#include <functional>
#include <optional>
#include <vector>

#include "topology/topology.hpp"

namespace topsim {

/// Fewest-hop path from `from` to `to` over links accepted by `use_link`, passing only through
/// vertices accepted by `may_pass` (the two ends are always allowed). Ties go to the link listed
/// first in the topology file, so results are deterministic. nullopt when unreachable.
std::optional<std::vector<Edge>> shortest_path(const Topology& topology, Vertex from, Vertex to,
                                               const std::function<bool(const Link&)>& use_link,
                                               const std::function<bool(const Device&)>& may_pass);

}  // namespace topsim
