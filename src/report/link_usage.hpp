#pragma once
// A run's per-link load as a file (JSON, read back by io's load_link_usage) and as a heat map.
#include <cstddef>
#include <string>

#include "model/link_usage.hpp"
#include "report/chart.hpp"

namespace topsim {

/// {"link_usage": {"source", "duration_s", "bin_s", "links": [{"link", "capacity_GBps",
/// "bytes_B", "mean_utilisation", "peak_utilisation", "utilisation": [...]}]}}: bytes an
/// integer; utilisations rounded to 1e-4, so the same run writes the same bytes and none reads
/// back above 1 (io's loader checks [0, 1]). bytes_B / capacity_GBps is the busy time `coll`'s
/// bound ranks resources by (resource_busy_s).
std::string link_usage_json(const LinkUsage& usage);

/// Links that carried bytes, top to bottom in topology order; beyond `max_rows`, the busiest
/// (by bytes) are kept and the title says how many are left out. Time in milliseconds.
HeatMap heat_map(const LinkUsage& usage, std::size_t max_rows = 64);

}  // namespace topsim
