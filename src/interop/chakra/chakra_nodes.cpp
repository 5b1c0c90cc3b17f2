#include "interop/chakra/chakra_nodes.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

// Attributes that PyTorch's execution-trace observer and Chakra's converter record to name,
// locate or order a node (its schema, thread, parent, sequence number); none changes its cost.
const std::set<std::string>& descriptive_attrs() {
  static const std::set<std::string> names = {"fw_parent", "fw_tid", "op_schema", "rf_id", "scope", "seq_id", "tid"};
  return names;
}

const char* honoured_attrs =
    "is_cpu_op, comm_type, comm_size, comm_src, comm_dst, comm_tag, pg_name, involved_dim (all true), num_ops, "
    "tensor_size; descriptive (no effect on time): fw_parent, fw_tid, op_schema, rf_id, scope, seq_id, tid";

std::string type_name(int type) {
  if (ChakraProtoMsg::NodeType_IsValid(type)) return ChakraProtoMsg::NodeType_Name(static_cast<ChakraProtoMsg::NodeType>(type));
  return "node type " + std::to_string(type) + " (not in et_def.proto)";
}

struct AttrReader {
  const std::string& path;
  const ChakraNode& node;

  [[noreturn]] void fail(const std::string& message) const { throw InputError(path, node_place(node), message); }

  long long integer(const AttributeProto& a) const {
    switch (a.value_case()) {
      case AttributeProto::kInt32Val: return a.int32_val();
      case AttributeProto::kInt64Val: return a.int64_val();
      case AttributeProto::kUint32Val: return a.uint32_val();
      case AttributeProto::kUint64Val: return static_cast<long long>(a.uint64_val());
      case AttributeProto::kSint32Val: return a.sint32_val();
      case AttributeProto::kSint64Val: return a.sint64_val();
      case AttributeProto::kFixed32Val: return a.fixed32_val();
      case AttributeProto::kFixed64Val: return static_cast<long long>(a.fixed64_val());
      case AttributeProto::kSfixed32Val: return a.sfixed32_val();
      case AttributeProto::kSfixed64Val: return a.sfixed64_val();
      default: fail("attribute '" + a.name() + "' must be an integer (int32/int64/uint32/uint64/sint/fixed value)");
    }
  }
  double number(const AttributeProto& a) const {
    if (a.value_case() == AttributeProto::kDoubleVal) return a.double_val();
    if (a.value_case() == AttributeProto::kFloatVal) return a.float_val();
    double v = static_cast<double>(integer(a));
    if (v < 0) fail("attribute '" + a.name() + "' must not be negative");
    return v;
  }
  bool boolean(const AttributeProto& a) const {
    if (a.value_case() != AttributeProto::kBoolVal) fail("attribute '" + a.name() + "' must be a bool_val");
    return a.bool_val();
  }
};

// Chakra's CollectiveCommType -> nccl-tests' name; the rest cannot run through NCCL's model.
std::string collective_name(long long type, const AttrReader& at) {
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE: return "allreduce";
    case ChakraProtoMsg::REDUCE: return "reduce";
    case ChakraProtoMsg::ALL_GATHER: return "allgather";
    case ChakraProtoMsg::BROADCAST: return "broadcast";
    case ChakraProtoMsg::ALL_TO_ALL: return "alltoall";
    case ChakraProtoMsg::REDUCE_SCATTER: return "reducescatter";
    default: break;
  }
  std::string name = ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))
                         ? ChakraProtoMsg::CollectiveCommType_Name(static_cast<ChakraProtoMsg::CollectiveCommType>(type))
                         : std::to_string(type);
  at.fail("comm_type " + name + " is not supported; supported: ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, "
          "REDUCE_SCATTER (NCCL's collectives)");
}

