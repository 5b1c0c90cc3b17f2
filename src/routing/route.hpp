#pragma once
// How bytes get from one GPU to another, as CUDA would move them: over NVLink when the GPUs are
// joined directly or through NVSwitches, else peer-to-peer over PCIe inside one socket, else
// staged through host memory. Found on the topology graph with Boost.Graph; no simulation here.
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace topsim {

enum class RouteKind { nvlink, pcie_peer, host_staged };
const char* to_string(RouteKind kind);

/// One resource a transfer occupies.
struct Hop {
  enum class Kind {
    link,         ///< a topology link, in one direction
    crossbar,     ///< the core of a switch or a CPU root complex passed through
    host_memory,  ///< DRAM of a CPU holding a staging buffer (written, then read back)
    copy_engine,  ///< a GPU's copy-engine limit on traffic in and out together
    staging,      ///< a GPU's host-staged copy pipeline
  };
  Kind kind = Kind::link;
  std::size_t link = 0;  ///< Link::index, for Kind::link
  bool forward = true;   ///< Kind::link: from the link's "a" end to its "b" end
  Vertex device = 0;     ///< the device of the other kinds
};

/// One way through the fabric and the fraction of the bytes it carries.
struct Path {
  double share = 1;
  std::vector<Hop> hops;
};

struct Route {
  RouteKind kind = RouteKind::nvlink;
  int nvlinks = 0;           ///< NVLinks of the source striped over (nvidia-smi's NV#); 0 off NVLink
  std::vector<Path> paths;   ///< shares sum to 1; several when NVSwitch planes stripe the traffic
};

struct RouteOptions {
  bool peer_access = true;   ///< false: every copy is staged through host memory (P2P disabled)
  bool copy_engine = false;  ///< add the copy-engine limits (cudaMemcpy-style copies, not SM-driven ones)
};

/// Route between two GPUs (CUDA ordinals, src != dst).
Route find_route(const Topology& topology, int src_gpu, int dst_gpu, const RouteOptions& options);

/// Sum of the latencies of every hop of a path, seconds.
double path_latency_s(const Topology& topology, const Path& path);

/// Bytes per second a path could carry alone: its narrowest hop.
double path_bandwidth_Bps(const Topology& topology, const Path& path);

/// Capacity of a device-level hop (crossbar, memory, copy engine, staging), bytes/s, or nullopt
/// when the device imposes no limit of that kind (a GPU without a published copy-engine limit).
std::optional<double> hop_capacity_Bps(const Topology& topology, const Hop& hop);

/// Latency of one hop, seconds.
double hop_latency_s(const Topology& topology, const Hop& hop);

/// "gpu0 -nvlink2x2-> nvswitch0 -> gpu1" for --explain and tests.
std::string describe(const Topology& topology, const Path& path);

}  // namespace topsim
