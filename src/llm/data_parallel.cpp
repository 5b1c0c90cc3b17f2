#include "llm/data_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace topsim {

double ddp_bucket_params(double bucket_params, double min_params, double params_per_rank, int dp_cp) {
  if (bucket_params > 0) return bucket_params;
  return std::max(min_params, params_per_rank * dp_cp);
}

std::vector<double> split_buckets(double params, double bucket_params) {
  if (params <= 0) return {};
  const double n = bucket_params > 0 ? std::max(1.0, std::floor(params / bucket_params)) : 1.0;
  return std::vector<double>(static_cast<std::size_t>(n), params / n);
}

double backward_ready_s(const ChunkParams& c, double walked, double backward_s, double head_s) {
  const double layers_s = std::max(0.0, backward_s - head_s);
  if (c.head > 0 && walked <= c.head) return head_s * walked / c.head;
  walked -= c.head;
  if (c.layers > 0 && walked < c.layers) return head_s + layers_s * walked / c.layers;
  return backward_s;
}

double forward_need_s(const ChunkParams& c, double walked, double layers_s) {
  walked -= c.embedding;
  if (walked <= 0) return 0;
  if (c.layers > 0 && walked < c.layers) return layers_s * walked / c.layers;
  return layers_s;
}

double stream_end_s(const std::vector<StreamOp>& ops) {
  double end = 0;
  for (const StreamOp& op : ops) end = std::max(end, op.ready_s) + op.duration_s;
  return end;
}

double stream_overlap_s(const std::vector<StreamOp>& ops, double until_s) {
  double end = 0, before = 0;
  for (const StreamOp& op : ops) {
    const double start = std::max(end, op.ready_s);
    end = start + op.duration_s;
    before += std::max(0.0, std::min(end, until_s) - start);
  }
  return before;
}

double gather_wait_s(const std::vector<GatherOp>& ops) {
  double wait = 0, end = 0;
  for (const GatherOp& op : ops) {
    const double dispatch = op.at_start ? op.dispatch_s : op.dispatch_s + wait;
    end = std::max(end, dispatch) + op.duration_s;
    wait = std::max(wait, end - op.need_s);
  }
  return wait;
}

}  // namespace topsim

