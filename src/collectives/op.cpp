#include "collectives/op.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

const std::vector<CollOp>& all_ops() {
  static const std::vector<CollOp> ops = {CollOp::allreduce, CollOp::allgather, CollOp::reducescatter, CollOp::broadcast,
                                          CollOp::reduce,    CollOp::alltoall,  CollOp::sendrecv};
  return ops;
}

const char* to_string(CollOp op) {
  switch (op) {
    case CollOp::allreduce: return "allreduce";
    case CollOp::allgather: return "allgather";
    case CollOp::reducescatter: return "reducescatter";
    case CollOp::broadcast: return "broadcast";
    case CollOp::reduce: return "reduce";
    case CollOp::alltoall: return "alltoall";
    case CollOp::sendrecv: return "sendrecv";
  }
  return "?";
}

const char* to_string(Algo algo) {
  switch (algo) {
    case Algo::ring: return "ring";
    case Algo::tree: return "tree";
    case Algo::nvls: return "nvls";
    case Algo::collnet: return "collnet";
    case Algo::direct: return "direct";
    case Algo::nvls_tree: return "nvls_tree";
    case Algo::pat: return "pat";
  }
  return "?";
}

const char* to_string(Proto proto) {
  switch (proto) {
    case Proto::ll: return "ll";
    case Proto::ll128: return "ll128";
    case Proto::simple: return "simple";
  }
  return "?";
}

namespace {

std::string normalise(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  return text;
}

template <typename Enum>
Enum parse_named(const std::string& text, const std::vector<Enum>& values, const char* what) {
  std::vector<std::string> names;
  for (Enum v : values) {
    if (normalise(text) == normalise(to_string(v))) return v;
    names.push_back(to_string(v));
  }
  throw UsageError(unknown_name_message(what, text, names));
}

}  // namespace

CollOp parse_op(const std::string& text) { return parse_named(text, all_ops(), "operation"); }
const std::vector<Algo>& all_algos() {
  static const std::vector<Algo> algos = {Algo::ring, Algo::tree, Algo::nvls, Algo::direct, Algo::collnet, Algo::nvls_tree, Algo::pat};
  return algos;
}
const std::vector<Proto>& all_protos() {
  static const std::vector<Proto> protos = {Proto::ll, Proto::ll128, Proto::simple};
  return protos;
}
Algo parse_algo(const std::string& text) {
  // NCCL_ALGO names CollNet's two variants; topsim runs one CollNet planner for both.
  std::string name = normalise(text);
  if (name == "collnetdirect" || name == "collnetchain") return Algo::collnet;
  return parse_named(text, all_algos(), "algorithm");
}
Proto parse_proto(const std::string& text) { return parse_named(text, all_protos(), "protocol"); }

DataType parse_dtype(const std::string& text) {
  static const std::vector<std::pair<std::vector<std::string>, DataType>> types = {
      {{"int8", "char"}, {"int8", 1}},          {{"uint8"}, {"uint8", 1}},
      {{"int32", "int"}, {"int32", 4}},         {{"uint32"}, {"uint32", 4}},
      {{"int64"}, {"int64", 8}},                {{"uint64"}, {"uint64", 8}},
      {{"half", "fp16", "float16"}, {"half", 2}}, {{"float", "fp32", "float32"}, {"float", 4}},
      {{"double", "fp64", "float64"}, {"double", 8}}, {{"bfloat16", "bf16"}, {"bfloat16", 2}},
      {{"f8e4m3", "fp8_e4m3"}, {"f8e4m3", 1}},  {{"f8e5m2", "fp8_e5m2"}, {"f8e5m2", 1}}};
  std::vector<std::string> names;
  for (const auto& [aliases, type] : types) {
    for (const auto& alias : aliases)
      if (alias == text) return type;
    names.push_back(type.name);
  }
  throw UsageError(unknown_name_message("data type", text, names));
}

bool is_rooted(CollOp op) { return op == CollOp::broadcast || op == CollOp::reduce; }
bool is_reduction(CollOp op) {
  return op == CollOp::allreduce || op == CollOp::reducescatter || op == CollOp::reduce;
}

double busbw_factor(CollOp op, int ranks) {
  double n = ranks;
  switch (op) {
    case CollOp::allreduce: return 2 * (n - 1) / n;
    case CollOp::allgather:
    case CollOp::reducescatter:
    case CollOp::alltoall: return (n - 1) / n;
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::sendrecv: return 1;
  }
  return 1;
}

CollSize nccl_tests_size(CollOp op, double requested_B, const DataType& type, int ranks) {
  long long count = static_cast<long long>(std::floor(requested_B / type.size_B));
  CollSize size;
  switch (op) {
    case CollOp::allgather:
    case CollOp::reducescatter:
    case CollOp::alltoall: {
      long long per_rank = count / ranks;
      size.count = per_rank;
      size.size_B = static_cast<double>(per_rank) * ranks * type.size_B;
      break;
    }
    default:
      size.count = count;
      size.size_B = static_cast<double>(count) * type.size_B;
  }
  return size;
}

double pipelined_B(double bytes, double channel_B, double chunk_B, double hops) {
  double chunks = std::max(1.0, std::ceil(channel_B / chunk_B));
  return bytes * (hops + chunks - 1) / chunks;
}

double tree_chunk_B(double step_B, double channel_B, int depth) {
  // NCCL's thresholds: (chunks per level wanted, smallest chunk it halves down to).
  constexpr std::pair<double, double> kHalving[] = {{8, 131072}, {4, 65536}, {1, 32768}};
  double chunk = step_B;
  for (const auto& [per_level, smallest] : kHalving)
    while (channel_B / chunk < per_level * depth && chunk > smallest) chunk /= 2;
  return chunk;
}

}  // namespace topsim
