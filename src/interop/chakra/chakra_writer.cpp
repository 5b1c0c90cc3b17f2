// topsim's trace -> Chakra ET files, one per rank (chakra.hpp says what becomes what).
#include <cmath>
#include <map>

#include "interop/chakra/chakra.hpp"
#include "interop/chakra/et_stream.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

using ChakraProtoMsg::Node;

ChakraProtoMsg::CollectiveCommType comm_type_of(const TraceOp& op) {
  if (op.op == "allreduce") return ChakraProtoMsg::ALL_REDUCE;
  if (op.op == "reduce") return ChakraProtoMsg::REDUCE;
  if (op.op == "allgather") return ChakraProtoMsg::ALL_GATHER;
  if (op.op == "broadcast") return ChakraProtoMsg::BROADCAST;
  if (op.op == "alltoall") return ChakraProtoMsg::ALL_TO_ALL;
  if (op.op == "reducescatter") return ChakraProtoMsg::REDUCE_SCATTER;
  throw UsageError("op '" + op.name + "': collective '" + op.op + "' has no Chakra comm_type");
}

void add_attr(Node& node, const std::string& name, std::uint64_t value) {
  auto* a = node.add_attr();
  a->set_name(name);
  a->set_uint64_val(value);
}

std::uint64_t whole(double v) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, v))); }

}  // namespace

std::vector<std::string> write_chakra(const std::string& prefix, const TraceSpec& trace) {
  const std::size_t ranks = static_cast<std::size_t>(trace.ranks);
  std::map<std::string, std::vector<int>> groups;
  for (int r = 0; r < trace.ranks; ++r) groups["world"].push_back(r);
  for (const TraceGroup& g : trace.groups) groups[g.name] = g.ranks;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) index[trace.ops[i].name] = i;

  std::vector<std::vector<Node>> nodes(ranks);
  std::vector<std::map<std::size_t, std::uint64_t>> node_of(ranks);      // per rank: op -> node id
  std::vector<std::map<std::string, std::uint64_t>> last_on_stream(ranks);  // per rank: stream -> node id
  std::map<std::pair<int, int>, long long> tags;                         // (src, dst) -> transfers so far
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    std::vector<int> on;
    if (op.kind == TraceOp::Kind::compute) {
      on = op.ranks.empty() ? groups.at("world") : op.ranks;
      if (op.stream != "compute" && op.stream != "host")
        throw UsageError("op '" + op.name + "' runs on stream '" + op.stream +
                         "'; Chakra has one GPU stream of kernels (\"compute\") and the host (\"host\")");
    } else if (op.kind == TraceOp::Kind::collective) {
      on = groups.at(op.group);
      if (op.root != 0) throw UsageError("op '" + op.name + "': Chakra's COMM_COLL_NODE has no root; only root 0 is written");
    } else {
      on = {op.src, op.dst};
    }
    long long tag = op.kind == TraceOp::Kind::send ? tags[{op.src, op.dst}]++ : 0;
    for (int r : on) {
      auto& list = nodes[static_cast<std::size_t>(r)];
      Node n;
      const std::uint64_t id = list.size();
      n.set_id(id);
      n.set_name(op.name);
      auto* cpu = n.add_attr();
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(op.kind == TraceOp::Kind::compute && op.stream == "host");
      if (op.kind == TraceOp::Kind::compute) {
        n.set_type(ChakraProtoMsg::COMP_NODE);
        if (op.cost == TraceOp::Cost::time) n.set_duration_micros(whole(op.time_s * 1e6));
        double flops = op.cost == TraceOp::Cost::gemm || op.cost == TraceOp::Cost::conv ? 2 * op.m * op.n * op.k * op.batch
                       : op.cost == TraceOp::Cost::flops                                 ? op.flops
                                                                                         : 0;
        if (flops > 0) add_attr(n, "num_ops", whole(flops));
        if (op.bytes_B > 0 && (op.cost == TraceOp::Cost::memory || op.cost == TraceOp::Cost::flops))
          add_attr(n, "tensor_size", whole(op.bytes_B));
      } else if (op.kind == TraceOp::Kind::collective) {
        n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
        auto* t = n.add_attr();
        t->set_name("comm_type");
        t->set_int64_val(comm_type_of(op));
        add_attr(n, "comm_size", whole(op.size_B));
        if (op.group != "world") {
          auto* pg = n.add_attr();
          pg->set_name("pg_name");
          pg->set_string_val(op.group);
        }
      } else {
        const bool send = r == op.src;
        n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
        add_attr(n, send ? "comm_dst" : "comm_src", static_cast<std::uint64_t>(send ? op.dst : op.src));
        add_attr(n, "comm_tag", static_cast<std::uint64_t>(tag));
        add_attr(n, "comm_size", whole(op.size_B));
      }
      auto last = last_on_stream[static_cast<std::size_t>(r)].find(op.stream);
      if (last != last_on_stream[static_cast<std::size_t>(r)].end()) n.add_ctrl_deps(last->second);
      last_on_stream[static_cast<std::size_t>(r)][op.stream] = id;
      node_of[static_cast<std::size_t>(r)][i] = id;
      list.push_back(std::move(n));
    }
  }
  // Dependencies once every op has its nodes (an op may wait for one later in the trace).
  for (std::size_t r = 0; r < ranks; ++r)
    for (const auto& [i, id] : node_of[r])
      for (const std::string& name : trace.ops[i].after) {
        auto it = node_of[r].find(index.at(name));
        if (it != node_of[r].end()) nodes[r][id].add_data_deps(it->second);  // not on this rank: nothing to wait for here
      }
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  std::vector<std::string> written;
  for (std::size_t r = 0; r < ranks; ++r) {
    written.push_back(prefix + "." + std::to_string(r) + ".et");
    write_et_file(written.back(), metadata, nodes[r]);
  }
  return written;
}

}  // namespace topsim
