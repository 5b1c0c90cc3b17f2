// Traces (a per-rank graph of ops) and training scenarios: the inputs of `topsim run`.
// Checks here are per file: syntax, types, units, names; the graph itself (cycles, ranks a
// dependency does not run on) is checked when the workload is laid out.
#include <algorithm>
#include <map>
#include <set>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/text.hpp"

namespace topsim {

const std::vector<std::string>& math_dtypes() {
  static const std::vector<std::string> names = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};
  return names;
}

namespace {

int read_rank(const Json& v, const SourceRef& at, int ranks) {
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= ranks)
    fail(at, "expected a rank 0-" + std::to_string(ranks - 1) + ", got " + describe(v));
  return static_cast<int>(v.get<long long>());
}

std::vector<int> read_rank_list(ObjectReader& r, const std::string& key, int ranks) {
  std::vector<int> list = read_array(r, key, [ranks](const Json& v, const SourceRef& at) { return read_rank(v, at, ranks); });
  if (list.empty()) fail(r.at(key), "expected at least one rank");
  std::set<int> seen;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (!seen.insert(list[i]).second) fail(r.at(key).at(i), "rank " + std::to_string(list[i]) + " is listed twice");
  return list;
}

std::string read_math_dtype(ObjectReader& r) {
  std::string dtype = r.optional_string("dtype").value_or("fp16");
  const auto& valid = math_dtypes();
  if (std::find(valid.begin(), valid.end(), dtype) == valid.end()) fail(r.at("dtype"), unknown_name_message("dtype", dtype, valid));
  return dtype;
}

bool read_sparsity(ObjectReader& r) {
  auto text = r.optional_string("sparsity");
  if (!text || *text == "dense") return false;
  if (*text == "2:4") return true;
  fail(r.at("sparsity"), "sparsity '" + *text + "' is not known; valid: dense, 2:4");
}

void read_compute(ObjectReader& r, TraceOp& op, int ranks) {
  if (r.optional("ranks")) op.ranks = read_rank_list(r, "ranks", ranks);
  // Every key a compute op may take counts as known, so a typo's hint lists them all.
  for (const char* key : {"gemm", "batch", "conv", "dtype", "sparsity", "bytes", "flops", "time"}) r.optional(key);
  const std::vector<std::string> costs = {"gemm", "bytes", "flops", "time"};
  int given = 0;
  for (const auto& key : costs) given += r.has(key) ? 1 : 0;
  if (r.has("bytes") && r.has("flops")) --given;  // flops with their bytes is one roofline cost
  if (given != 1)
    fail(r.where(), "a compute op costs exactly one of: \"gemm\": [m, n, k], \"bytes\" (memory-bound), \"flops\" "
                    "(with optional \"bytes\"), \"time\" (measured)");
  if (r.has("gemm")) {
    std::vector<double> shape = read_array(r, "gemm", [](const Json& v, const SourceRef& at) {
      if (!v.is_number() || v.get<double>() < 1) fail(at, "expected a GEMM dimension (1 or more), got " + describe(v));
      return v.get<double>();
    });
    if (shape.size() != 3) fail(r.at("gemm"), "expected [m, n, k], got " + std::to_string(shape.size()) + " numbers");
    op.m = shape[0];
    op.n = shape[1];
    op.k = shape[2];
    op.batch = r.optional_integer("batch", 1, 1 << 24).value_or(1);
    op.cost = r.has("conv") && r.boolean("conv") ? TraceOp::Cost::conv : TraceOp::Cost::gemm;
    for (const char* key : {"bytes", "flops", "time"})
      if (r.has(key)) fail(r.at(key), std::string("a gemm op's cost is its shape; '") + key + "' does not apply");
    op.dtype = read_math_dtype(r);
    op.sparse = read_sparsity(r);
  } else if (r.has("flops")) {
    op.cost = TraceOp::Cost::flops;
    op.flops = r.number("flops", 0, 1e30, true);
    op.dtype = read_math_dtype(r);
    for (const char* key : {"batch", "conv"})
      if (r.has(key)) fail(r.at(key), std::string("'") + key + "' applies to gemm ops");
    if (r.has("bytes")) op.bytes_B = r.quantity("bytes", Quantity::size);
  } else if (r.has("bytes")) {
    op.cost = TraceOp::Cost::memory;
    op.bytes_B = r.quantity("bytes", Quantity::size);
    for (const char* key : {"batch", "conv", "dtype", "sparsity"})
      if (r.has(key)) fail(r.at(key), std::string("'") + key + "' applies to gemm and flops ops, not to a bytes-only op");
  } else {
    op.cost = TraceOp::Cost::time;
    op.time_s = r.quantity("time", Quantity::time);
    for (const char* key : {"batch", "conv", "dtype", "sparsity"})
      if (r.has(key)) fail(r.at(key), std::string("'") + key + "' does not apply to a measured time");
  }
}

