#pragma once
// Clusters: servers of one kind replicated and joined by a fabric, expanded into one topology.
//
//   fat-tree / rail:   [n0: GPUs..NICs]  [n1: GPUs..NICs]  ...
//                           \  |  /          \  |  /
//                          leaf switches (rail: one set per NIC index)
//                                 \    |    /
//                      (tiers 3: spine switches, pod by pod)
//                                 \    |    /
//                      fabric core (upper tiers aggregated, non-blocking)
//   planes / rail-only: one such tree per plane (NIC i on plane i % planes), none joined
//
//   nvlink:  each server's NVSwitches ==(external NVLinks)== NVLink Switch System, or GPUs ==
//            switch planes directly (GB200 NVL72 style)
#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// Most devices a cluster may expand to (servers x devices per server, before the fabric's
/// switches): 2^23, about 8 million, so that 32,768 DGX H100 (262,144 GPUs, 35 devices each)
/// fit. Each device costs about a KiB once built (its model is shared with its kind); a file (or
/// --nodes) asking for more would take gigabytes and minutes, so expand_cluster refuses it up
/// front (docs/fuzzing.md). 131,072 DGX H100 (1,048,576 GPUs) make 4.6 million.
constexpr long long max_cluster_devices = 1LL << 23;

/// Memory a cluster's GPU costs at most in the dearest command at scale (a 1 GiB allreduce's
/// topology, routes, composites and engine: 13.7 KiB per GPU at 131,072 GPUs before issue 51,
/// 11.1 KiB at 1,048,576 after it, docs/limits.md), rounded up. Bounds the GPUs one command may ask for on a machine: as many
/// as its memory holds at this rate (issue 51 lifted the fixed 262,144).
constexpr double kClusterBytesPerGpu = 16.0 * 1024;

/// Why `nodes` servers of `node_gpus` GPUs and `node_devices` devices each (named `server`) are
/// too many for one topology on a machine of `memory_B` bytes ("" when they are not): the device
/// limit first (the same on every machine), then what memory holds at kClusterBytesPerGpu.
std::string cluster_too_big(long long nodes, long long node_gpus, long long node_devices, const std::string& server,
                            double memory_B);

/// One topology with every server's devices (ids prefixed "n<k>.", node = k) and links, then the
/// fabric's switches (node -1) and links. Throws InputError at the cluster's place when the
/// fabric cannot be built (no NICs to attach, no switch model for the NICs' ports, planes that
/// do not divide the GPUs' NVLinks, or NICs, spines that do not divide a leaf's up ports),
/// or at /nodes when cluster_too_big says so on this machine, before allocating. Two tiers: the upper tiers become
/// one non-blocking core (exact for even spreading; oversubscription sits at the leaves). Three
/// tiers: explicit spines in pods, the tier above them one non-blocking core.
TopologySpec expand_cluster(const ClusterSpec& cluster, const TopologySpec& node, const Catalog& catalog);

/// A server replicated under its default fabric (its "scale_out") as `scale` asks: `scale.nodes`
/// servers (1 if not given), NICs replaced or trimmed. UsageError when the server has no
/// default fabric.
TopologySpec replicate_server(const TopologySpec& server, const ScaleOut& scale, const Catalog& catalog);

/// UsageError naming --nics-per-node when `server` has fewer than `nics_per_node` NICs.
void check_nics_per_node(const TopologySpec& server, int nics_per_node);

/// A cluster file's spec with a what-if applied: node count, NIC model, NICs per node.
ClusterSpec rescale_cluster(ClusterSpec cluster, const ScaleOut& scale);

/// The NIC model a --nic value names: a NIC model, a network link model (the first NIC model
/// whose ports speak it), or a short name (edr, hdr, hdr200, hdr100, ndr, ndr400, 25gbe, 100gbe,
/// 200gbe, 400gbe). Throws UsageError listing what is known.
std::string resolve_nic_model(const std::string& name, const Catalog& catalog);

}  // namespace topsim
