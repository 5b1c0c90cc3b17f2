#pragma once
// Published measurements as stored in scenarios/validation/*.json. Plain data.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

struct ValidationRow {
  std::string id;
  std::string kind;                ///< "p2p" (p2pBandwidthLatencyTest), "coll" (nccl-tests) or "training"
  std::string topology;            ///< bundled name or path
  std::string metric;              ///< p2p: uni_GBps, bi_GBps, latency_us; coll: busbw_GBps, time_us
  double size_B = 0;
  bool peer_access = true;
  // p2p
  int src = 0;
  int dst = 1;
  std::string method = "write";    ///< CopyMethod name
  // coll
  std::string op;                  ///< CollOp name
  std::vector<int> gpus;           ///< GPU ordinals in rank order
  std::string dtype = "float";
  std::string algo;                ///< forced algorithm, "" for NCCL's choice
  std::string proto;               ///< forced protocol, "" for NCCL's choice
  ScaleOut scale;                  ///< servers, NICs: replicate `topology` as `topsim coll --nodes` does
  bool gpu_direct = true;          ///< false: NIC traffic through host memory (--no-gdr)
  // training: one point of a scenario (metric throughput or speedup)
  std::string scenario;            ///< scenarios/ path or bundled name
  std::string variant;             ///< "" = the scenario's first
  int count = 0;                   ///< the scenario's GPU or server count of the point

  double measured_low = 0;         ///< a single figure has low == high
  double measured_high = 0;
  std::string role;                ///< "calibration" (a parameter was fitted on it) or "check"
  std::optional<double> tolerance; ///< relative; rows without one are reported, not gated
  std::string source;
  SourceRef where;

  double measured() const { return (measured_low + measured_high) / 2; }
};

/// An accuracy target over every row of one metric: geometric mean and worst of |error|.
struct ValidationTarget {
  std::string metric;
  std::optional<double> geomean;
  std::optional<double> worst;
  SourceRef where;
};

struct ValidationFile {
  std::vector<ValidationRow> rows;
  std::vector<ValidationTarget> targets;
};

}  // namespace topsim
