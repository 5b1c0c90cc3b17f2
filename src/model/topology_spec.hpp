#pragma once
// A topology file as written, before validation: devices and links by name. Plain data.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

enum class DeviceType { gpu, nvswitch, pcie_switch, cpu, nic, network_switch };
const char* to_string(DeviceType type);

struct DeviceSpec {
  std::string id;
  DeviceType type = DeviceType::gpu;
  std::string model;
  std::string cores;                ///< cpu only: CPU affinity list as nvidia-smi prints it ("0-19,40-59")
  std::optional<int> numa_node;     ///< cpu only
  int node = 0;                     ///< which server of a cluster it belongs to; -1 for the fabric
  double slowdown = 1;              ///< gpu only, a what-if (--straggler): its kernels take this many times longer
  SourceRef where;
};

struct LinkSpec {
  std::string a;
  std::string b;
  std::string model;
  int count = 1;                           ///< parallel links (bonded NVLinks, dual QPI)
  std::optional<double> bandwidth_Bps;     ///< override: one link, one direction
  std::optional<double> latency_s;         ///< override: one hop
  std::optional<double> efficiency;        ///< override, in (0, 1]
  double bandwidth_fraction = 1;           ///< a what-if (--degrade): share of the bandwidth kept, in (0, 1]
  SourceRef where;
};

/// A link of `count` parallel links of `model` between devices `a` and `b`, with no overrides.
LinkSpec link_spec(const std::string& a, const std::string& b, const std::string& model, int count,
                   const SourceRef& where = SourceRef{});

/// How servers are joined when replicated into a cluster.
struct FabricSpec {
  std::string kind;                ///< "fat-tree" (NICs onto leaves node by node), "rail" (NIC i of
                                   ///< every node onto rail i's leaves), "rail-only" (rail i a network of
                                   ///< its own), "nvlink" (NVLink Switch System)
  std::string switch_model;        ///< leaf (network) or NVLink switch model; "" picks one by port model
  double oversubscription = 1;     ///< fat-tree and rail: leaf down ports per up port
  double external_ratio = 0.5;     ///< nvlink with node NVSwitches: external links per GPU-facing link
  int planes = 0;                  ///< nvlink without node NVSwitches: switch chips the GPUs spread over;
                                   ///< fat-tree, rail: independent network planes (NIC i on plane i % planes; 0 = 1)
  int tiers = 2;                   ///< fat-tree, rail, rail-only: 2 (leaves under one aggregated core) or 3
                                   ///< (leaves, explicit spines in pods, aggregated core above)
  double spine_oversubscription = 1;  ///< tiers 3: a spine's down links per up link
  int spines_per_pod = 0;          ///< tiers 3: 0 = a leaf's up ports (one link to each spine)
  int leaves_per_pod = 0;          ///< tiers 3: 0 = as many as a spine's down ports take
  SourceRef where;
};

struct TopologySpec {
  std::string file;
  std::string name;
  std::string description;
  std::vector<std::string> sources;
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
  std::optional<FabricSpec> scale_out;  ///< a server's default fabric for --nodes
  int nodes = 1;                        ///< servers in this topology (a cluster has several)
  std::string gpu_swap;                 ///< a --gpu what-if as headers print it ("a800 (8 of 12 NVLinks)"); "" for none
};

/// What a user asks of a server or cluster for a what-if (--nodes, --nic, --nics-per-node).
struct ScaleOut {
  int nodes = 0;            ///< 0: as the file says
  std::string nic;          ///< "" keeps the NICs
  int nics_per_node = 0;    ///< 0 keeps them all
  bool any() const { return nodes > 0 || !nic.empty() || nics_per_node > 0; }
  /// "" when nothing is asked, else e.g. "x16, nic hdr100, 4 NICs per node".
  std::string text() const;
};

/// A cluster file: servers of one kind, how many, and the fabric joining them.
struct ClusterSpec {
  std::string file;
  std::string name;
  std::string description;
  std::vector<std::string> sources;
  std::string node;                     ///< server topology: bundled name or path (relative to the file)
  int nodes = 1;
  std::string nic;                      ///< replace every NIC's model ("" keeps them)
  int nics_per_node = 0;                ///< keep the first K NICs of each server (0 keeps all)
  FabricSpec fabric;
  SourceRef where;
};

}  // namespace topsim
