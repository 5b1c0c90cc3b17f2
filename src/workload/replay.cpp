#include "workload/replay.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <sstream>

#include "compute/kernel.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Runs a communicator's own schedules on a platform it shares with other communicators: its
// composites sit after theirs.
class OffsetRunner : public Runner {
 public:
  OffsetRunner(Runner& inner, std::size_t offset) : inner_(inner), offset_(offset) {}
  std::vector<OpTiming> run(const Schedule& schedule) override {
    if (offset_ == 0) return inner_.run(schedule);
    Schedule shifted = schedule;
    for (Op& op : shifted.ops)
      if (op.kind == Op::Kind::composite) op.composite += offset_;
    return inner_.run(shifted);
  }

 private:
  Runner& inner_;
  std::size_t offset_;
};

std::string request_key(const std::string& group, const CollRequest& r) {
  std::ostringstream key;
  key.precision(17);
  key << group << '|' << to_string(r.op) << '|' << r.size_B << '|' << r.dtype.name << '|' << r.root;
  return key.str();
}

// Length of the union of [start, finish) intervals.
double covered_s(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, end = -1;
  for (const auto& [s, f] : intervals) {
    double from = std::max(s, end);
    if (f > from) total += f - from;
    end = std::max(end, f);
  }
  return total;
}

}  // namespace

Replay::Replay(const Topology& topology, const Catalog& catalog, const TraceSpec& trace, ReplayOptions options)
    : topology_(topology), catalog_(catalog), trace_(trace), options_(std::move(options)) {
  if (trace.ranks > topology.gpu_count())
    throw UsageError("the trace has " + std::to_string(trace.ranks) + " ranks; " + topology.name() + " has " +
                     std::to_string(topology.gpu_count()) + " GPUs");
  std::vector<int> world(static_cast<std::size_t>(trace.ranks));
  for (int r = 0; r < trace.ranks; ++r) world[static_cast<std::size_t>(r)] = r;
  groups_["world"].ranks = world;
  for (const TraceGroup& g : trace.groups) groups_[g.name].ranks = g.ranks;
  layout();
}

Replay::~Replay() = default;

double Replay::compute_time(const TraceOp& op, int rank) const {
  if (op.cost == TraceOp::Cost::time) return op.time_s;
  const GpuModel& gpu = topology_.gpu_model(rank);
  const ComputeModel& model = catalog_.compute(gpu.architecture, op.where);
  Kernel kernel;
  kernel.dtype = op.dtype;
  kernel.sparse = op.sparse;
  if (op.cost == TraceOp::Cost::memory) {
    kernel.kind = Kernel::Kind::memory;
    kernel.bytes_B = op.bytes_B;
  } else if (op.cost == TraceOp::Cost::flops) {
    // Math of unknown shape runs at the rate a square GEMM of as many flops reaches.
    kernel.kind = Kernel::Kind::gemm;
    kernel.m = kernel.n = kernel.k = std::max(1.0, std::cbrt(op.flops / 2));
    kernel.bytes_B = op.bytes_B;
  } else {
    kernel.kind = op.cost == TraceOp::Cost::conv ? Kernel::Kind::conv : Kernel::Kind::gemm;
    kernel.m = op.m;
    kernel.n = op.n;
    kernel.k = op.k;
    kernel.batch = op.batch;
  }
  std::string why = kernel_unavailable(gpu, kernel);
  if (!why.empty()) throw InputError(op.where.file, op.where.pointer, "op '" + op.name + "' on rank " + std::to_string(rank) + ": " + why);
  KernelCost cost = kernel_cost(gpu, model, kernel);
  double time = cost.time_s;
  if (op.cost == TraceOp::Cost::flops) time = std::max(time * op.flops / std::max(cost.flops, 1.0), cost.memory_s);
  return time * options_.compute_scale;
}

