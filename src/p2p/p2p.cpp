#include "p2p/p2p.hpp"

#include <cmath>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

CopyMethod parse_copy_method(const std::string& text) {
  if (text == "write") return CopyMethod::write;
  if (text == "memcpy") return CopyMethod::memcpy;
  throw UsageError("unknown copy method '" + text + "'; valid: write, memcpy");
}

const char* to_string(CopyMethod method) { return method == CopyMethod::write ? "write" : "memcpy"; }

RouteOptions route_options(const P2pOptions& options) {
  RouteOptions route;
  route.peer_access = options.peer_access;
  route.mode = TransferMode::copy_engine;
  return route;
}

P2pBench::P2pBench(const Topology& topology, Runner& runner, P2pOptions options)
    : topology_(topology), runner_(runner), options_(options) {}

double P2pBench::overhead_s(int src, int dst) const {
  RouteKind kind = find_route(topology_, src, dst, route_options(options_)).kind;
  const CopyModel& from = topology_.gpu_model(src).copy;
  if (kind == RouteKind::host_staged) return from.memcpy_latency_s + topology_.gpu_model(dst).copy.memcpy_latency_s;
  return options_.method == CopyMethod::write ? from.write_latency_s : from.memcpy_latency_s;
}

double P2pBench::copy_time_s(int src, int dst, double size_B) {
  Schedule uni;
  uni.transfer(src, dst, size_B, {uni.delay(src, overhead_s(src, dst))});
  return runner_.run(uni).back().finish_s;
}

P2pPoint P2pBench::measure(int src, int dst, double size_B) {
  P2pPoint point;
  point.src = src;
  point.dst = dst;
  point.size_B = size_B;
  point.route = find_route(topology_, src, dst, route_options(options_)).kind;

  point.time_s = copy_time_s(src, dst, size_B);
  point.uni_Bps = size_B / point.time_s;

  Schedule bi;
  std::size_t forward = bi.transfer(src, dst, size_B, {bi.delay(src, overhead_s(src, dst))});
  std::size_t backward = bi.transfer(dst, src, size_B, {bi.delay(dst, overhead_s(dst, src))});
  auto timings = runner_.run(bi);
  point.bi_Bps = 2 * size_B / std::max(timings[forward].finish_s, timings[backward].finish_s);
  return point;
}

P2pMatrix measure_matrix(P2pBench& bench, int gpus, double size_B, double latency_size_B) {
  P2pMatrix matrix;
  matrix.size_B = size_B;
  matrix.latency_size_B = latency_size_B;
  for (int s = 0; s < gpus; ++s)
    for (int d = 0; d < gpus; ++d)
      if (s != d) {
        matrix.bandwidth.push_back(bench.measure(s, d, size_B));
        matrix.latency_s.push_back(bench.copy_time_s(s, d, latency_size_B));
      }
  return matrix;
}

std::vector<double> size_series(double begin_B, double end_B, double factor) {
  if (end_B < begin_B)
    throw UsageError("the last size (-e) " + shortest(end_B) + " B is below the first (-b) " + shortest(begin_B) + " B");
  if (!(factor > 1) && end_B > begin_B) throw UsageError("the size factor (-f) must be above 1 when -e exceeds -b");
  std::vector<double> sizes;
  for (double size = begin_B; size <= end_B; size = std::floor(size * factor)) {
    sizes.push_back(size);
    if (sizes.size() > 4096) throw UsageError("more than 4096 sizes; raise -f or narrow -b/-e");
    if (end_B == begin_B) break;
  }
  return sizes;
}

}  // namespace topsim
