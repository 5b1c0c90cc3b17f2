#pragma once
// A published measurement as stored in scenarios/validation/*.json. Plain data.
#include <optional>
#include <string>

#include "model/source_ref.hpp"

namespace topsim {

struct ValidationRow {
  std::string id;
  std::string topology;            ///< bundled name or path
  std::string metric;              ///< "uni_GBps", "bi_GBps", "latency_us"
  int src = 0;
  int dst = 1;
  double size_B = 0;
  std::string method = "write";    ///< CopyMethod name
  bool peer_access = true;
  double measured_low = 0;         ///< a single figure has low == high
  double measured_high = 0;
  std::string role;                ///< "calibration" (a parameter was fitted on it) or "check"
  std::optional<double> tolerance; ///< relative; rows without one are reported, not gated
  std::string source;
  SourceRef where;

  double measured() const { return (measured_low + measured_high) / 2; }
};

}  // namespace topsim
