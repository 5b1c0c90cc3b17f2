#include "llm/iteration_trace.hpp"

#include <map>

#include "llm/pipeline.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

TraceOp timed(const std::string& name, double time_s, std::vector<int> ranks, std::vector<std::string> after = {}) {
  TraceOp op;
  op.name = name;
  op.kind = TraceOp::Kind::compute;
  op.cost = TraceOp::Cost::time;
  op.time_s = time_s;
  op.stream = "compute";
  op.ranks = std::move(ranks);
  op.after = std::move(after);
  return op;
}

bool starts_with(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string pass_name(const Pass& p) {
  return std::string(p.forward ? "fwd" : "bwd") + ".v" + std::to_string(p.stage) + ".mb" + std::to_string(p.micro_batch);
}

struct Writer {
  const LlmLayout& L;
  const LlmResult& r;
  Placement placement;
  double pp_B = 0;  ///< one micro-batch's activation between neighbouring stages
  TraceSpec t;

  std::vector<int> stage_ranks(int p) const {
    std::vector<int> out;
    for (int g = 0; g < L.gpus(); ++g)
      if (placement.coord(g).pp == p) out.push_back(g);
    return out;
  }
  int peer(int g, int p) const {
    RankCoord c = placement.coord(g);
    c.pp = p;
    return placement.rank(c);
  }
  // The sends a pass's output takes to the next virtual stage (forward) or the previous one
  // (backward), one per rank of its stage; named so that the receiving pass can wait for them.
  std::string send_name(bool forward, int stage, int mb, int src) const {
    return std::string("pp.") + (forward ? "f" : "b") + ".v" + std::to_string(stage) + ".mb" + std::to_string(mb) + "." +
           std::to_string(src);
  }
  std::vector<std::string> sends_into(bool forward, int from_stage, int mb) const {
    std::vector<std::string> names;
    for (int g : stage_ranks(from_stage % L.pp)) names.push_back(send_name(forward, from_stage, mb, g));
    return names;
  }

  // One pipeline rank's passes, and the sends that leave them. Returns its last pass's and its
  // last forward's names.
  std::pair<std::string, std::string> add_rank(int p) {
    const int stages = L.pp * L.vp;
    const std::vector<int> ranks = stage_ranks(p);
    std::string last, last_forward;
    for (const Pass& pass : schedule_order(p, L.pp, L.vp, L.micro_batches())) {
      const auto v = static_cast<std::size_t>(pass.stage);
      std::vector<std::string> after;
      if (pass.forward && pass.stage > 0) after = sends_into(true, pass.stage - 1, pass.micro_batch);
      if (!pass.forward && pass.stage < stages - 1) after = sends_into(false, pass.stage + 1, pass.micro_batch);
      t.ops.push_back(timed(pass_name(pass), pass.forward ? r.stage_forward_s.at(v) : r.stage_backward_s.at(v), ranks, after));
      last = pass_name(pass);
      if (pass.forward) last_forward = last;
      const int next = pass.forward ? pass.stage + 1 : pass.stage - 1;
      if (next < 0 || next >= stages) continue;
      for (int g : ranks) {
        TraceOp send;
        send.kind = TraceOp::Kind::send;
        send.name = send_name(pass.forward, pass.stage, pass.micro_batch, g);
        send.src = g;
        send.dst = peer(g, next % L.pp);
        send.size_B = pp_B;
        send.stream = send.name;  // ordered by its dependencies alone
        send.after = {last};
        t.ops.push_back(std::move(send));
      }
    }
    return {last, last_forward};
  }

  // Stage p's data-parallel collectives: each of its chunks' buckets (dp_layout()), the size's
  // collective as stage 0's gradient window simulated it; its optimizer step; its all-gathers.
  void add_step(int p, const std::pair<std::string, std::string>& passes, const TraceSpec& gradient, const DpLayout& dp) {
    const std::string reduce_after = L.overlap_grad_reduce ? passes.second : passes.first;
    const std::string step = "optimizer.pp" + std::to_string(p);
    std::map<std::string, std::string> renamed;  // stage 0's group -> stage p's
    for (const TraceGroup& g : gradient.groups) {
      if (!starts_with(g.name, "dp.") && !starts_with(g.name, "edp.")) continue;
      TraceGroup copy = g;
      for (int& rank : copy.ranks) rank = peer(rank, p);
      copy.name = g.name.substr(0, g.name.find('.') + 1) + std::to_string(copy.ranks.front());
      renamed[g.name] = copy.name;
      t.groups.push_back(copy);
    }
    std::vector<std::string> before_step;
    std::vector<TraceOp> gathers;  // after every reduction on the stream: they wait for the step
    for (const auto& [group, name] : renamed) {
      const std::vector<DpBuffer>& buffers = starts_with(group, "edp.") ? dp.experts : dp.dense;
      // The collectives of one size: "<group>.s<k>.rs" (or .ar) and "<group>.s<k>.ag".
      auto of_size = [&](int k, const std::string& suffix) -> const TraceOp* {
        const std::string wanted = group + ".s" + std::to_string(k) + suffix;
        for (const TraceOp& op : gradient.ops)
          if (op.name == wanted) return &op;
        return nullptr;
      };
      for (int c = L.vp - 1; c >= 0; --c) {
        const int v = c * L.pp + p;
        const DpBuffer& buffer = buffers[static_cast<std::size_t>(v)];
        for (std::size_t j = 0; j < buffer.buckets.size(); ++j)
          for (const char* suffix : {".rs", ".ar", ".ag"}) {
            const TraceOp* op = of_size(buffer.buckets[j], suffix);
            if (op == nullptr) continue;
            TraceOp copy = *op;
            copy.size_B *= buffer.scale[j];
            copy.group = name;
            copy.name = name + ".v" + std::to_string(v) + ".b" + std::to_string(j) + suffix;
            copy.stream = "comm";
            const bool gather = std::string(suffix) == ".ag";
            copy.after = {gather ? step : reduce_after};
            if (gather) {
              gathers.push_back(std::move(copy));
              continue;
            }
            before_step.push_back(copy.name);
            t.ops.push_back(std::move(copy));
          }
      }
    }
    before_step.push_back(passes.first);
    t.ops.push_back(timed(step, r.optimizer_s, stage_ranks(p), before_step));
    for (TraceOp& gather : gathers) t.ops.push_back(std::move(gather));
  }
};

}  // namespace

TraceSpec iteration_trace(const LlmLayout& L, const DimOrder& order, const LlmResult& r, const IterationWindows& windows) {
  if (L.shards_parameters() || L.zero == 2)
    throw UsageError("--emit-chakra writes ZeRO-0 and ZeRO-1 for now: ZeRO-2/3 and FSDP collectives per layer are not written yet");
  Writer w{L, r, Placement(L, order), 0, {}};
  for (const TraceOp& op : windows.steady.ops)
    if (op.kind == TraceOp::Kind::send && starts_with(op.name, "pp.")) w.pp_B = op.size_B;
  if (L.pp > 1 && !(w.pp_B > 0)) throw std::logic_error("iteration_trace: a pipeline without its sends' size");
  w.t.ranks = L.gpus();
  w.t.description = "topsim train iteration";
  for (int p = 0; p < L.pp; ++p) w.add_step(p, w.add_rank(p), windows.gradient, windows.data_parallel);
  return w.t;
}

}  // namespace topsim
