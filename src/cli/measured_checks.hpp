#pragma once
// What validate --measured, calibrate --measured and import nccl-tests refuse or flag in a user's
// nccl-tests log before anything is compared or solved: GPUs the log did not run on, and
// figures no run on the topology can reach (docs/validation.md, "Measured logs").
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "collectives/communicator.hpp"
#include "interop/nccl_tests_log.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// The bundled servers (topologies/*.json) holding any of `models`, by name; clusters are
/// replicated servers and are left out.
std::vector<std::string> bundled_servers_with(const Workspace& workspace, const std::vector<std::string>& models);

/// Checks that each rank of `run` ran on the model topsim runs it on: GPU gpus[i] of `t`, the
/// --gpu model when `gpu_option` is given. InputError (exit 2) at the rank's line naming the
/// log's GPU name, the model's, the models of models/gpus.json that print the log's name (or the
/// closest) and the bundled servers with them. A run that names no GPU, or a model without
/// device_names, is accepted with a note (once per command) that it could not be checked.
void check_run_gpus(const Workspace& workspace, const NcclTestsRun& run, const std::string& file, const Topology& t,
                    const std::vector<int>& gpus, const std::string& topology, const std::string& gpu_option);

/// A measured busbw above the ceiling of its communicator (Communicator::busbw_ceiling).
struct OverCeiling {
  std::size_t point = 0;    ///< index into run.points
  std::string column;       ///< "out-of-place" or "in-place"
  double busbw_GBps = 0;    ///< as the log printed it
};

/// The result lines of `run` whose out-of-place or in-place busbw is above `ceiling`.
std::vector<OverCeiling> over_ceiling(const NcclTestsRun& run, const Communicator::BusbwCeiling& ceiling);

/// "300 GB/s: gpu0's 12 x nvlink3 at 25 GB/s, one direction at line rate" (and what doubles it).
std::string ceiling_text(const Communicator::BusbwCeiling& ceiling, const Topology& t);

}  // namespace topsim
