#include "llm/pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace topsim {

std::vector<Pass> schedule_order(int rank, int pp, int vp, int m) {
  std::vector<Pass> order;
  const int total = m * vp;  // chunk passes per direction
  // Megatron's get_model_chunk_id: passes go round the chunks in groups of pp micro-batches.
  auto pass = [&](int k, bool forward) {
    int group = k / pp;
    int chunk = group % vp;
    if (!forward) chunk = vp - 1 - chunk;
    int micro_batch = (k / (pp * vp)) * pp + k % pp;
    return Pass{forward, chunk * pp + rank, micro_batch};
  };
  int warmup;
  if (vp == 1) {
    warmup = std::min(pp - rank - 1, m);
  } else {
    warmup = m == pp ? total : std::min((pp - rank - 1) * 2 + (vp - 1) * pp, total);
  }
  for (int k = 0; k < warmup; ++k) order.push_back(vp == 1 ? Pass{true, rank, k} : pass(k, true));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(vp == 1 ? Pass{true, rank, warmup + k} : pass(warmup + k, true));
    order.push_back(vp == 1 ? Pass{false, rank, k} : pass(k, false));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(vp == 1 ? Pass{false, rank, k} : pass(k, false));
  return order;
}

int peak_in_flight(int rank, int pp, int vp, int micro_batches) {
  int flight = 0, peak = 0;
  for (const Pass& p : schedule_order(rank, pp, vp, micro_batches)) {
    flight += p.forward ? 1 : -1;
    peak = std::max(peak, flight);
  }
  return peak;
}

int peak_layers_in_flight(int rank, int pp, int vp, int micro_batches, const std::vector<int>& layers) {
  if (static_cast<int>(layers.size()) != pp * vp) throw std::invalid_argument("pipeline: one layer count per virtual stage");
  int flight = 0, peak = 0;
  for (const Pass& p : schedule_order(rank, pp, vp, micro_batches)) {
    flight += (p.forward ? 1 : -1) * layers[static_cast<std::size_t>(p.stage)];
    peak = std::max(peak, flight);
  }
  return peak;
}

PipelineResult run_pipeline(const PipelineInput& in) {
  const int stages = in.pp * in.vp;
  if (in.pp < 1 || in.vp < 1 || in.micro_batches < 1) throw std::invalid_argument("pipeline sizes must be >= 1");
  if (static_cast<int>(in.forward_s.size()) != stages || static_cast<int>(in.backward_s.size()) != stages)
    throw std::invalid_argument("pipeline: one forward and one backward time per virtual stage");
  if (in.vp > 1 && in.micro_batches % in.pp != 0)
    throw std::invalid_argument("interleaved pipeline: micro-batches " + std::to_string(in.micro_batches) +
                                " not divisible by pp " + std::to_string(in.pp));
  const int m = in.micro_batches;
  // End times of every pass, -1 until it has run.
  std::vector<double> fwd_end(static_cast<std::size_t>(stages * m), -1), bwd_end(fwd_end);
  auto at = [&](int stage, int mb) { return static_cast<std::size_t>(stage * m + mb); };
  std::vector<std::vector<Pass>> orders;
  for (int r = 0; r < in.pp; ++r) orders.push_back(schedule_order(r, in.pp, in.vp, m));
  std::vector<std::size_t> next(static_cast<std::size_t>(in.pp), 0);
  std::vector<double> free_s(static_cast<std::size_t>(in.pp), 0);
  PipelineResult out;
  out.busy_s.assign(static_cast<std::size_t>(in.pp), 0);
  out.end_s.assign(static_cast<std::size_t>(in.pp), 0);
  out.peak_in_flight.assign(static_cast<std::size_t>(in.pp), 0);
  out.last_backward_s.assign(static_cast<std::size_t>(in.pp), 0);
  std::vector<int> in_flight(static_cast<std::size_t>(in.pp), 0);
  std::vector<int> last_mb(static_cast<std::size_t>(in.pp), -1);
  out.last_backward_start_s.assign(static_cast<std::size_t>(stages), 0);
  out.first_forward_start_s.assign(static_cast<std::size_t>(stages), 0);
  out.last_backward_end_s.assign(static_cast<std::size_t>(stages), 0);
  out.backward_end_s.assign(static_cast<std::size_t>(in.pp), {});
  out.last_backward_index.assign(static_cast<std::size_t>(stages), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < in.pp; ++r) {
      auto& i = next[static_cast<std::size_t>(r)];
      while (i < orders[static_cast<std::size_t>(r)].size()) {
        const Pass& p = orders[static_cast<std::size_t>(r)][i];
        // What the pass waits for: the previous virtual stage's forward, or the next one's backward
        // (the last stage's backward follows its own forward, already earlier on this rank).
        double ready = 0;
        if (p.forward && p.stage > 0) {
          double dep = fwd_end[at(p.stage - 1, p.micro_batch)];
          if (dep < 0) break;
          ready = dep + in.p2p_s;
        } else if (!p.forward && p.stage < stages - 1) {
          double dep = bwd_end[at(p.stage + 1, p.micro_batch)];
          if (dep < 0) break;
          ready = dep + in.p2p_s;
        }
        const double duration = p.forward ? in.forward_s[static_cast<std::size_t>(p.stage)]
                                          : in.backward_s[static_cast<std::size_t>(p.stage)];
        double start = std::max(ready, free_s[static_cast<std::size_t>(r)]);
        double end = start + duration;
        (p.forward ? fwd_end : bwd_end)[at(p.stage, p.micro_batch)] = end;
        free_s[static_cast<std::size_t>(r)] = end;
        out.busy_s[static_cast<std::size_t>(r)] += duration;
        int& flight = in_flight[static_cast<std::size_t>(r)];
        flight += p.forward ? 1 : -1;
        out.peak_in_flight[static_cast<std::size_t>(r)] = std::max(out.peak_in_flight[static_cast<std::size_t>(r)], flight);
        if (p.forward && p.micro_batch == 0) out.first_forward_start_s[static_cast<std::size_t>(p.stage)] = start;
        if (!p.forward) {
          if (p.micro_batch != last_mb[static_cast<std::size_t>(r)]) out.last_backward_s[static_cast<std::size_t>(r)] = 0;
          last_mb[static_cast<std::size_t>(r)] = p.micro_batch;
          out.last_backward_s[static_cast<std::size_t>(r)] += duration;
          auto& ends = out.backward_end_s[static_cast<std::size_t>(r)];
          if (p.micro_batch == m - 1) {
            out.last_backward_start_s[static_cast<std::size_t>(p.stage)] = start;
            out.last_backward_end_s[static_cast<std::size_t>(p.stage)] = end;
            out.last_backward_index[static_cast<std::size_t>(p.stage)] = static_cast<int>(ends.size());
          }
          ends.push_back(end);
        }
        ++i;
        progress = true;
      }
    }
  }
  for (int r = 0; r < in.pp; ++r) {
    if (next[static_cast<std::size_t>(r)] != orders[static_cast<std::size_t>(r)].size())
      throw std::logic_error("pipeline schedule deadlocked at rank " + std::to_string(r));
    out.end_s[static_cast<std::size_t>(r)] = free_s[static_cast<std::size_t>(r)];
    out.makespan_s = std::max(out.makespan_s, free_s[static_cast<std::size_t>(r)]);
  }
  return out;
}

}  // namespace topsim
