#pragma once
// What CUDA's p2pBandwidthLatencyTest measures, predicted: one copy at a time (unidirectional),
// two opposite copies at once (bidirectional), and the time of a tiny copy (latency).
#include <string>
#include <vector>

#include "routing/route.hpp"
#include "schedule/schedule.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// How the copy is issued, which decides its fixed software cost.
enum class CopyMethod {
  write,   ///< kernel stores into peer memory (p2pBandwidthLatencyTest since CUDA 11: "P2P writes")
  memcpy,  ///< one cudaMemcpyPeerAsync timed on its own (older test versions, Tartan's packet test)
};
CopyMethod parse_copy_method(const std::string& text);  ///< "write" | "memcpy"; UsageError otherwise
const char* to_string(CopyMethod method);

struct P2pOptions {
  CopyMethod method = CopyMethod::write;
  bool peer_access = true;  ///< false: as with P2P disabled, every copy is staged through host memory
};

/// The route options a platform for these copies must be built with.
RouteOptions route_options(const P2pOptions& options);

struct P2pPoint {
  int src = 0;
  int dst = 0;
  double size_B = 0;
  double uni_Bps = 0;   ///< size / time of one copy src -> dst
  double bi_Bps = 0;    ///< 2 size / time of copies src -> dst and dst -> src started together
  double time_s = 0;    ///< time of the unidirectional copy, software cost included
  RouteKind route = RouteKind::nvlink;
};

class P2pBench {
 public:
  /// `runner` must replay on a platform built from `topology` with route_options(options).
  P2pBench(const Topology& topology, Runner& runner, P2pOptions options);

  /// Fixed software cost of one copy: the method's latency on the source GPU, or both GPUs'
  /// cudaMemcpy latencies when the copy is staged (device to host, then host to device).
  double overhead_s(int src, int dst) const;

  /// Time of one copy src -> dst of size_B bytes, software cost included, seconds.
  double copy_time_s(int src, int dst, double size_B);

  /// Unidirectional and bidirectional bandwidth of one pair at one size.
  P2pPoint measure(int src, int dst, double size_B);

  const P2pOptions& options() const { return options_; }

 private:
  const Topology& topology_;
  Runner& runner_;
  P2pOptions options_;
};

/// p2pBandwidthLatencyTest's copy size: 40,000,000 four-byte elements.
constexpr double kDefaultP2pSize_B = 40e6 * 4;
/// Latency is timed with a single four-byte element.
constexpr double kDefaultLatencySize_B = 4;

struct P2pMatrix {
  double size_B = 0;
  double latency_size_B = 0;
  std::vector<P2pPoint> bandwidth;  ///< every ordered pair, row-major, diagonal skipped
  std::vector<double> latency_s;    ///< copy time of the same pairs at latency_size_B
};

P2pMatrix measure_matrix(P2pBench& bench, int gpus, double size_B, double latency_size_B);

/// Sizes from `begin` to `end` multiplying by `factor` (nccl-tests -b/-e/-f); UsageError when
/// they do not make a finite increasing list.
std::vector<double> size_series(double begin_B, double end_B, double factor);

}  // namespace topsim
