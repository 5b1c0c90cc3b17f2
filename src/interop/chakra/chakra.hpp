#pragma once
// MLCommons Chakra execution traces (ET) in and out (docs/chakra.md). A Chakra trace is one file
// per rank, PREFIX.<rank>.et: a varint-length-delimited stream of one GlobalMetadata message and
// then Node messages (et_def.proto here). Reading turns the files into topsim's own trace (a
// per-rank op graph, model/workload_spec.hpp) that Replay runs; writing does the reverse. The
// protobuf types stay inside this library: nothing outside src/interop/chakra includes them.
#include <string>

#include "model/workload_spec.hpp"

namespace topsim {

struct ChakraReadOptions {
  /// How COMP_NODEs on the GPU are costed: their recorded `duration_micros`, or the compute
  /// model from their `num_ops` (FLOPs) and `tensor_size` (bytes) attributes.
  enum class Compute { duration, model };
  Compute compute = Compute::duration;
  std::string model_dtype = "fp16";  ///< math type of `num_ops` under Compute::model
  /// Follow `ctrl_deps` as well as `data_deps` (Chakra's own feeder, et_feeder.cpp, follows
  /// data_deps only: `false` reads a trace as it does).
  bool ctrl_deps = true;
  /// 0: one rank per file found. N > 1 with one file (PREFIX.0.et): that rank's trace stands for
  /// N ranks running the same nodes (an SPMD data-parallel job records the same graph on each).
  int ranks = 0;
};

/// What read_chakra found, for the run's header.
struct ChakraSummary {
  int files = 0;
  int ranks = 0;
  long long nodes = 0, host_nodes = 0, compute_nodes = 0, collective_nodes = 0, p2p_nodes = 0;
};

/// Reads PREFIX.<rank>.et for every rank. Throws InputError naming the file and the node id or
/// byte offset: a damaged stream (truncated varint or message, a message that does not parse), a
/// node type or attribute topsim cannot honour, a dependency on a node the file lacks, a cycle,
/// collectives or sends that do not match across ranks; UsageError for a missing rank file.
TraceSpec read_chakra(const std::string& prefix, const ChakraReadOptions& options, ChakraSummary* summary = nullptr);

/// Writes `trace` as PREFIX.<rank>.et, one file per rank (every rank, symmetric or not: a reader
/// needs no convention beyond Chakra's). Compute ops with a measured time become COMP_NODEs with
/// that duration (rounded to Chakra's whole microseconds); other compute costs carry `num_ops`
/// and `tensor_size`. Collectives become COMM_COLL_NODEs on each rank of their group (`pg_name`
/// the group's name), sends a COMM_SEND_NODE on the source and a COMM_RECV_NODE on the
/// destination (`comm_tag` counting the pair's transfers). `after` becomes `data_deps` on each
/// rank, a stream's order `ctrl_deps`. Returns the files written. InputError when a file cannot
/// be written; UsageError for an op Chakra cannot express (a compute stream other than
/// "compute" or "host").
std::vector<std::string> write_chakra(const std::string& prefix, const TraceSpec& trace);

}  // namespace topsim
