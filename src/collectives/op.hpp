#pragma once
// NCCL collectives as nccl-tests names and measures them: operations, data types, the sizes and
// element counts it prints, and the bus-bandwidth factor that turns algbw into busbw.
#include <optional>
#include <string>
#include <vector>

namespace topsim {

enum class Proto { ll, ll128, simple };
enum class CollOp { allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv };
/// NCCL's algorithms; collnet is CollNet over SHARP switches, which NCCL runs only when asked
/// (NCCL_COLLNET_ENABLE=1 with the SHARP plugin), so topsim never picks it by itself. direct is
/// how point-to-point operations (sendrecv, alltoall) run: not tuned, one channel set per peer.
/// nvls_tree is NVLS inside servers with trees across them (2.18+); pat (2.23+) is a name NCCL's
/// tuner weighs for which topsim has no planner yet, so it is never chosen (docs/nccl.md).
enum class Algo { ring, tree, nvls, direct, collnet, nvls_tree, pat };
const std::vector<Algo>& all_algos();
const std::vector<Proto>& all_protos();

const std::vector<CollOp>& all_ops();
const char* to_string(CollOp op);
const char* to_string(Algo algo);
const char* to_string(Proto proto);
/// Parse names as the CLI writes them ("allreduce", "all_reduce", "ring", "ll128"); UsageError
/// listing the valid names otherwise.
CollOp parse_op(const std::string& text);
Algo parse_algo(const std::string& text);
Proto parse_proto(const std::string& text);

struct DataType {
  std::string name;  ///< nccl-tests' name: "float", "half", "bfloat16", ...
  int size_B = 4;
};
/// nccl-tests' types (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3
/// f8e5m2) and common aliases (fp32, fp16, bf16, fp64, char); UsageError otherwise.
DataType parse_dtype(const std::string& text);

bool is_rooted(CollOp op);
bool is_reduction(CollOp op);

/// nccl-tests' busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter and
/// alltoall, 1 for broadcast, reduce and sendrecv.
double busbw_factor(CollOp op, int ranks);

/// What nccl-tests runs for a requested size: the byte count it prints (rounded down so that it
/// splits evenly over ranks where the op needs it) and the element count it prints.
struct CollSize {
  double size_B = 0;     ///< the "size" column
  long long count = 0;   ///< the "count" column (per-rank count for allgather, reducescatter, alltoall)
};
CollSize nccl_tests_size(CollOp op, double requested_B, const DataType& type, int ranks);

/// Bytes to charge a pipeline of `hops` stages so that one flow over all of them takes as long
/// as the pipeline: `bytes` cross in ceil(channel_B / chunk_B) chunks per channel, and the last
/// stage starts once the first chunk has crossed the others, (hops + chunks - 1) / chunks.
double pipelined_B(double bytes, double channel_B, double chunk_B, double hops);

/// The chunk NCCL's Simple tree moves: the protocol step, halved while a channel has fewer than
/// 8 chunks per tree level (down to 128 KiB), 4 (64 KiB), 1 (32 KiB), so that deep trees fill
/// (NVIDIA/nccl src/enqueue.cc, chunk size tuning for ncclPatternTreeUpDown). `depth`: ranks
/// from a leaf to the root.
double tree_chunk_B(double step_B, double channel_B, int depth);

}  // namespace topsim
