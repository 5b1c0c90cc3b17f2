#include "llm/iteration_trace.hpp"

#include "util/error.hpp"

namespace topsim {

namespace {

TraceOp timed(const std::string& name, double time_s, std::vector<std::string> after = {}) {
  TraceOp op;
  op.name = name;
  op.kind = TraceOp::Kind::compute;
  op.cost = TraceOp::Cost::time;
  op.time_s = time_s;
  op.stream = "compute";
  op.after = std::move(after);
  return op;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TraceSpec iteration_trace(const LlmLayout& L, const LlmResult& r, const TraceSpec& gradient) {
  if (L.pp != 1 || L.vp != 1)
    throw UsageError("--emit-chakra writes layouts without pipeline parallelism for now (--pp 1): the pipeline's "
                     "sends are not written yet");
  if (L.shards_parameters() || L.zero == 2)
    throw UsageError("--emit-chakra writes ZeRO-0 and ZeRO-1 for now: ZeRO-2/3 and FSDP collectives per layer are not written yet");
  TraceSpec t;
  t.ranks = L.gpus();
  t.description = "topsim train iteration";
  const int m = L.micro_batches();
  for (int i = 0; i < m; ++i) {
    t.ops.push_back(timed("fwd.mb" + std::to_string(i), r.stage_forward_s.at(0)));
    t.ops.push_back(timed("bwd.mb" + std::to_string(i), r.stage_backward_s.at(0)));
  }
  const std::string last_bwd = "bwd.mb" + std::to_string(m - 1);
  const std::string reduce_after = L.overlap_grad_reduce ? "fwd.mb" + std::to_string(m - 1) : last_bwd;
  for (const TraceGroup& g : gradient.groups)
    if (g.name.compare(0, 3, "dp.") == 0 || g.name.compare(0, 4, "edp.") == 0) t.groups.push_back(g);
  std::vector<std::string> reduces;
  for (const TraceOp& op : gradient.ops) {
    if (op.kind != TraceOp::Kind::collective || (op.group.compare(0, 3, "dp.") != 0 && op.group.compare(0, 4, "edp.") != 0))
      continue;  // the tensor-parallel traffic beside it is in the passes already
    TraceOp c = op;
    c.stream = "comm";
    c.after = {ends_with(op.name, ".ag") ? std::string("optimizer") : reduce_after};
    if (!ends_with(op.name, ".ag")) reduces.push_back(c.name);
    t.ops.push_back(std::move(c));
  }
  std::vector<std::string> before_step = reduces;
  before_step.push_back(last_bwd);
  t.ops.push_back(timed("optimizer", r.optimizer_s, before_step));
  return t;
}

}  // namespace topsim