ChakraNode parse_node(const Node& n, std::size_t offset, const std::string& path, const ChakraReadOptions& options, int ranks) {
  ChakraNode node;
  node.id = n.id();
  node.name = n.name();
  node.offset = offset;
  node.duration_s = static_cast<double>(n.duration_micros()) * 1e-6;
  AttrReader at{path, node};
  const int type = n.type();
  if (type != ChakraProtoMsg::COMP_NODE && type != ChakraProtoMsg::COMM_COLL_NODE && type != ChakraProtoMsg::COMM_SEND_NODE &&
      type != ChakraProtoMsg::COMM_RECV_NODE)
    at.fail(type_name(type) + " is not supported; supported: COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE");
  bool cpu = false;
  std::optional<long long> comm_type, comm_src, comm_dst, comm_tag;
  std::optional<double> comm_size;
  for (const AttributeProto& a : n.attr()) {
    const std::string& name = a.name();
    if (descriptive_attrs().count(name) != 0) continue;
    if (name == "is_cpu_op") cpu = at.boolean(a);
    else if (name == "comm_type") comm_type = at.integer(a);
    else if (name == "comm_size") comm_size = at.number(a);
    else if (name == "comm_src") comm_src = at.integer(a);
    else if (name == "comm_dst") comm_dst = at.integer(a);
    else if (name == "comm_tag") comm_tag = at.integer(a);
    else if (name == "num_ops") node.flops = at.number(a);
    else if (name == "tensor_size") node.bytes_B = at.number(a);
    else if (name == "pg_name") {
      if (a.value_case() != AttributeProto::kStringVal) at.fail("attribute 'pg_name' must be a string_val");
      node.pg = a.string_val();
    } else if (name == "involved_dim") {
      // ASTRA-sim's dimensions of its own multi-dimensional network: topsim runs a collective over
      // its communicator's GPUs on the whole topology, which is what every dimension means.
      if (a.value_case() != AttributeProto::kBoolList) at.fail("attribute 'involved_dim' must be a bool_list");
      for (bool d : a.bool_list().values())
        if (!d) at.fail("involved_dim with a false entry (a collective over some of ASTRA-sim's network dimensions) "
                        "is not supported; topsim runs a collective over its communicator's GPUs");
    } else {
      at.fail("attribute '" + name + "' is not supported; supported: " + honoured_attrs);
    }
  }
  auto rank_of = [&](const std::optional<long long>& v, const char* what) {
    if (!v) at.fail(type_name(type) + " needs attribute '" + what + "'");
    if (*v < 0 || *v >= ranks) at.fail(std::string(what) + " " + std::to_string(*v) + " is not a rank of this trace (0-" + std::to_string(ranks - 1) + ")");
    return static_cast<int>(*v);
  };
  if (cpu) {
    // As ASTRA-sim does (Workload::issue): a host op is timed by its duration, whatever its type.
    node.kind = ChakraNode::Kind::host;
  } else if (type == ChakraProtoMsg::COMP_NODE) {
    node.kind = ChakraNode::Kind::compute;
    if (comm_type || comm_size || comm_src || comm_dst || comm_tag || !node.pg.empty())
      at.fail("a COMP_NODE with comm_* or pg_name attributes: those apply to COMM_* nodes");
    if (options.compute == ChakraReadOptions::Compute::model && !(node.flops.value_or(0) > 0) && !(node.bytes_B.value_or(0) > 0))
      at.fail("--chakra-compute model costs a COMP_NODE from num_ops (FLOPs) or tensor_size (bytes), and this one has "
              "neither (or zeros); --chakra-compute duration uses duration_micros");
  } else {
    if (!comm_size) at.fail(type_name(type) + " needs attribute 'comm_size' (bytes)");
    node.size_B = *comm_size;
    if (type == ChakraProtoMsg::COMM_COLL_NODE) {
      node.kind = ChakraNode::Kind::collective;
      if (!comm_type) at.fail("COMM_COLL_NODE needs attribute 'comm_type'");
      node.op = collective_name(*comm_type, at);
      if (!(node.size_B >= 1)) at.fail("comm_size must be at least 1 byte");
    } else {
      node.kind = type == ChakraProtoMsg::COMM_SEND_NODE ? ChakraNode::Kind::send : ChakraNode::Kind::recv;
      node.peer = rank_of(node.kind == ChakraNode::Kind::send ? comm_dst : comm_src,
                          node.kind == ChakraNode::Kind::send ? "comm_dst" : "comm_src");
      node.tag = comm_tag.value_or(0);
      if (!(node.size_B >= 1)) at.fail("comm_size must be at least 1 byte");
    }
  }
  return node;
}

}  // namespace

std::string node_place(const ChakraNode& node) {
  return "node " + std::to_string(node.id) + (node.name.empty() ? "" : " (" + node.name.substr(0, 60) + ")");
}

ChakraRankFile parse_rank_file(const EtFile& file, const ChakraReadOptions& options, int ranks) {
  ChakraRankFile out;
  out.path = file.path;
  std::map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < file.nodes.size(); ++i) {
    out.nodes.push_back(parse_node(file.nodes[i], file.offsets[i], file.path, options, ranks));
    auto [it, fresh] = index.emplace(file.nodes[i].id(), i);
    if (!fresh)
      throw InputError(file.path, node_place(out.nodes.back()),
                       "node id " + std::to_string(file.nodes[i].id()) + " is used twice (first at byte " +
                           std::to_string(file.offsets[it->second]) + ")");
  }
  for (std::size_t i = 0; i < file.nodes.size(); ++i) {
    const Node& n = file.nodes[i];
    ChakraNode& node = out.nodes[i];
    auto add = [&](std::uint64_t id, const char* field) {
      auto it = index.find(id);
      if (it == index.end())
        throw InputError(file.path, node_place(node),
                         std::string(field) + " names node " + std::to_string(id) + ", which is not in the file" +
                             (std::string(field) == "ctrl_deps"
                                  ? "; --chakra-deps data follows data_deps only, as Chakra's own feeder (et_feeder.cpp) does"
                                  : ""));
      if (it->second == i) throw InputError(file.path, node_place(node), std::string(field) + " names the node itself");
      node.deps.push_back(it->second);
    };
    for (std::uint64_t d : n.data_deps()) add(d, "data_deps");
    if (options.ctrl_deps)
      for (std::uint64_t d : n.ctrl_deps()) add(d, "ctrl_deps");
    std::sort(node.deps.begin(), node.deps.end());
    node.deps.erase(std::unique(node.deps.begin(), node.deps.end()), node.deps.end());
  }
  // Kahn's algorithm, lowest file position first: the order a rank's streams run their nodes in.
  std::vector<std::vector<std::size_t>> successors(out.nodes.size());
  std::vector<std::size_t> waiting(out.nodes.size(), 0);
  for (std::size_t i = 0; i < out.nodes.size(); ++i)
    for (std::size_t d : out.nodes[i].deps) {
      successors[d].push_back(i);
      ++waiting[i];
    }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < out.nodes.size(); ++i)
    if (waiting[i] == 0) ready.insert(i);
  while (!ready.empty()) {
    std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    out.order.push_back(i);
    for (std::size_t s : successors[i])
      if (--waiting[s] == 0) ready.insert(s);
  }
  if (out.order.size() != out.nodes.size()) {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < out.nodes.size() && ids.size() < 6; ++i)
      if (waiting[i] > 0) ids.push_back(std::to_string(out.nodes[i].id));
    throw InputError(file.path, "node " + ids.front(),
                     "the dependencies form a cycle; nodes on it or waiting for it: " + join(ids, ", ") +
                         (options.ctrl_deps ? " (--chakra-deps data follows data_deps only, as Chakra's own feeder does)" : ""));
  }
  return out;
}

}  // namespace topsim
