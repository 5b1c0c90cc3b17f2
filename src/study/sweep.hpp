#pragma once
// A sweep's grid run point by point: a sweep file's collectives (topologies x counts x ops x
// sizes x overrides) or a training scenario's variants x counts, one result row per point.
// Every platform of a shard is added before its first run, on one Batch.
#include <cstddef>
#include <functional>
#include <string>

#include "report/result_file.hpp"
#include "study/workspace.hpp"

namespace topsim {

/// Which points to run: every `count`-th from the `index`-th (1-based), and whom to tell.
struct SweepShard {
  int index = 1;
  int count = 1;
  /// Called after each point with (points done, points of this shard); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
};

/// A sweep file's points. `source` is the file as the user named it, so that results do not
/// depend on where the data lives. InputError at the file's keys; a point its topology cannot
/// run is a row with status "skipped: why".
ResultFile sweep_collectives(const std::string& path, const std::string& source, const Workspace& workspace,
                             const SweepShard& shard);

/// A training scenario's points (each variant at each count), one row of scenario_table each.
ResultFile sweep_scenario(const std::string& path, const std::string& source, const Workspace& workspace,
                          const SweepShard& shard);

}  // namespace topsim