namespace topsim {

namespace {

// The distinct sizes to simulate, largest first: a size within a factor of 2 below a simulated
// one of at least `scaled_from` parameters runs as that one, scaled.
std::vector<double> simulated_sizes(std::vector<double> raw, double scaled_from) {
  std::sort(raw.begin(), raw.end(), std::greater<double>());
  std::vector<double> sizes;
  for (double params : raw) {
    if (!sizes.empty()) {
      const double last = sizes.back();
      if (std::abs(last - params) <= 1e-9 * params) continue;
      if (scaled_from > 0 && params >= scaled_from && params >= last / 2) continue;
    }
    sizes.push_back(params);
  }
  return sizes;
}

// The simulated size a bucket of `params` runs as: the smallest at least as large (within 1e-9).
int size_of(const std::vector<double>& sizes, double params) {
  for (std::size_t i = sizes.size(); i-- > 0;)
    if (sizes[i] >= params * (1 - 1e-9)) return static_cast<int>(i);
  return 0;
}

DpBuffer make_buffer(const ChunkParams& params, double bucket_params) {
  DpBuffer b;
  b.params = params;
  const std::vector<double> buckets = split_buckets(params.total(), bucket_params);
  b.bucketed = buckets.size() > 1;
  for (double size : buckets) b.scale.push_back(size);  // the bucket's parameters until sized
  return b;
}

// Each bucket's index into `sizes` and its scale.
void size_buffers(std::vector<DpBuffer>& buffers, const std::vector<double>& sizes) {
  for (DpBuffer& b : buffers)
    for (double& params : b.scale) {
      const int k = size_of(sizes, params);
      b.buckets.push_back(k);
      params /= sizes[static_cast<std::size_t>(k)];
    }
}

// One buffer's collectives on one rank, launched as Megatron-Core launches them.
void add_reduces(std::vector<StreamOp>& ops, const DpBuffer& b, const std::vector<double>& sizes,
                 const std::vector<double>& durations, double launch_s, double backward_start_s, double backward_s,
                 double head_s) {
  double walked = 0;
  for (std::size_t j = 0; j < b.buckets.size(); ++j) {
    const std::size_t k = static_cast<std::size_t>(b.buckets[j]);
    walked += sizes[k] * b.scale[j];
    const double ready = b.bucketed ? backward_start_s + backward_ready_s(b.params, walked, backward_s, head_s) : launch_s;
    ops.push_back({ready, durations[k] * b.scale[j]});
  }
}

// Rank 0's all-gathers ahead of its forwards: the buckets in forward order (the reverse of
// backward's), chunk by chunk.
std::vector<GatherOp> gathers(const LlmLayout& L, const std::vector<DpBuffer>& buffers, const std::vector<double>& sizes,
                              const std::vector<double>& durations, const PipelineResult& pipeline,
                              const std::vector<double>& forward_s) {
  std::vector<GatherOp> ops;
  const bool aligned = L.overlap_param_gather && L.align_param_gather && L.vp > 1;
  for (int c = 0; c < L.vp; ++c) {
    const std::size_t v = static_cast<std::size_t>(c * L.pp);
    const DpBuffer& b = buffers[v];
    const double start = pipeline.first_forward_start_s[v];
    double walked = 0;
    for (std::size_t j = b.buckets.size(); j-- > 0;) {
      const std::size_t k = static_cast<std::size_t>(b.buckets[j]);
      GatherOp op;
      op.need_s = start + forward_need_s(b.params, walked, forward_s[v]);
      op.duration_s = durations[k] * b.scale[j];
      if (!L.overlap_param_gather) {
        op.at_start = true;  // synchronous after the optimizer step: all before the forward
        op.need_s = 0;
      } else if (aligned) {
        // The schedule dispatches chunks 0 and 1 at the start, chunk c when chunk c - 1's first
        // forward starts (schedules.py:1219-1221,1336-1354, rank 0).
        op.at_start = c < 2;
        op.dispatch_s = c < 2 ? 0 : pipeline.first_forward_start_s[static_cast<std::size_t>((c - 1) * L.pp)];
      } else {
        // Each bucket's pre-hook dispatches the next once its own is done; a chunk's first is
        // dispatched by its own pre-hook (distributed_data_parallel.py:476-540).
        op.dispatch_s = j + 1 == b.buckets.size() ? op.need_s : ops.back().need_s;
      }
      walked += sizes[k] * b.scale[j];
      ops.push_back(op);
    }
  }
  return ops;
}

double gather_exposed(const std::vector<GatherOp>& ops, double sm_share) {
  double total = 0;
  for (const GatherOp& op : ops) total += op.duration_s;
  const double wait = gather_wait_s(ops);
  return wait + sm_share * std::max(0.0, total - wait);
}

}  // namespace

DpLayout dp_layout(const TransformerSpec& model, const LlmLayout& L, double bucket_params, double scaled_from_params) {
  DpLayout out;
  const int stages = L.pp * L.vp;
  for (int v = 0; v < stages; ++v) {
    const StageParams p = virtual_stage_params(model, L, v);
    // Bucketing only on the first pipeline rank's first chunk, and only with overlap.
    const double bucket = L.overlap_grad_reduce && v == 0 ? bucket_params : 0;
    out.dense.push_back(make_buffer(ChunkParams{p.head, p.layers, p.embedding}, bucket));
    out.experts.push_back(make_buffer(ChunkParams{0, p.experts, 0}, bucket));
  }
  for (auto [buffers, sizes] : {std::pair{&out.dense, &out.dense_sizes}, std::pair{&out.experts, &out.expert_sizes}}) {
    std::vector<double> raw;
    for (const DpBuffer& b : *buffers) raw.insert(raw.end(), b.scale.begin(), b.scale.end());
    *sizes = simulated_sizes(raw, scaled_from_params);
    size_buffers(*buffers, *sizes);
  }
  return out;
}

DpExposure dp_exposure(const LlmLayout& L, const DpLayout& buffers, const DpDurations& d, const PipelineResult& pipeline,
                       const std::vector<double>& forward_s, const std::vector<double>& backward_s,
                       const std::vector<double>& head_s, double sm_share) {
  DpExposure out;
  const bool expert_buffers = !buffers.expert_sizes.empty() && !d.expert_reduce_s.empty();
  for (int r = 0; r < L.pp; ++r) {
    const double end = pipeline.end_s[static_cast<std::size_t>(r)];
    const auto& ends = pipeline.backward_end_s[static_cast<std::size_t>(r)];
    std::vector<StreamOp> dense, experts;
    // Chunks complete in backward order, the last chunk first.
    for (int c = L.vp - 1; c >= 0; --c) {
      const std::size_t v = static_cast<std::size_t>(c * L.pp + r);
      double launch = end;  // without overlap: finalize_model_grads, after the schedule
      if (L.overlap_grad_reduce) {
        launch = pipeline.last_backward_end_s[v];
        // align_grad_reduce: the schedule launches a chunk's reduction `rank` backward passes
        // after its last one, at the same time across the pipeline group; past the last, after
        // the cooldown (schedules.py:1419-1456; training.py:4347-4359).
        if (L.align_grad_reduce && L.vp > 1) {
          const std::size_t at = static_cast<std::size_t>(pipeline.last_backward_index[v] + r);
          launch = at < ends.size() ? ends[at] : end;
        }
      }
      const double start = pipeline.last_backward_start_s[v], bwd = backward_s[v], head = head_s[v];
      add_reduces(dense, buffers.dense[v], buffers.dense_sizes, d.dense_reduce_s, launch, start, bwd, head);
      if (expert_buffers) add_reduces(experts, buffers.experts[v], buffers.expert_sizes, d.expert_reduce_s, launch, start, bwd, head);
    }
    for (auto* ops : {&dense, &experts})
      std::stable_sort(ops->begin(), ops->end(), [](const StreamOp& a, const StreamOp& b) { return a.ready_s < b.ready_s; });
    const double overlapped = stream_overlap_s(dense, end) + stream_overlap_s(experts, end);
    const double done = std::max({end + sm_share * overlapped, stream_end_s(dense), stream_end_s(experts)});
    out.reduce_s.push_back(done - end);
  }
  if (!d.dense_gather_s.empty()) {
    out.gather_s = gather_exposed(gathers(L, buffers.dense, buffers.dense_sizes, d.dense_gather_s, pipeline, forward_s), sm_share);
    if (expert_buffers && !d.expert_gather_s.empty())
      out.gather_s = std::max(out.gather_s, gather_exposed(gathers(L, buffers.experts, buffers.expert_sizes,
                                                                   d.expert_gather_s, pipeline, forward_s), sm_share));
  }
  return out;
}

}  // namespace topsim