void Replay::layout() {
  const auto& ops = trace_.ops;
  std::map<std::string, std::size_t> op_index;
  for (std::size_t i = 0; i < ops.size(); ++i) op_index[ops[i].name] = i;

  // Instances: compute ops once per rank, collectives and sends once.
  std::vector<std::map<int, std::size_t>> on_rank(ops.size());  // op -> rank -> instance
  std::vector<std::vector<int>> involved(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TraceOp& op = ops[i];
    if (op.kind == TraceOp::Kind::compute) {
      involved[i] = op.ranks.empty() ? groups_.at("world").ranks : op.ranks;
      for (int r : involved[i]) {
        on_rank[i][r] = instances_.size();
        instances_.push_back({i, r, {}});
      }
    } else {
      involved[i] = op.kind == TraceOp::Kind::send ? std::vector<int>{op.src, op.dst} : groups_.at(op.group).ranks;
      for (int r : involved[i]) on_rank[i][r] = instances_.size();
      instances_.push_back({i, -1, {}});
    }
  }
  // Dependencies, then stream order (ops of one stream on one rank run in trace order).
  std::map<std::pair<int, std::string>, std::size_t> last_on_stream;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TraceOp& op = ops[i];
    for (std::size_t a = 0; a < op.after.size(); ++a) {
      std::size_t x = op_index.at(op.after[a]);
      bool any = false;
      for (int r : involved[i]) {
        auto it = on_rank[x].find(r);
        if (it == on_rank[x].end()) continue;  // each rank waits for the instance on its own rank
        any = true;
        std::size_t self = on_rank[i].at(r);
        instances_[self].deps.push_back(it->second);
      }
      if (!any)
        throw InputError(op.where.file, op.where.at("after").at(a).pointer,
                         "op '" + op.name + "' waits for '" + ops[x].name + "', which runs on none of its ranks");
    }
    for (int r : involved[i]) {
      std::size_t self = on_rank[i].at(r);
      auto key = std::make_pair(r, op.stream);
      auto it = last_on_stream.find(key);
      if (it != last_on_stream.end() && it->second != self) instances_[self].deps.push_back(it->second);
      last_on_stream[key] = self;
    }
  }
  for (Instance& inst : instances_) {
    std::sort(inst.deps.begin(), inst.deps.end());
    inst.deps.erase(std::unique(inst.deps.begin(), inst.deps.end()), inst.deps.end());
  }

  // Topological order (Kahn, lowest index first, so a trace already in order keeps it).
  std::vector<std::vector<std::size_t>> successors(instances_.size());
  std::vector<std::size_t> waiting(instances_.size(), 0);
  for (std::size_t i = 0; i < instances_.size(); ++i)
    for (std::size_t d : instances_[i].deps) {
      successors[d].push_back(i);
      ++waiting[i];
    }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < instances_.size(); ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (std::size_t s : successors[i])
      if (--waiting[s] == 0) ready.insert(s);
  }
  if (order.size() != instances_.size()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < instances_.size() && names.size() < 6; ++i) {
      const std::string& name = ops[instances_[i].op].name;
      if (waiting[i] > 0 && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    throw InputError(trace_.where.file, "/ops",
                     "the ops' dependencies (\"after\" and stream order) form a cycle; ops on it or waiting for it: " +
                         join(names, ", "));
  }
  // Renumber into that order.
  std::vector<std::size_t> position(instances_.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  std::vector<Instance> sorted(instances_.size());
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    Instance inst = instances_[i];
    for (std::size_t& d : inst.deps) d = position[d];
    sorted[position[i]] = std::move(inst);
  }
  instances_ = std::move(sorted);
  compute_s_.assign(instances_.size(), 0);
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const TraceOp& op = ops[instances_[i].op];
    // A straggler (--straggler) runs every kernel `slowdown` times longer, timed ops included.
    if (op.kind == TraceOp::Kind::compute)
      compute_s_[i] = compute_time(op, instances_[i].rank) * topology_.device(topology_.gpu(instances_[i].rank)).slowdown;
  }
}

double Replay::rank0_compute_s() const {
  double total = 0;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const TraceOp& op = trace_.ops[instances_[i].op];
    if (op.kind == TraceOp::Kind::compute && instances_[i].rank == 0 && op.cost != TraceOp::Cost::time)
      total += compute_s_[i] / options_.compute_scale / topology_.device(topology_.gpu(0)).slowdown;
  }
  return total;
}

CollRequest Replay::request_of(const TraceOp& op) const {
  CollRequest request;
  try {
    request.op = parse_op(op.op);
  } catch (const UsageError& e) {
    throw InputError(op.where.file, op.where.at("op").pointer, e.what());
  }
  try {
    request.dtype = parse_dtype(op.dtype);
  } catch (const UsageError& e) {
    throw InputError(op.where.file, op.where.at("dtype").pointer, e.what());
  }
  request.size_B = op.size_B;
  request.root = op.root;
  return request;
}

PlatformNeeds Replay::needs() {
  PlatformNeeds merged;
  merged.all_pairs = false;
  std::map<std::string, std::vector<CollRequest>> requests;
  op_keys_.assign(trace_.ops.size(), "");
  requests_.clear();
  for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
    const TraceOp& op = trace_.ops[i];
    if (op.kind == TraceOp::Kind::send) {
      merged.pairs.emplace_back(op.src, op.dst);
      continue;
    }
    if (op.kind != TraceOp::Kind::collective) continue;
    CollRequest r = request_of(op);
    Group& g = groups_.at(op.group);
    if (r.root >= static_cast<int>(g.ranks.size()))
      throw InputError(op.where.file, op.where.at("root").pointer,
                       "root " + std::to_string(r.root) + " is not a rank of group '" + op.group + "' (0-" +
                           std::to_string(g.ranks.size() - 1) + ")");
    op_keys_[i] = request_key(op.group, r);
    if (requests_.emplace(op_keys_[i], r).second) requests[op.group].push_back(r);
  }
  // One copy of the release's tables for all of the groups' communicators.
  auto version = std::make_shared<const NcclVersion>(catalog_.nccl_version(options_.nccl));
  for (auto& [name, list] : requests) {
    Group& g = groups_.at(name);
    g.comm = std::make_unique<Communicator>(topology_, g.ranks, version, options_.routes, &ring_graphs_);
    PlatformNeeds n = g.comm->needs(list);
    g.composite_offset = merged.composites.size();
    merged.composites.insert(merged.composites.end(), n.composites.begin(), n.composites.end());
    merged.all_pairs = merged.all_pairs || n.all_pairs;
    merged.pairs.insert(merged.pairs.end(), n.pairs.begin(), n.pairs.end());
  }
  std::sort(merged.pairs.begin(), merged.pairs.end());
  merged.pairs.erase(std::unique(merged.pairs.begin(), merged.pairs.end()), merged.pairs.end());
  return merged;
}

