#include "engine/invariants.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

namespace topsim {

namespace {

// Slack of the invariant checks: SimGrid's max-min solver works to 1e-5 relative
// (maxmin/precision), its clock to 1e-9 s (precision/timing), and a flow completes when fewer
// bytes than that precision remain. A modelling bug is orders of magnitude beyond these.
constexpr double kInvariantRelative = 1e-5;
constexpr double kInvariantTime_s = 1e-9;
constexpr double kInvariantBytes = 1.0;

}  // namespace

void check_run(const Platform& p, const std::vector<Segment>& segments, const Schedule& schedule,
               const std::vector<OpTiming>& timings, const std::vector<double>& moved_B) {
  auto fail = [](const std::string& what) { throw std::logic_error("Simulator: invariant violated: " + what); };
  auto g = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.12g", v);
    return std::string(text);
  };
  auto within = [](double value, double limit) { return value <= limit * (1 + kInvariantRelative) + kInvariantTime_s; };
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& op = schedule.ops[i];
    const double took_s = timings[i].finish_s - timings[i].start_s;
    // No op is faster than its analytical lower bound: its delay, or its latency plus its bytes
    // at the narrowest resource of its route.
    double least_s = op.delay_s;
    if (op.kind == Op::Kind::transfer) {
      const PairRoute& route = p.pairs.at({op.src_gpu, op.dst_gpu});
      least_s = (op.route_latency ? route.latency_s : 0) + op.size_B / route.bottleneck_Bps;
    } else if (op.kind == Op::Kind::composite) {
      least_s = op.size_B / p.composite_bottleneck_Bps[op.composite];
    }
    if (!within(least_s, took_s))
      fail("op " + std::to_string(i) + " took " + g(took_s) + " s, less than its lower bound " +
           g(least_s) + " s");
    // Every byte handed to the engine arrives, and no more.
    if (op.kind != Op::Kind::delay && std::abs(moved_B[i] - std::llround(op.size_B)) > kInvariantBytes + op.size_B * kInvariantRelative)
      fail("op " + std::to_string(i) + " moved " + g(moved_B[i]) + " B of " + g(op.size_B));
  }
  // No link direction carries more than its capacity between two events. Segments of one event
  // interval are consecutive and share their bounds.
  std::map<std::uint32_t, double> interval_B;
  for (std::size_t first = 0; first < segments.size();) {
    std::size_t last = first;
    interval_B.clear();
    for (; last < segments.size() && segments[last].start_s == segments[first].start_s &&
           segments[last].end_s == segments[first].end_s;
         ++last)
      for (std::uint32_t id : *segments[last].links) interval_B[id] += segments[last].bytes_B;
    double length_s = segments[first].end_s - segments[first].start_s;
    for (const auto& [id, bytes] : interval_B)
      if (!(bytes <= p.links[id].capacity_Bps * (length_s * (1 + kInvariantRelative) + kInvariantTime_s) + kInvariantBytes))
        fail(p.links[id].name + " carried " + g(bytes) + " B in " + g(length_s) +
             " s, more than its capacity of " + g(p.links[id].capacity_Bps) + " B/s");
    first = last;
  }
}

}  // namespace topsim
