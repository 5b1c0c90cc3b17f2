#pragma once
// A topology written as a SimGrid platform file, so that SimGrid programs (SMPI's MPI ranks, s4u
// actors) run on the links topsim models. Text only: this module does not include SimGrid.
#include <string>

#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// The SimGrid 3.32 platform (DTD version 4.1) of `topology` as copies routed with `options` see
/// it (topsim p2p uses route_options(P2pOptions), mode copy_engine):
///  - <config> props giving SimGrid's network model the engine's settings (CM02 without TCP
///    corrections, bandwidth factor 1), except latency factor 1: here latencies sit on the links,
///    whereas the engine adds each route's latency itself;
///  - one host per GPU named after its device id, its speed the GPU's dense fp32 rate (tf32
///    tensor rate when the model publishes no fp32 one), with props topsim.gpu (CUDA ordinal)
///    and topsim.model;
///  - the engine's resources (ResourceTable): split-duplex links for topology links and bundles of
///    striped NVSwitch planes, shared links for crossbars, host memory and GPU-side limits; each
///    carries its hops' latency, so the latencies along a route sum to path_latency_s;
///  - one asymmetric route per ordered pair of GPUs, following find_route.
/// The fixed software cost of a copy (P2pBench::overhead_s) is not part of the platform.
/// Throws InputError when a GPU model has neither rate, UsageError when the GPU-pair routes
/// would exceed what a full routing table holds.
std::string simgrid_platform_xml(const Topology& topology, const RouteOptions& options);

}  // namespace topsim
