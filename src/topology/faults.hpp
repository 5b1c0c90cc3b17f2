#pragma once
// Applies a what-if of failures, degraded links and stragglers (model/faults.hpp) to a topology
// as written, before it is built: routing, NCCL's ring and rail search and the engine then see
// only what is left, as NCCL sees a machine at ncclCommInit.
#include "model/faults.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// Removes failed devices (with their links) and failed links, scales degraded links' bandwidth
/// and sets stragglers' slowdown. A NIC left without a network link is removed too (nothing can
/// reach the network through it), and so is any non-GPU device left with no link at all.
/// Names are device ids of `spec` (a cluster's are "n<k>.<id>"), links "A-B" by their two ends
/// (either order) or "#N" by their index in spec.links; every name is checked before anything
/// changes. UsageError naming the flag (--fail, --degrade, --straggler) for an unknown name
/// (with a few valid ones), a failed GPU, a fraction outside (0, 1], a factor below 1, a GPU left
/// without its PCIe link (a NIC without one is removed), or GPUs that can no longer reach each other (naming two).
void apply_faults(TopologySpec& spec, const Faults& faults);

/// The what-if as the flags would repeat it, for report headers: "--fail n0.mlx5_3, --degrade
/// gpu0-gpu1=0.5"; "" when there is none.
std::string faults_text(const Faults& faults);

}  // namespace topsim
