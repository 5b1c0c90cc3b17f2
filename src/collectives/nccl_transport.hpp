#pragma once
// Which transport NCCL gives a pair of GPUs of one server that no NVLink joins: P2P over PCIe
// when their PCIe path is no deeper than the release's P2P level (ncclTopoCheckP2p, paths.cc),
// else SHM through host memory (shm.cc). Plain rules over the topology and one release line's
// constants; the routes themselves are routing's.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/nccl_version.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// NCCL's CPU vendor key of a CPU model, as p2p_level is keyed: "intel", "amd", "arm", "other".
std::string nccl_cpu_vendor(const CpuModel& cpu);

/// The deepest PCIe path NCCL `version` uses P2P over, by default, for a communicator of
/// `gpus_in_server` GPUs of a server whose CPUs are `cpu` (ncclTopoCheckP2p's p2pLevel):
/// the CPU vendor's entry of p2p_level, or of p2p_level_two_gpus for two GPUs or fewer, else
/// "other". A line without graph_search data keeps CUDA's reach (PeerReach::socket).
PeerReach nccl_default_peer_reach(const NcclVersion& version, const CpuModel& cpu, std::size_t gpus_in_server);

/// NCCL_P2P_LEVEL as NCCL reads it (paths.cc ncclGetLevel): LOC, PIX, PXB, PHB, SYS, or the old
/// numeric levels 0-5; nullopt for LOC and 0 (P2P off, as NCCL_P2P_DISABLE=1); NVL, NVB and
/// C2C keep P2P to NVLink pairs (nvlink_only). UsageError naming the valid values otherwise.
std::optional<PeerReach> parse_nccl_p2p_level(const std::string& value);

/// The reach a communicator of `gpus` (topology ordinals) uses: `requested` when set
/// (NCCL_P2P_LEVEL), else nccl_default_peer_reach with the first GPU's CPU and the number of
/// `gpus` in that GPU's server.
PeerReach nccl_peer_reach(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version,
                          std::optional<PeerReach> requested);

}  // namespace topsim
