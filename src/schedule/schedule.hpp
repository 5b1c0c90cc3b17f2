#pragma once
// What to simulate, as plain data: transfers between GPUs and fixed delays, with dependencies.
// Built by p2p, collectives and workloads; replayed by the engine (or by a fake in tests).
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace topsim {

class RouteTable;  // routing/route_table.hpp: held here, used by the engine only

struct Op {
  enum class Kind {
    transfer,   ///< bytes from one GPU to another over their route, route latency included
    composite,  ///< bytes over every hop of a declared composite route at once (a pipelined ring)
    delay,      ///< a fixed time
  };
  Kind kind = Kind::delay;
  int src_gpu = -1;   ///< transfer: sender; delay: the GPU it happens on
  int dst_gpu = -1;   ///< transfer: receiver
  std::size_t composite = 0;  ///< composite: index into the platform's declared composites
  double size_B = 0;  ///< transfer, composite: bytes, whole bytes
  double delay_s = 0; ///< delay: fixed time (software overhead, kernel launch, protocol step)
  bool route_latency = true;  ///< transfer: pay the route's latency first (off when a delay models it)
  std::vector<std::size_t> after;  ///< ops that must finish before this one starts (earlier indices)
};

struct Schedule {
  std::vector<Op> ops;

  std::size_t transfer(int src_gpu, int dst_gpu, double size_B, std::vector<std::size_t> after = {},
                       bool route_latency = true);
  std::size_t composite(std::size_t index, double size_B, std::vector<std::size_t> after = {});
  std::size_t delay(int gpu, double delay_s, std::vector<std::size_t> after = {});
};

/// A flow that crosses, once, every hop of a list of GPU-to-GPU routes (a ring, the edges of a
/// tree). A pipelined collective moves all of its hops at the pace of the slowest, which is
/// exactly what one flow over their union does under max-min sharing.
struct CompositeHop {
  int src = 0;       ///< GPU ordinal
  int dst = 0;       ///< GPU ordinal
  int src_nic = -1;  ///< NIC ordinals when the hop crosses the network through chosen NICs
  int dst_nic = -1;
};

struct Composite {
  std::vector<CompositeHop> hops;
  std::optional<double> cap_Bps;  ///< throughput limit of the flow itself (its channels' SMs)
};

/// What a platform must carry. SimGrid fixes routes when the platform is sealed (at the first
/// run), so they are declared up front, before the engine builds it.
struct PlatformNeeds {
  bool all_pairs = true;                    ///< a route for every ordered GPU pair
  std::vector<std::pair<int, int>> pairs;   ///< else routes for these (src, dst) pairs only
  std::vector<Composite> composites;
  /// The table the composites' routes were weighed with (a communicator's), or null. When it
  /// serves the platform's topology and options, the engine takes routes and resources from it
  /// instead of routing again.
  std::shared_ptr<RouteTable> routes;
};

/// When an op started and finished, seconds since the schedule began.
struct OpTiming {
  double start_s = 0;
  double finish_s = 0;
};

/// Replays schedules. The engine implements it with SimGrid; tests use recording fakes.
class Runner {
 public:
  virtual ~Runner() = default;
  /// Timings of every op, in op order. Ops without dependencies start at 0.
  virtual std::vector<OpTiming> run(const Schedule& schedule) = 0;
};

}  // namespace topsim