ReplayResult Replay::run(Runner& runner) {
  const auto& ops = trace_.ops;
  // NCCL's tuner picks from sizes alone, blind to other traffic: choose each collective alone.
  if (op_keys_.size() != ops.size()) throw std::logic_error("Replay::run before needs()");
  std::map<std::string, CollRequest> chosen;
  std::map<std::string, int> channels_of;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string& key = op_keys_[i];
    if (key.empty() || chosen.count(key) != 0) continue;
    CollRequest r = requests_.at(key);
    Group& g = groups_.at(ops[i].group);
    OffsetRunner shifted(runner, g.composite_offset);
    CollResult result = g.comm->run(r, shifted);
    r.algo = result.algo;
    r.proto = result.proto;
    chosen[key] = r;
    channels_of[key] = result.channels;
  }

  // A compute instance whose only dependency is a compute instance on its rank that nothing else
  // waits for extends that one's delay: the same times with far fewer engine activities (a
  // layer-by-layer iteration is mostly such chains).
  std::vector<int> dependents(instances_.size(), 0);
  for (const Instance& inst : instances_)
    for (std::size_t d : inst.deps) ++dependents[d];
  Schedule schedule;
  std::vector<std::size_t> first(instances_.size()), last(instances_.size());
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const Instance& inst = instances_[i];
    const TraceOp& op = ops[inst.op];
    std::vector<std::size_t> after;
    for (std::size_t d : inst.deps) after.push_back(last[d]);
    first[i] = schedule.ops.size();
    if (op.kind == TraceOp::Kind::compute && inst.deps.size() == 1 && dependents[inst.deps[0]] == 1 &&
        instances_[inst.deps[0]].rank == inst.rank && ops[instances_[inst.deps[0]].op].kind == TraceOp::Kind::compute) {
      std::size_t chain = last[inst.deps[0]];
      schedule.ops[chain].delay_s += compute_s_[i];
      first[i] = first[inst.deps[0]];
      last[i] = chain;
    } else if (op.kind == TraceOp::Kind::compute) {
      last[i] = schedule.delay(inst.rank, compute_s_[i], after);
    } else if (op.kind == TraceOp::Kind::send) {
      last[i] = schedule.transfer(op.src, op.dst, op.size_B, after);
    } else {
      Group& g = groups_.at(op.group);
      last[i] = g.comm->append(chosen.at(op_keys_[inst.op]), schedule, after, g.composite_offset);
    }
  }
  std::vector<OpTiming> timings = runner.run(schedule);

  ReplayResult result;
  for (const OpTiming& t : timings) result.iteration_s = std::max(result.iteration_s, t.finish_s);
  std::map<int, double> busy;
  std::vector<std::pair<double, double>> rank0_comm;
  std::map<std::string, int> algo_count;
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    const TraceOp& op = ops[instances_[i].op];
    if (op.kind == TraceOp::Kind::compute) {
      if (op.stream == "compute") busy[instances_[i].rank] += compute_s_[i];
      if (instances_[i].rank == 0) result.phase_s[op.name.substr(0, op.name.find('.'))] += compute_s_[i];
      continue;
    }
    result.op_span_s[op.name] = timings[last[i]].finish_s - timings[first[i]].start_s;
    result.op_start_s[op.name] = timings[first[i]].start_s;
    const auto& ranks = op.kind == TraceOp::Kind::send ? std::vector<int>{op.src, op.dst} : groups_.at(op.group).ranks;
    if (std::find(ranks.begin(), ranks.end(), 0) != ranks.end())
      rank0_comm.emplace_back(timings[first[i]].start_s, timings[last[i]].finish_s);
    if (op.kind == TraceOp::Kind::collective) {
      ++result.collectives;
      result.collective_B += op.size_B;
      const CollRequest& r = chosen.at(op_keys_[instances_[i].op]);
      ++algo_count[op.op + " " + to_string(*r.algo) + "/" + to_string(*r.proto)];
      result.op_channels[op.name] = channels_of.at(op_keys_[instances_[i].op]);
    }
  }
  for (const auto& [rank, s] : busy) result.compute_s = std::max(result.compute_s, s);
  result.exposed_comm_s = std::max(0.0, result.iteration_s - result.compute_s);
  result.comm_s = covered_s(rank0_comm);
  std::vector<std::string> parts;
  for (const auto& [name, count] : algo_count) parts.push_back(name + " x" + std::to_string(count));
  result.algorithms = join(parts, ", ");
  return result;
}

}  // namespace topsim
