#pragma once
// Published measurements as stored in scenarios/validation/*.json. Plain data.
#include <optional>
#include <string>
#include <vector>

#include "model/llm_spec.hpp"
#include "model/sequence_lengths.hpp"
#include "model/source_ref.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

struct ValidationRow {
  std::string id;
  std::string kind;                ///< "p2p" (p2pBandwidthLatencyTest), "coll" (nccl-tests), "training", "llm", "kernel" or "inference"
  std::string topology;            ///< bundled name or path
  std::string metric;              ///< p2p: uni_GBps, bi_GBps, latency_us; coll: busbw_GBps, time_us; kernel: time_us
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
  std::string nccl;                ///< coll: the NCCL release the table printed ("" when it did not)
  // training: one point of a scenario (metric throughput or speedup)
  std::string scenario;            ///< scenarios/ path or bundled name
  std::string variant;             ///< "" = the scenario's first
  int count = 0;                   ///< the scenario's GPU or server count of the point
  // llm: one training iteration of a transformer (model) under a layout on `count` GPUs of
  // `topology` (servers as many as they need), GPU model `gpu` when given
  std::string model;               ///< a transformer of models/transformers.json
  LlmLayout layout;
  // kernel: one GEMM timed alone on one GPU
  std::string gpu;                 ///< GPU model name
  double gemm_m = 0, gemm_n = 0, gemm_k = 0;
  bool sparse = false;             ///< 2:4 structured sparse weights
  // inference: a model served on `count` copies of GPU `gpu` (or MIG instances of it)
  std::string mig;                 ///< MIG profile, "" for the whole GPU
  double batch = 0;                ///< 0: the scenario picks the batch
  int seq = 0;                     ///< tokens per sequence (transformers)
  /// encoder: the data set's lengths ("seq_dist", a file relative to the validation file's
  /// directory); empty: every sequence has seq tokens
  SequenceLengths seq_lengths;
  std::string precision;           ///< fp32, tf32, fp16, bf16, fp8, int8
  std::string framework;           ///< tensorrt, pytorch
  std::string serving;             ///< offline, server, single-stream ("" = one batch's latency)

  double measured_low = 0;         ///< a single figure has low == high
  double measured_high = 0;
  /// "calibration" (pins one fitted constant), "check" (nothing was solved on it), "repeat" (the
  /// same published figure as another row: shown, never counted), "informational" (not an
  /// independent measurement) or "pending" (names hardware topsim cannot express yet).
  std::string role;
  std::string pins;                ///< calibration: the id of the fitted constant it pins
  std::string repeats;             ///< repeat: the id of the row it repeats
  std::string missing;             ///< pending: what topsim lacks to predict it
  std::string note;
  /// Relative uncertainty of the published figure: how far a calibration row may sit from a
  /// least-squares solution before the rows that pin one constant count as inconsistent.
  std::optional<double> tolerance;
  std::string source;              ///< id of a source declared in the file's "sources"
  std::string citation;            ///< that source's full citation
  SourceRef where;

  double measured() const { return (measured_low + measured_high) / 2; }
};

/// What a row measures, for the accuracy summary: "busbw>=64MiB" (one server), "time<64MiB"
/// (one server, any metric below 64 MiB), "multinode" (collectives across servers), "p2p",
/// "training" (throughput and speedup), "llm" (transformer training under a layout), "kernel",
/// "inference" (serving a whole GPU), "mig" (serving MIG instances), "sparsity" (2:4 sparse serving). `servers`: how many servers the row's GPUs
/// span (known once its topology is built; pending rows pass 1).
std::string quantity_of(const ValidationRow& row, int servers);
/// A collective's quantity by its size: busbw from 64 MiB up ("busbw>=64MiB"), time below ("time<64MiB").
const char* size_quantity(double size_B);

struct ValidationFile {
  std::vector<ValidationRow> rows;
};

}  // namespace topsim
