#pragma once
// One release line of NCCL as data (models/nccl_versions.json): which algorithms and protocols
// it offers per operation, how many channels and threads it runs, and the tuner's own cost model
// (NVIDIA/nccl src/graph/tuning.cc) with which it chooses. Names are NCCL's, as strings: the
// collectives module maps them to its enums. Plain data: no JSON here.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/nccl_graph_data.hpp"
#include "model/provenance.hpp"
#include "model/source_ref.hpp"

namespace topsim {

/// A value per tuner table row (NCCL's compute-capability index: "volta", "ampere", "hopper",
/// ...) and per node-count index: one node, two nodes, more.
using NcclPerNodes = std::array<double, 3>;

struct NcclVersion {
  /// The release line, major.minor, e.g. "2.18": it stands for the releases of its major.minor;
  /// a release between two lines maps to the older one with a note (Catalog::nccl_line).
  std::string name;
  std::string description;
  std::string tag;           ///< the tag every value was read at, e.g. "v2.18.3-1"
  /// Algorithms offered per operation (NCCL's names: ring, tree, collnet, nvls, nvls_tree, pat).
  std::map<std::string, std::vector<std::string>> algorithms;
  std::vector<std::string> protocols;             ///< ll, ll128, simple
  std::vector<std::string> ll128_architectures;   ///< LL128 on by default only on these, over NVLink
  std::map<std::string, std::string> architecture_rows;  ///< architecture -> tuner table row
  int max_channels = 32;
  /// NVLS channel count: "default", or per architecture, or "<architecture>_one_node" (NCCL
  /// 2.27+: fewer channels for Blackwell inside one NVLink domain). Empty: the line has no NVLS.
  std::map<std::string, int> nvls_channels;
  std::map<std::string, int> max_threads;         ///< per protocol
  std::map<std::string, int> thread_threshold;    ///< bytes per thread per channel before one more channel
  int p2p_channels_per_peer = 1;
  double p2p_chunk_nvlink_B = 0;                  ///< Simple p2p chunk over NVLink
  double p2p_chunk_B = 0;                         ///< over PCIe, host memory or the network
  double p2p_ll_threshold_B = 0;                  ///< p2p operations up to this size run LL
  double p2p_chunk_net_B = 0;                     ///< Simple p2p chunk when the ranks span servers
  /// How one p2p operation is split into parts, one per channel (addP2pToPlan): a part is at
  /// least chunk / part_min_divisor and, while channels remain, at most chunk x part_max_steps;
  /// index 0 within one server, 1 across servers. 0: the line's split is not transcribed.
  std::array<double, 2> p2p_part_min_divisor{0, 0};
  std::array<double, 2> p2p_part_max_steps{0, 0};
  /// What the LL threshold is per: "none" (the operation's bytes), "peer_channels" (times the
  /// channels per peer, 2.26-2.28), "op_channels" (times the operation's own channels, 2.30).
  std::string p2p_ll_threshold_scale = "none";
  /// Whether p2p connections over the network have LL buffers (NCCL_ALLOC_P2P_NET_LL_BUFFERS).
  bool p2p_ll_over_network = true;
  std::map<std::string, double> nvlink_Bps;       ///< NCCL's per-link NVLink bandwidth per architecture
  /// base_latency_s[algo][proto]; hw_latency_s[transport][algo][proto], transport nvlink|pcie|network
  std::map<std::string, std::map<std::string, double>> base_latency_s;
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> hw_latency_s;
  std::map<std::string, NcclPerNodes> ll_max_Bps;                 ///< by table row
  std::map<std::string, NcclPerNodes> ring_ll128_channel_Bps;     ///< empty: no per-channel cap
  std::map<std::string, NcclPerNodes> tree_channel_Bps;
  std::map<std::string, NcclPerNodes> tree_ll128_channel_Bps;
  std::map<std::string, double> factors;  ///< named busBw refinements of ncclTopoTuneModel
  std::map<std::string, std::vector<double>> tree_correction;  ///< per protocol, by log2(bytes / 64)
  std::map<std::string, double> ring_plateau;  ///< by table row: multi-node ring Simple allreduce latency factor
  /// Which hop latency a broadcast/reduce Simple step is charged: "tree" or "ring".
  std::string chain_simple_hop = "ring";
  /// How a ring's steps are charged: "intra_inter" (intra-node steps at the NVLink/PCIe hop,
  /// network steps at the network's; 2.12+) or "hw" (every step at the line's transport: the
  /// network's as soon as there are two servers; 2.5).
  std::string ring_step_latency = "intra_inter";
  /// How the tuner charges the latency the network plugin reports (graphs->latencyInter: 0 for
  /// NCCL's own net_ib and net_socket, the platform's figure for aws-ofi-nccl): "none" (2.5),
  /// "replaces" (it replaces the NET hardware latency when set; 2.12) or "adds" (added to every
  /// network hop, once more for Simple; 2.18+).
  std::string net_latency_inter = "none";
  /// Network steps of a ring allreduce: "2*nodes" (2.12-2.21) or "2*(nodes-1)" (2.26+).
  std::string ring_allreduce_inter_steps = "2*nodes";
  NcclGraphData graph;  ///< the graph search's constants (topo.h, topo.cc, paths.cc, search.cc)
  Sources sources;
  SourceRef where;

  /// Whether this line stands for release `version` ("2.20.5" or "2.20").
  bool covers(const std::string& version) const;
  /// A named factor; std::logic_error when the file lacks it (the reader checks the required ones).
  double factor(const std::string& key) const;
  /// A named factor the line may lack (e.g. "pat" before 2.26): `none` then.
  double factor_or(const std::string& key, double none) const;
  /// NVLS channels for GPUs of `architecture` on `nodes` servers; 0 when the line has no NVLS.
  int nvls_channel_count(const std::string& architecture, int nodes) const;
};

/// "2.20.5" < "2.21": compares dotted release numbers numerically, missing parts as 0.
int compare_versions(const std::string& a, const std::string& b);

}  // namespace topsim