TraceOp read_op(const Json& value, const SourceRef& where, int ranks, const std::set<std::string>& groups) {
  ObjectReader r(value, where);
  TraceOp op;
  op.where = where;
  op.name = r.string("name");
  if (op.name.empty()) fail(r.at("name"), "an op needs a non-empty name");
  std::string kind = r.string("kind");
  if (kind == "compute") op.kind = TraceOp::Kind::compute;
  else if (kind == "collective") op.kind = TraceOp::Kind::collective;
  else if (kind == "send") op.kind = TraceOp::Kind::send;
  else fail(r.at("kind"), unknown_name_message("kind", kind, {"compute", "collective", "send"}));
  if (r.optional("after"))
    op.after = read_array(r, "after", [](const Json& v, const SourceRef& at) { return read_string(v, at); });
  op.stream = r.optional_string("stream").value_or(op.kind == TraceOp::Kind::compute ? "compute" : "comm");
  if (op.kind == TraceOp::Kind::compute) {
    read_compute(r, op, ranks);
  } else if (op.kind == TraceOp::Kind::collective) {
    op.op = r.string("op");
    const std::vector<std::string> ops = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall"};
    if (std::find(ops.begin(), ops.end(), op.op) == ops.end()) fail(r.at("op"), unknown_name_message("op", op.op, ops));
    op.group = r.optional_string("group").value_or("world");
    r.optional("root");
    if (groups.count(op.group) == 0)
      fail(r.at("group"), unknown_name_message("group", op.group, std::vector<std::string>(groups.begin(), groups.end())));
    op.size_B = r.quantity("size", Quantity::size);
    op.dtype = r.optional_string("dtype").value_or("float");
    op.root = r.optional_integer("root", 0, 1 << 20).value_or(0);
  } else {
    op.src = read_rank(r.required("src"), r.at("src"), ranks);
    op.dst = read_rank(r.required("dst"), r.at("dst"), ranks);
    if (op.src == op.dst) fail(r.at("dst"), "a send goes to another rank");
    op.size_B = r.quantity("size", Quantity::size);
  }
  r.finish();
  return op;
}

}  // namespace

TraceSpec parse_trace(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  ObjectReader r(document, SourceRef{path, ""});
  TraceSpec trace;
  trace.where = r.where();
  trace.description = r.optional_string("description").value_or("");
  trace.ranks = r.integer("ranks", 1, 1 << 20);
  trace.samples = r.optional_number("samples", 0, 1e15, true).value_or(0);
  std::set<std::string> group_names = {"world"};
  if (const Json* groups = r.optional("groups")) {
    SourceRef at = r.at("groups");
    expect_object(*groups, at);
    ObjectReader g(*groups, at);
    for (const auto& item : groups->items()) {
      if (item.key() == "world") fail(at.at("world"), "\"world\" is every rank already; name groups otherwise");
      TraceGroup group;
      group.name = item.key();
      group.where = at.at(item.key());
      group.ranks = read_rank_list(g, item.key(), trace.ranks);
      group_names.insert(group.name);
      trace.groups.push_back(group);
    }
  }
  trace.ops = read_array(r, "ops", [&](const Json& v, const SourceRef& at) { return read_op(v, at, trace.ranks, group_names); });
  if (trace.ops.empty()) fail(r.at("ops"), "a trace needs at least one op");
  r.finish();
  std::map<std::string, const TraceOp*> by_name;
  std::vector<std::string> names;
  for (const TraceOp& op : trace.ops) {
    auto [it, fresh] = by_name.emplace(op.name, &op);
    if (!fresh) fail(op.where.at("name"), "op name '" + op.name + "' is used twice (first at " + it->second->where.pointer + ")");
    names.push_back(op.name);
  }
  for (const TraceOp& op : trace.ops)
    for (std::size_t i = 0; i < op.after.size(); ++i) {
      if (by_name.count(op.after[i]) == 0) fail(op.where.at("after").at(i), unknown_name_message("op", op.after[i], names));
      if (op.after[i] == op.name) fail(op.where.at("after").at(i), "op '" + op.name + "' cannot wait for itself");
    }
  return trace;
}

TraceSpec load_trace(const std::string& path) { return parse_trace(read_text_file(path), path); }

}  // namespace topsim
