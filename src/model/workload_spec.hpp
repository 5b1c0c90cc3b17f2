#pragma once
// Workloads as plain data: traces (a per-rank graph of compute, collectives and sends, as
// scenarios/*.trace.json or generated from a training scenario) and training scenarios
// (scenarios/*.json). No JSON here; io reads them.
#include <optional>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/source_ref.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// One node of a trace. Ranks are the trace's GPUs in order (rank r = the topology's r-th GPU).
struct TraceOp {
  enum class Kind {
    compute,     ///< a kernel on each of `ranks`
    collective,  ///< a NCCL collective over `group`
    send,        ///< bytes from rank `src` to rank `dst`
  };
  std::string name;  ///< unique in the trace
  Kind kind = Kind::compute;
  /// compute: the ranks it runs on (each its own instance); empty means every rank.
  std::vector<int> ranks;
  /// Ops that must finish first: on each rank this op runs on, the instance of each that runs
  /// there (a rank an op in `after` does not run on has nothing to wait for from it). Each op in
  /// `after` must run on at least one of this op's ranks.
  std::vector<std::string> after;
  /// CUDA-stream-like order: on each rank, ops of one stream run in trace order. Defaults:
  /// "compute" for compute ops, "comm" for collectives and sends.
  std::string stream;

  // compute: exactly one of kernel-with-shape, bytes only, flops (+ bytes), or a measured time.
  enum class Cost { gemm, conv, memory, flops, time };
  Cost cost = Cost::time;
  double m = 0, n = 0, k = 0;  ///< gemm, conv
  double batch = 1;            ///< gemm: independent GEMMs of the shape
  std::string dtype = "fp16";  ///< math type (gemm, conv, flops); collective: NCCL type name
  bool sparse = false;         ///< gemm, conv: 2:4 sparse weight operand
  double flops = 0;            ///< flops: math at the GPU's large-GEMM rate of dtype
  double bytes_B = 0;          ///< memory, flops: bytes read plus written
  double time_s = 0;           ///< time: measured duration

  // collective
  std::string op;              ///< nccl-tests name: allreduce, allgather, ...
  std::string group;           ///< a group of the trace; "world" is every rank
  double size_B = 0;           ///< collective, send: bytes as nccl-tests counts them
  int root = 0;

  // send
  int src = 0, dst = 0;

  SourceRef where;
};

struct TraceGroup {
  std::string name;
  std::vector<int> ranks;
  SourceRef where;
};

struct TraceSpec {
  std::string description;
  int ranks = 0;
  double samples = 0;  ///< samples one iteration processes over all ranks (0: no throughput)
  std::vector<TraceGroup> groups;  ///< "world" implied
  std::vector<TraceOp> ops;
  SourceRef where;
};

/// Which effects of 2:4 structured sparsity a training run takes (each a switch, so that a
/// planner sees where each pays).
struct SparsitySwitches {
  bool math = false;       ///< forward GEMMs of prunable layers on sparse tensor cores
  bool weights = false;    ///< prunable weights stored compressed (values + 2-bit indices)
  bool gradients = false;  ///< gradient allreduce carries only the kept half of prunable weights
  bool any() const { return math || weights || gradients; }
};

struct TrainingSpec {
  std::string network;          ///< a network of models/networks.json
  std::string framework;        ///< a training framework of models/frameworks.json
  std::string optimizer;        ///< an optimizer of models/frameworks.json
  double batch_per_gpu = 0;     ///< samples per data-parallel replica per iteration (per GPU without tensor parallelism)
  std::string precision = "amp";  ///< amp (fp16 math, fp32 master weights), bf16, tf32, fp32
  std::optional<std::string> gradient_dtype;  ///< NCCL type of the gradient allreduce; default the framework's
  std::optional<double> bucket_B;             ///< gradient bucket; default the framework's
  std::optional<double> step_time_s;          ///< measured one-GPU iteration: compute times are scaled to it
  int tensor_parallel = 1;      ///< Megatron-style tensor-parallel group size (consecutive ranks); the rest is data parallel
  SparsitySwitches sparsity;
};

/// One column of a run or comparison: the scenario with some of its settings replaced.
struct Variant {
  std::string name;
  std::string topology;          ///< "" = the scenario's
  std::string gpu;               ///< GPU model replacing every GPU's, "" = none
  std::string nic;               ///< NIC model or port type replacing every NIC's, "" = none
  int nics_per_node = 0;
  std::optional<SparsitySwitches> sparsity;
  std::optional<double> batch_per_gpu;
  std::optional<int> tensor_parallel;
  SourceRef where;
};

struct ScenarioSpec {
  std::string description;
  std::string topology;          ///< server or cluster: bundled name or path
  TrainingSpec training;
  std::vector<int> gpus;         ///< GPU counts within one server, or
  std::vector<int> nodes;        ///< server counts (every GPU of each)
  std::vector<Variant> variants; ///< at least one (the scenario itself when the file names none)
  std::string nccl;              ///< NCCL release whose tuner chooses ("" for the default line)
  Sources sources;
  SourceRef where;
};

}  // namespace topsim
