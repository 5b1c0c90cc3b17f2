#pragma once
// topsim validate --measured LOG --topology T: a user's nccl-tests output against topsim's
// prediction of the same runs, per size and operation.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/coll_common.hpp"
#include "cli/common.hpp"
#include "interop/nccl_tests_log.hpp"
#include "topology/topology.hpp"

namespace topsim {

struct MeasuredArgs {
  std::vector<std::string> logs;  ///< --measured: nccl-tests stdout or -J JSON files
  std::string topology;           ///< --topology
  std::string op;                 ///< --op: the operation of runs that do not name their program
  std::string gpu;                ///< --gpu: the model the logs ran on, replacing the topology's (a what-if)
  RequestArgs request;            ///< coll's request options (the log's type column wins over -d)
  ScaleOut scale;                 ///< --nodes, --nic, --nics-per-node
  std::vector<std::string> options;  ///< the names of the options above, which mean nothing without --measured
};

/// Adds --measured, --topology, --op, --gpu and coll's request and scale-out options to `validate`.
/// UsageError from check_measured_options when one of them is given without --measured.
void add_measured_options(CLI::App& validate, MeasuredArgs& args);

/// The servers a run asks of the topology: `asked` (--nodes ...), with nodes set to the run's host
/// count when it has several; InputError when --nodes names another count.
ScaleOut run_scale_out(const NcclTestsRun& run, const std::string& file, const ScaleOut& asked);

/// The GPUs of `t` the run's ranks ran on, in rank order: CUDA ordinal d of the h-th host is GPU
/// d of server h (a log without rank lines: the first GPUs). InputError when the run does not fit:
/// more GPUs or hosts than `t` has, a device a server lacks, two ranks on one device.
std::vector<int> gpus_of_run(const NcclTestsRun& run, const std::string& file, const Topology& t,
                             const std::string& topology);

void check_measured_options(const CLI::App& validate, const MeasuredArgs& args);

/// The comparison as `format` text (table: with the accuracy headline). InputError for a log
/// that does not fit the topology, ran on another GPU model (measured_checks.hpp) or names an
/// operation topsim does not model. Rows above their physical ceiling are flagged and left out
/// of the errors.
std::string measured_report(Context& context, const MeasuredArgs& args, Format format);

}  // namespace topsim
