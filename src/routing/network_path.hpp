#pragma once
// NIC to NIC across a switched network, by routing mode (ideal, ecmp, adaptive). Internal to
// routing: find_route and find_route_via call it for the network part of a route.
#include <vector>

#include "routing/route.hpp"

namespace topsim {

/// Appends the link hops from NIC `a` to NIC `b`. A fat-tree is climbed by switch tier until the
/// two sides meet; each stage keeps every equal-cost choice (the spines of a pod, the parallel
/// links of a bundle). `ideal` stripes a stage over all of them (one bundled hop), `ecmp` and
/// `adaptive` put the flow on one member link per stage (LinkUse::member). Networks that are not
/// trees fall back to one fewest-hop path. InputError when `a` and `b` share no network.
void append_network(const Topology& topology, Vertex a, Vertex b, const RouteOptions& options, std::vector<Hop>& hops);

}  // namespace topsim
