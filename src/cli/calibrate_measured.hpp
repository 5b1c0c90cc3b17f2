#pragma once
// topsim calibrate --measured LOG... --topology T --out DIR: the constants a user's nccl-tests
// logs pin, solved for their machine and written as a models overlay (io/model_overlay.hpp).
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace topsim {

struct MeasuredCalibrationArgs {
  std::vector<std::string> logs;  ///< --measured
  std::string topology;           ///< --topology
  int nodes = 0;                  ///< --nodes (0: each log's host count)
  std::string op;                 ///< --op, for runs that do not name their program
  std::string gpu;                ///< --gpu: the model the logs ran on, replacing the topology's
  std::string out;                ///< --out: the overlay directory to write
  std::string leave_out;          ///< --leave-out SIZE-RANGE
  bool split = false;             ///< --split: hold out every other size
  int jobs = 1;
  bool quiet = false;             ///< --quiet: no progress line
};

/// Refuses (InputError) logs that ran on another GPU model than the topology's (or --gpu's) and
/// busbw figures above their physical ceiling (cli/measured_checks.hpp). Solves, prints the constants, what was not pinned and why, and the error before and after
/// (on the held-out rows too), then writes DIR whole (a temporary beside it, renamed).
void run_measured_calibration(Context& context, const MeasuredCalibrationArgs& args);

}  // namespace topsim
