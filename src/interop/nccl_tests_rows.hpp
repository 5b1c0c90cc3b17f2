#pragma once
// nccl-tests runs as validation rows (scenarios/validation/*.json, docs/formats.md §4): one row
// per result line, out-of-place, busbw from 64 MiB and time below (as nccl-public.json).
#include <map>
#include <string>
#include <vector>

#include "interop/nccl_tests_log.hpp"
#include "model/validation_spec.hpp"

namespace topsim {

/// The topsim operation of a run: its program (all_reduce_perf -> "allreduce"), or `op` (a topsim
/// operation name) for a run that does not name its program. InputError at the line that names
/// an operation topsim does not model (gather_perf, scatter_perf, alltoallv_perf, hypercube_perf).
std::string operation_of(const NcclTestsRun& run, const std::string& file, const std::string& op);

/// One line about the machine a run read: "8 GPUs (NVIDIA A100-SXM4-80GB) on 1 host (node1), NCCL 2.18.5".
std::string machine_of(const NcclTestsRun& run);

/// Rows of every run of every log, on `topology` replicated to `nodes` servers (0: the log's host
/// count when it is more than one). Each log is one source, its id from the file name.
struct MeasuredRows {
  std::string description;
  std::map<std::string, std::string> sources;  ///< source id -> what it is (file, machine, command)
  std::vector<ValidationRow> rows;
};
/// `gpu`, when given, is the model the logs ran on, written into each row (replacing the
/// topology's, as --gpu does).
MeasuredRows measured_rows(const std::vector<NcclTestsLog>& logs, const std::string& topology, int nodes,
                           const std::string& op, const std::string& gpu = "");

/// The rows as a validation file that `topsim validate FILE` reads back.
std::string write_validation_json(const MeasuredRows& rows);

}  // namespace topsim
