#pragma once
// How bytes get from one GPU to another, as CUDA would move them: over NVLink when the GPUs are
// joined directly or through NVSwitches, else peer-to-peer over PCIe inside one socket, else
// through host memory. Found on the topology graph with Boost.Graph; no simulation here.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "topology/topology.hpp"

namespace topsim {

enum class RouteKind { nvlink, pcie_peer, host_staged, network };
const char* to_string(RouteKind kind);

/// Who moves the bytes, which decides the limits that apply on top of the links.
enum class TransferMode {
  raw,          ///< links only (engine tests, analytical bounds)
  copy_engine,  ///< cudaMemcpy-style copies: GPU copy-engine limits, host staging pipelines
  sm,           ///< NCCL kernels: NVLink at the architecture's NCCL efficiency, GPU SM limits
};

/// One topology link crossed in one direction.
struct LinkUse {
  std::size_t link = 0;  ///< Link::index
  bool forward = true;   ///< from the link's "a" end to its "b" end
  /// -1: all `count` parallel links together (striped); k >= 0: parallel link k alone, as a
  /// flow hashed (ECMP) or placed (adaptive) onto one member of the bundle travels
  int member = -1;
};

/// One resource a transfer occupies. NVSwitch planes are striped by the hardware in proportion
/// to each GPU's links into them, so the planes of one stage form a single hop whose capacity is
/// their sum ("bundled"): several links, several switch cores.
struct Hop {
  enum class Kind {
    link,         ///< topology links crossed together
    crossbar,     ///< switch cores or a CPU root complex passed through
    host_memory,  ///< DRAM of a CPU holding a bounce buffer (written, then read back)
    copy_engine,  ///< a GPU's copy-engine limit on traffic in and out together
    staging,      ///< a GPU's host-staged copy pipeline
    gpu_sm,       ///< a GPU's limit on SM-driven (NCCL) traffic in and out together
  };
  Kind kind = Kind::link;
  // Inline storage for the usual one to four (a DGX H100's four NVSwitch planes bundled): a
  // cluster's routes build millions of hops, and two heap blocks each were a fifth of routing.
  using Links = boost::container::small_vector<LinkUse, 4>;
  using Devices = boost::container::small_vector<Vertex, 4>;
  Links links;      ///< Kind::link
  Devices devices;  ///< the other kinds
};

struct Path {
  std::vector<Hop> hops;
};

struct Route {
  RouteKind kind = RouteKind::nvlink;
  int nvlinks = 0;  ///< NVLinks of the source used (nvidia-smi's NV#); 0 off NVLink
  int planes = 1;   ///< NVSwitch planes striped over
  Path path;
};

/// How a network route spreads over equal-cost choices: the parallel links of a bundle and the
/// spine switches of a fat-tree.
enum class RoutingMode {
  ideal,     ///< evenly over all of them at once (perfect packet spraying)
  ecmp,      ///< each flow on one, picked by a fixed hash of (source NIC, destination NIC, seed, stage)
  adaptive,  ///< each new flow on the least loaded one (flows already placed), ties to the lowest
};
const char* to_string(RoutingMode mode);

/// Adaptive routing's memory within one run: flows placed per member link and direction, and
/// each NIC pair's placement (so that the planner and the engine see the same choice).
struct FlowPlacement {
  std::map<std::tuple<std::size_t, int, bool>, int> flows;  ///< (link, member, forward) -> flows
  std::map<std::pair<Vertex, Vertex>, std::vector<LinkUse>> placed;  ///< (src NIC, dst NIC) -> links
};

/// How far apart on PCIe two GPUs without an NVLink between them may be for peer-to-peer over
/// PCIe; pairs further apart go through host memory (NCCL's SHM transport, a staged cudaMemcpy).
enum class PeerReach {
  nvlink_only,  ///< no PCIe peers at all (NCCL_P2P_LEVEL=NVL)
  one_switch,   ///< behind one common PCIe switch (NCCL's PATH_PIX)
  switch_tree,  ///< behind common PCIe switches only (NCCL's PATH_PIX/PATH_PXB)
  socket,       ///< also through one CPU's root complex (PATH_PHB)
  system,       ///< also across sockets (PATH_SYS)
};
const char* to_string(PeerReach reach);

struct RouteOptions {
  bool peer_access = true;  ///< false: every copy goes through host memory (P2P disabled)
  /// Unset: CUDA's own peer copies, which stay inside one socket (PeerReach::socket). NCCL
  /// communicators set it from their release's P2P level or NCCL_P2P_LEVEL.
  std::optional<PeerReach> peer_reach;
  /// false: NICs never read or write GPU memory directly; traffic bounces through the host
  /// memory of the GPU's CPU (NCCL_NET_GDR_LEVEL=LOC, or no nvidia-peermem)
  bool gpu_direct = true;
  TransferMode mode = TransferMode::raw;
  /// NCCL_IB_HCA: the NICs collectives may use, as NCCL reads the variable (names, prefix
  /// matches unless the list starts with '=', all but those after '^', ":port" ignored); ""
  /// for every NIC. Routing itself ignores it: communicators pick their rails with it.
  std::string ib_hca;
  RoutingMode routing = RoutingMode::ideal;
  unsigned long long seed = 0;  ///< ecmp: mixed into every flow's hash
  /// adaptive: shared by every copy of these options (a communicator and its platform), so one
  /// NIC pair keeps one placement; made on first use when null
  std::shared_ptr<FlowPlacement> placement;
  /// A RouteTable's routes inside one server, and its GPU-NIC segments, found once per distinct
  /// server (Topology::server_image) and translated to its copies; false searches each on its
  /// own server, the reference the translated routes are tested against. Same routes either way.
  bool server_templates = true;
};

/// ECMP's hash of a flow at one stage of its route: FNV-1a (64-bit) over the little-endian
/// 64-bit words src_nic, dst_nic, seed, stage, then MurmurHash3's fmix64 finalizer. Fixed so
/// that results are reproducible.
unsigned long long ecmp_hash(unsigned long long src_nic, unsigned long long dst_nic, unsigned long long seed,
                             unsigned long long stage);

/// Route between two GPUs (CUDA ordinals, src != dst). Throws InputError when NVSwitch planes
/// are wired so unevenly that striping cannot be modelled as one bundled path. GPUs of
/// different servers without an NVLink path go through their nearest NICs.
/// `nearest`: each GPU's nearest NIC, found once per GPU (a RouteTable's), or null to search.
class NearestNics;
Route find_route(const Topology& topology, int src_gpu, int dst_gpu, const RouteOptions& options,
                 NearestNics* nearest = nullptr);

/// Route between GPUs of different servers through given NICs (ordinals): GPUDirect RDMA when
/// GPU and NIC share a PCIe switch tree (nvidia-smi PIX or PXB), else through host memory;
/// then the network between the NICs.
/// `segments`, when given, appends the GPU-NIC hops in place of searching them (a RouteTable's
/// per-server templates give the same hops: gpu_nic_hops).
using GpuNicHops = std::function<void(Vertex gpu, Vertex nic, bool reverse, std::vector<Hop>& hops)>;
Route find_route_via(const Topology& topology, int src_gpu, int src_nic, int dst_nic, int dst_gpu,
                     const RouteOptions& options, const GpuNicHops* segments = nullptr);

/// The hops from a GPU to a NIC of its server (`reverse`: from the NIC to the GPU): GPUDirect
/// over PCIe switches when `gpu_direct` and they join the two, else a bounce through host memory.
void gpu_nic_hops(const Topology& topology, Vertex gpu, Vertex nic, bool reverse, bool gpu_direct, std::vector<Hop>& hops);

/// The NIC a GPU uses by default: among its server's NICs, the fewest PCIe hops away; ties go
/// round-robin by GPU ordinal (GPU0 and GPU1 sharing NIC0 and NIC1 take one each).
int nearest_nic(const Topology& topology, int gpu);

/// nearest_nic of each GPU of one topology, searched on first use: an alltoall's pair routes ask
/// it twice per pair (and PXN once per GPU of the server), 2 million times at 1,024 GPUs.
class NearestNics {
 public:
  explicit NearestNics(const Topology& topology) : topology_(topology) {}
  int of(int gpu);

 private:
  const Topology& topology_;
  std::vector<int> nic_;  ///< by GPU ordinal; -1 until searched
};

/// Capacity of a hop in bytes/s under a transfer mode; nullopt when the hop imposes no limit (a
/// GPU without a published copy-engine limit).
std::optional<double> hop_capacity_Bps(const Topology& topology, const Hop& hop, TransferMode mode);

/// Latency of one hop, seconds (the largest among bundled members).
double hop_latency_s(const Topology& topology, const Hop& hop);

double path_latency_s(const Topology& topology, const Path& path);

/// Bytes per second a path carries alone under a mode: its narrowest hop.
double path_bandwidth_Bps(const Topology& topology, const Path& path, TransferMode mode);

/// "gpu0 -nvlink2x6-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink2x6-> gpu1" for --explain and tests.
std::string describe(const Topology& topology, const Path& path);
/// One hop of that: "gpu0 -nvlink2x6-> nvswitch0..5" for links, "[nvswitch0..5]" for a crossbar.
std::string describe(const Topology& topology, const Hop& hop);

}  // namespace topsim
