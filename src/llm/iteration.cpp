#include "llm/iteration.hpp"

#include <algorithm>
#include <stdexcept>

#include "compute/kernel.hpp"
#include "engine/simulator.hpp"
#include "llm/data_parallel.hpp"
#include "llm/expert_groups.hpp"
#include "llm/pipeline.hpp"
#include "llm/plan.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

// One rank's kernels of one layer kind, timed.
struct TimedLayer {
  double fwd_s = 0, bwd_s = 0;            // all kernels
  double fwd_gemm_s = 0, bwd_gemm_s = 0;  // GEMMs (what tensor-parallel overlap can hide behind)
  double fwd_attention_s = 0, bwd_attention_s = 0;
};

// Seconds of each cost class of one virtual stage's forward or backward pass.
struct PassCost {
  double compute = 0, tp = 0, cp = 0, ep = 0, zero3 = 0;
  double total() const { return compute + tp + cp + ep + zero3; }
};

// One instance of each communication, the slowest of its concurrent copies, in seconds.
struct CommTimes {
  double tp_ar = 0, tp_ag = 0, tp_rs = 0;  // tensor parallel: all-reduce, all-gather, reduce-scatter
  double pp = 0, cp_step = 0, ep_a2a = 0;  // pipeline send, one ring-attention step, one all-to-all
  double etp_ag = 0, etp_rs = 0;           // expert tensor parallel around the experts (etp > 1)
  double dp_ar = 0, dp_rs = 0, dp_ag = 0;  // data parallel (and expert data parallel)
  int dp_channels = 0;                     // the most channels a data-parallel collective runs on
};

// GPUs the steady window's sends may join (the engine's limit on pair routes is 4096).
constexpr int kPairGpus = 2048;

// Data-parallel gradient collectives of at least this many bytes run as a simulated one up to
// twice their size, scaled by bytes (dp_layout()): from 64 MiB NCCL's ring/simple is bandwidth
// bound (docs/nccl.md), so the shared latency is microseconds of a collective of milliseconds.
constexpr double kScaledFromB = 64.0 * 1024 * 1024;

// The slowest instance of every op whose name starts with `prefix` and ends with `suffix`.
double slowest(const ReplayResult& r, const std::string& prefix, const std::string& suffix) {
  double worst = 0;
  for (const auto& [name, s] : r.op_span_s)
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      worst = std::max(worst, s);
  return worst;
}

CommTimes comm_times(const ReplayResult& steady, const ReplayResult& gradient) {
  CommTimes c;
  c.tp_ar = slowest(steady, "tp.", ".ar");
  c.tp_ag = slowest(steady, "tp.", ".ag");
  c.tp_rs = slowest(steady, "tp.", ".rs");
  c.pp = slowest(steady, "pp.", "");
  c.cp_step = slowest(steady, "cp.", "");
  c.ep_a2a = slowest(steady, "ep.", ".alltoall");
  c.etp_ag = slowest(steady, "etp.", ".ag");
  c.etp_rs = slowest(steady, "etp.", ".rs");
  c.dp_ar = std::max(slowest(gradient, "dp.", ".ar"), slowest(gradient, "edp.", ".ar"));
  c.dp_rs = std::max(slowest(gradient, "dp.", ".rs"), slowest(gradient, "edp.", ".rs"));
  c.dp_ag = std::max(slowest(gradient, "dp.", ".ag"), slowest(gradient, "edp.", ".ag"));
  for (const auto& [name, channels] : gradient.op_channels)
    if (name.compare(0, 3, "dp.") == 0 || name.compare(0, 4, "edp.") == 0) c.dp_channels = std::max(c.dp_channels, channels);
  return c;
}

// Communication that overlap hides behind `behind_s` of compute shows only what sticks out.
double exposed(double comm_s, double behind_s) { return std::max(0.0, comm_s - behind_s); }

// The same when the communication is an NCCL kernel holding `sm_share` of the SMs while it runs:
// compute progresses at 1 - sm_share beside it, so the pair takes max(comm, compute + share x comm).
double exposed_sharing(double comm_s, double behind_s, double sm_share) {
  return behind_s > 0 ? std::max(comm_s - behind_s, sm_share * comm_s) : comm_s;
}


}  // namespace

struct LlmIteration::Impl {
  const Topology& topology;
  const Catalog& catalog;
  const TransformerSpec& model;
  const LlmLayout& L;
  LlmOptions options;
  Placement placement;
  LlmTypes types;
  TraceSpec steady, gradient;  // the two windows
  std::unique_ptr<Replay> steady_replay, gradient_replay;
  // Sharded parameters: collectives per layer and pass. FSDP moves a layer (one unit) at a
  // time; DeepSpeed ZeRO-3 in buckets, so a layer larger than a bucket takes several.
  double gathers_per_layer = 1, reduces_per_layer = 1;
  DpLayout dp;  // Megatron-Core's buckets (zero 0 and 1)
  double dp_bucket_params = 0;

  Impl(const Topology& t, const Catalog& c, const TransformerSpec& m, const LlmLayout& l, LlmOptions o)
      : topology(t), catalog(c), model(m), L(l), options(std::move(o)), placement(l, options.order), types(llm_types(l)) {}

  // Megatron-Core's DDP and distributed optimizer: no DeepSpeed ZeRO-2/3 or FSDP sharding.
  bool megatron_dp() const { return !L.shards_parameters() && L.zero <= 1; }

  // Fraction of a GPU's SMs an NCCL kernel of `channels` channels holds (one block each).
  double sm_share(int channels) const {
    const int sms = topology.gpu_model(0).sms;
    return sms > 0 ? std::min(1.0, double(channels) / sms) : 0;
  }

  double kernel_s(const NamedKernel& k) const {
    const GpuModel& gpu = topology.gpu_model(0);
    std::string why = kernel_unavailable(gpu, k.kernel);
    if (!why.empty()) throw UsageError("--precision " + L.precision + ": " + why);
    const ComputeModel& cm = catalog.compute(gpu.architecture, gpu.where);
    try {
      return kernel_cost(gpu, cm, k.kernel).time_s;
    } catch (const std::invalid_argument& e) {
      throw UsageError(model.name + " on " + gpu.name + ": " + e.what());
    }
  }

  TimedLayer time(const LayerKernels& lk) const {
    TimedLayer t;
    for (const NamedKernel& k : lk.forward) {
      double s = kernel_s(k);
      t.fwd_s += s;
      if (k.gemm) t.fwd_gemm_s += s;
      if (k.core) t.fwd_attention_s += s;
    }
    for (const NamedKernel& k : lk.backward) {
      double s = kernel_s(k);
      t.bwd_s += s;
      if (k.gemm) t.bwd_gemm_s += s;
      if (k.core) t.bwd_attention_s += s;
    }
    return t;
  }

  // Per virtual stage, one micro-batch's forward and backward pass on one rank: compute, and
  // the communication it exposes (layers of one kind cost the same: time the first of each).
  void pass_costs(const CommTimes& c, std::vector<PassCost>& fwd, std::vector<PassCost>& bwd) const {
    // Per layer kind, one micro-batch on one rank: compute, and the communication it exposes.
    const bool full = L.recompute == Recompute::full;
    const bool zero3 = L.shards_parameters();
    const double tp_ar = c.tp_ar, tp_ag = c.tp_ag, tp_rs = c.tp_rs, cp_step = c.cp_step, ep_a2a = c.ep_a2a;
    const double dp_rs = c.dp_rs, dp_ag = c.dp_ag;
    const double dp_sm_share = sm_share(c.dp_channels);
    auto layer_cost = [&](int layer, PassCost& f, PassCost& b) {
      TimedLayer t = time(layer_kernels(model, L, layer, &topology.gpu_model(0)));
      LayerComm lc = layer_comm(model, L, layer);
      // Each all-gather comes with its reduce-scatter (sp); without sp, all-reduces.
      const double tp_layer = L.tp == 1 ? 0 : L.sp ? lc.tp_ops / 2 * (tp_ag + tp_rs) : lc.tp_ops * tp_ar;
      f.compute += t.fwd_s;
      // Full recomputation runs the layer's forward again; selective, the attention core (inside
      // flash attention's own backward already, so only unfused attention pays it).
      const bool selective = L.recompute == Recompute::selective && L.attention == Attention::unfused;
      b.compute += t.bwd_s + (full ? t.fwd_s : selective ? t.fwd_attention_s : 0);
      double tp_f = L.tp_comm_overlap ? exposed(tp_layer, t.fwd_gemm_s) : tp_layer;
      double tp_b = L.tp_comm_overlap ? exposed(tp_layer, t.bwd_gemm_s) : tp_layer;
      f.tp += tp_f;
      b.tp += tp_b + (full ? tp_f : 0);
      // Ring attention sends the next K/V block while the current one is processed.
      double cp_f = exposed(lc.cp_steps * cp_step, t.fwd_attention_s * lc.cp_steps / L.cp);
      double cp_b = exposed(2 * lc.cp_steps * cp_step, t.bwd_attention_s * lc.cp_steps / L.cp);
      f.cp += cp_f;
      b.cp += cp_b + (full ? cp_f : 0);
      // Dispatch and combine all-to-alls, each way, and with etp > 1 the all-gather after dispatch
      // and the reduce-scatter before combine (their backward: the reverse pair).
      const double expert_comm = (lc.ep_B > 0 ? 2 * ep_a2a : 0) + (lc.etp_B > 0 ? c.etp_ag + c.etp_rs : 0);
      if (L.overlap_moe_ep_comm) {
        // Megatron-Core's combined 1F1B runs one micro-batch's forward beside another's backward,
        // layer by layer, each one's all-to-alls behind the other's compute (taken for every
        // micro-batch: the schedule's first forward and last backward have no partner).
        f.ep += exposed(expert_comm, t.bwd_s);
        b.ep += exposed(expert_comm, t.fwd_s);
      } else {
        f.ep += expert_comm;
        b.ep += expert_comm + (full ? expert_comm : 0);
      }
      if (zero3) {  // gather a layer's weights ahead of its forward and backward, reduce its gradients
        const double gather = gathers_per_layer * dp_ag, reduce = reduces_per_layer * dp_rs;
        f.zero3 += exposed_sharing(gather, t.fwd_s, dp_sm_share);
        b.zero3 += exposed_sharing(gather + reduce, t.bwd_s, dp_sm_share);
      }
    };
    const int stages = L.pp * L.vp;
    for (int v = 0; v < stages; ++v) {
      PassCost& f = fwd[static_cast<std::size_t>(v)];
      PassCost& b = bwd[static_cast<std::size_t>(v)];
      // Layers of one kind cost the same: time the first of each kind, count the rest (the
      // stage's own layers: uneven stages hold different counts).
      std::map<bool, std::pair<int, std::pair<PassCost, PassCost>>> kinds;
      for (int l : virtual_stage_layers(model, L, v)) {
        auto [it, fresh] = kinds.try_emplace(model.is_moe_layer(l), std::pair{0, std::pair<PassCost, PassCost>{}});
        if (fresh) layer_cost(l, it->second.second.first, it->second.second.second);
        ++it->second.first;
      }
      for (const auto& [moe, entry] : kinds) {
        const auto& [count, costs] = entry;
        for (auto [dst, src] : {std::pair{&f, &costs.first}, std::pair{&b, &costs.second}}) {
          dst->compute += count * src->compute;
          dst->tp += count * src->tp;
          dst->cp += count * src->cp;
          dst->ep += count * src->ep;
          dst->zero3 += count * src->zero3;
        }
      }
      auto add_kernels = [&](const LayerKernels& lk) {
        TimedLayer t = time(lk);
        f.compute += t.fwd_s;
        b.compute += t.bwd_s;
      };
      if (v == 0) add_kernels(embedding_kernels(model, L));
      if (v == stages - 1) add_kernels(head_kernels(model, L));
    }
  }

  // The optimizer step: streaming its bytes per parameter over the rank's shard (the largest;
  // evenly split, the first or the last stage, which hold the embedding and the head).
  double optimizer_step_s() const {
    const OptimizerModel& optimizer = catalog.optimizer(options.optimizer, model.where);
    double optimizer_s = 0;
    // Every rank: uneven, a middle stage may hold more than the first and the last.
    for (int r = 0; r < L.pp; ++r) {
      double params = rank_params(model, L, r).held(L, L.zero >= 1 || L.fsdp);
      NamedKernel step{"optimizer", {}, false};
      step.kernel.kind = Kernel::Kind::memory;
      step.kernel.bytes_B = params * optimizer.bytes_per_param;
      optimizer_s = std::max(optimizer_s, kernel_s(step));
    }
    return optimizer_s;
  }

  // Throughput, FLOP rates and memory of an assembled iteration.
  void add_figures(LlmResult& out) const {
    const GpuModel& gpu = topology.gpu_model(0);
    const OptimizerModel& optimizer = catalog.optimizer(options.optimizer, model.where);
    const double iteration_s = out.iteration_s;
    out.gpus = L.gpus();
    out.nodes = topology.node_of(out.gpus - 1) + 1;
    const double tokens = double(L.global_batch) * L.seq_len;
    out.tokens_per_s = tokens / iteration_s;
    IterationFlops flops = iteration_flops(model, L.seq_len, L.global_batch, L.recompute);
    // The dense peak of the math the GEMMs run at: fp8 runs against the fp8 peak, so that the
    // hardware's FLOP rate can never exceed it (MFU <= HFU <= 1).
    const std::string peak_key = L.precision == "fp16" ? "fp16_tensor" : L.precision == "fp8" ? "fp8_tensor" : "bf16_tensor";
    auto peak = gpu.math.find(peak_key);
    const double peak_flops_per_s = peak == gpu.math.end() ? 0 : peak->second.dense_flops_per_s;
    out.tflops_per_gpu = flops.model / iteration_s / out.gpus / 1e12;
    out.mfu = peak_flops_per_s > 0 ? flops.model / iteration_s / out.gpus / peak_flops_per_s : 0;
    out.hfu = peak_flops_per_s > 0 ? flops.hardware / iteration_s / out.gpus / peak_flops_per_s : 0;

    // Memory: the stage that holds most, its chunk-forwards in flight from the schedule's order.
    out.memory = layout_memory(model, L, optimizer.state_bytes_per_param);
    out.memory_capacity_B = gpu.memory_B;
    out.fits = out.memory.total_B() <= gpu.memory_B;
  }

  // --- the windows -----------------------------------------------------------------------
  int max_rank(const std::vector<int>& ranks) const { return *std::max_element(ranks.begin(), ranks.end()); }

  void add_collective(TraceSpec& trace, const std::string& name, const std::string& op, const std::vector<int>& ranks,
                      double size_B, const std::string& dtype, const std::string& stream) {
    trace.groups.push_back(TraceGroup{name, ranks, {}});
    TraceOp o;
    o.name = name + "." + op;
    o.kind = TraceOp::Kind::collective;
    o.op = op;
    o.group = name;
    o.size_B = size_B;
    o.dtype = dtype;
    o.stream = stream;
    trace.ops.push_back(o);
    trace.ranks = std::max(trace.ranks, max_rank(ranks) + 1);
  }

  void add_send(TraceSpec& trace, const std::string& name, int src, int dst, double size_B, const std::string& stream) {
    TraceOp o;
    o.name = name;
    o.kind = TraceOp::Kind::send;
    o.src = src;
    o.dst = dst;
    o.size_B = size_B;
    o.stream = stream;
    trace.ops.push_back(o);
    trace.ranks = std::max(trace.ranks, std::max(src, dst) + 1);
  }

  std::vector<int> tp_group(int cp, int d, int pp) const {
    std::vector<int> ranks;
    for (int i = 0; i < L.tp; ++i) ranks.push_back(placement.rank({i, cp, d, pp}));
    return ranks;
  }

  void add_tp_ops(TraceSpec& trace, const std::string& prefix, int pp, double size_B) {
    if (L.tp == 1) return;
    const std::string dtype = types.other_dtype;
    for (int c = 0; c < L.cp; ++c)
      for (int d = 0; d < L.dp; ++d) {
        std::vector<int> ranks = tp_group(c, d, pp);
        std::string name = prefix + std::to_string(ranks.front());
        if (L.sp) {
          add_collective(trace, name, "allgather", ranks, size_B, dtype, "tp");
          trace.ops.back().name = name + ".ag";
          TraceOp rs = trace.ops.back();
          rs.name = name + ".rs";
          rs.op = "reducescatter";
          trace.ops.push_back(rs);
        } else {
          add_collective(trace, name, "allreduce", ranks, size_B, dtype, "tp");
          trace.ops.back().name = name + ".ar";
        }
      }
  }

  // Steady state: every stage-0 and stage-1 rank's tensor, pipeline, context and expert traffic at
  // once (pipeline stages beyond are copies on other servers).
  void build_steady(const LayerComm& dense, const LayerComm& moe) {
    steady.description = "steady-state window";
    const int stages = std::min(L.pp, 2);
    for (int p = 0; p < stages; ++p) add_tp_ops(steady, "tp.", p, dense.tp_B);
    // Point-to-point sends of the first replicas only: the engine routes pairs of at most
    // kPairGpus GPUs, and other replicas' sends run between other servers, copies of these.
    const int replicas = std::max(1, std::min(L.dp, kPairGpus / (2 * L.tp * L.cp)));
    for (int p = 0; p < stages; ++p)
      for (int c = 0; c < L.cp; ++c)
        for (int d = 0; d < replicas; ++d)
          for (int i = 0; i < L.tp; ++i) {
            int r = placement.rank({i, c, d, p});
            if (L.pp > 1 && p == 0) add_send(steady, "pp." + std::to_string(r), r, placement.rank({i, c, d, 1}), dense.pp_B, "pp");
            if (L.cp > 1)
              add_send(steady, "cp." + std::to_string(r), r, placement.rank({i, (c + 1) % L.cp, d, p}), dense.cp_B, "cp");
          }
    for (int p = 0; p < stages && (moe.ep_B > 0 || moe.etp_B > 0); ++p) add_expert_ops(p, moe);
  }

  // One stage's dispatch all-to-alls over every EP group and, with etp > 1, the all-gather and
  // reduce-scatter of every expert tensor-parallel group (expert_groups.hpp places them).
  void add_expert_ops(int stage, const LayerComm& moe) {
    const ExpertGroups groups = expert_groups(L, placement, stage);
    if (moe.ep_B > 0)
      for (const std::vector<int>& ranks : groups.ep)
        add_collective(steady, "ep." + std::to_string(ranks.front()), "alltoall", ranks, moe.ep_B, types.other_dtype, "ep");
    if (moe.etp_B > 0)
      for (const std::vector<int>& ranks : groups.etp) {
        const std::string name = "etp." + std::to_string(ranks.front());
        add_collective(steady, name, "allgather", ranks, moe.etp_B, types.other_dtype, "etp");
        steady.ops.back().name = name + ".ag";
        TraceOp rs = steady.ops.back();
        rs.name = name + ".rs";
        rs.op = "reducescatter";
        steady.ops.push_back(rs);
      }
  }

  // Gradient synchronisation of stage 0 (it holds the embedding and finishes last), with its
  // tensor-parallel traffic beside it.
  // `stage0_layers`: the transformer layers stage 0 holds (ZeRO-3 moves one at a time).
  void build_gradient(const RankParams& stage0, double layer_params, int stage0_layers) {
    gradient.description = "gradient window";
    const bool sharded = L.shards_parameters();
    const double dense = sharded ? layer_params : stage0.dense;
    const std::string grad = types.gradient_nccl, weight = types.other_dtype;
    const double grad_B = types.gradient_B, weight_B = dtype_size_B(types.other_dtype);
    // DeepSpeed ZeRO-3's buckets (FSDP gathers whole layers): the fraction of a layer one
    // collective moves.
    double gather_share = 1, reduce_share = 1;
    if (sharded && !L.fsdp && layer_params > 0) {
      const ShardingModel& zero3 = catalog.sharding("deepspeed-zero3", model.where);
      gather_share = std::min(1.0, zero3.gather_bucket_params / layer_params);
      reduce_share = std::min(1.0, zero3.reduce_bucket_params / layer_params);
      gathers_per_layer = 1 / gather_share;
      reduces_per_layer = 1 / reduce_share;
    }
    // Megatron-Core (zero 0 or 1): one collective per distinct bucket size, one after another on
    // the group's stream (dp_layout(); run() places them on the timeline).
    auto add_buckets = [&](const std::string& name, const std::vector<int>& ranks, const std::vector<double>& sizes) {
      if (ranks.size() < 2 || sizes.empty()) return;
      add_collective(gradient, name, L.zero == 0 ? "allreduce" : "reducescatter", ranks, 0, grad, name);
      const TraceOp first = gradient.ops.back();
      gradient.ops.pop_back();
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const std::string op = name + ".s" + std::to_string(k);
        TraceOp reduce = first;
        reduce.name = op + (L.zero == 0 ? ".ar" : ".rs");
        reduce.size_B = sizes[k] * grad_B;
        gradient.ops.push_back(reduce);
        if (L.zero == 0) continue;
        TraceOp gather = first;
        gather.name = op + ".ag";
        gather.op = "allgather";
        gather.size_B = sizes[k] * weight_B;
        gather.dtype = weight;
        gradient.ops.push_back(gather);
      }
    };
    auto add_sync = [&](const std::string& name, const std::vector<int>& ranks, double params) {
      if (ranks.size() < 2 || params <= 0) return;
      if (L.zero == 0 && !L.fsdp) {
        add_collective(gradient, name, "allreduce", ranks, params * grad_B, grad, name);
        gradient.ops.back().name = name + ".ar";
        return;
      }
      add_collective(gradient, name, "reducescatter", ranks, params * reduce_share * grad_B, grad, name);
      gradient.ops.back().name = name + ".rs";
      TraceOp ag = gradient.ops.back();
      ag.name = name + ".ag";
      ag.op = "allgather";
      ag.size_B = params * gather_share * weight_B;
      ag.dtype = weight;
      gradient.ops.push_back(ag);
    };
    for (int i = 0; i < L.tp; ++i) {
      std::vector<int> ranks;
      for (int c = 0; c < L.cp; ++c)
        for (int d = 0; d < L.dp; ++d) ranks.push_back(placement.rank({i, c, d, 0}));
      if (megatron_dp())
        add_buckets("dp." + std::to_string(ranks.front()), ranks, dp.dense_sizes);
      else
        add_sync("dp." + std::to_string(ranks.front()), ranks, dense);
    }
    if (stage0.experts > 0)  // expert gradients over the expert data-parallel groups (expert_groups.hpp)
      for (const std::vector<int>& expert_ranks : expert_groups(L, placement, 0).edp) {
        const std::string name = "edp." + std::to_string(expert_ranks.front());
        if (megatron_dp())
          add_buckets(name, expert_ranks, dp.expert_sizes);
        else
          add_sync(name, expert_ranks, sharded ? stage0.experts / std::max<double>(1, stage0_layers) : stage0.experts);
      }
    if (!gradient.ops.empty()) add_tp_ops(gradient, "tpg.", 0, layer_comm(model, L, 0).tp_B);
  }
};

LlmIteration::LlmIteration(const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                           const LlmLayout& layout, LlmOptions options)
    : impl_(std::make_unique<Impl>(topology, catalog, model, layout, std::move(options))) {
  if (topology.gpu_count() < layout.gpus())
    throw UsageError("the layout needs " + std::to_string(layout.gpus()) + " GPUs; " + topology.name() + " has " +
                     std::to_string(topology.gpu_count()));
  Impl& I = *impl_;
  int moe_layer = -1;
  for (int l = 0; l < model.layers && moe_layer < 0; ++l)
    if (model.is_moe_layer(l)) moe_layer = l;
  LayerComm dense = layer_comm(model, layout, 0);
  LayerComm moe = moe_layer >= 0 ? layer_comm(model, layout, moe_layer) : LayerComm{};
  I.build_steady(dense, moe);
  RankParams stage0 = rank_params(model, layout, 0);
  // ZeRO-3 / FSDP gathers and reduces one layer at a time: the average layer of the stage (its
  // own layer count: uneven, stage 0 may hold fewer; an embedding-only stage counts as one).
  const int stage0_layers = static_cast<int>(stage_layers(model, layout, 0).size());
  if (I.megatron_dp()) {
    const ShardingModel& ddp = catalog.sharding("megatron-core-ddp", model.where);
    I.dp_bucket_params = ddp_bucket_params(layout.ddp_bucket_params, ddp.reduce_bucket_params,
                                           ddp.reduce_bucket_params_per_rank, layout.dp * layout.cp);
    I.dp = dp_layout(model, layout, I.dp_bucket_params, kScaledFromB / I.types.gradient_B);
  }
  I.build_gradient(stage0, stage0.dense / std::max(1, stage0_layers), stage0_layers);
  ReplayOptions replay;
  replay.routes = I.options.routes;
  replay.nccl = catalog.nccl_version(I.options.nccl).name;
  if (!I.steady.ops.empty()) I.steady_replay = std::make_unique<Replay>(topology, catalog, I.steady, replay);
  if (!I.gradient.ops.empty()) I.gradient_replay = std::make_unique<Replay>(topology, catalog, I.gradient, replay);
}

LlmIteration::~LlmIteration() = default;

std::vector<Replay*> LlmIteration::windows() {
  std::vector<Replay*> out;
  if (impl_->steady_replay) out.push_back(impl_->steady_replay.get());
  if (impl_->gradient_replay) out.push_back(impl_->gradient_replay.get());
  return out;
}


LlmResult LlmIteration::run(const std::vector<Runner*>& runners) {
  Impl& I = *impl_;
  const LlmLayout& L = I.L;
  std::vector<Replay*> replays = windows();
  if (runners.size() != replays.size()) throw std::logic_error("LlmIteration::run: one runner per window");
  ReplayResult steady, gradient;
  std::vector<std::string> algorithms;
  for (std::size_t i = 0; i < replays.size(); ++i) {
    ReplayResult r = replays[i]->run(*runners[i]);
    if (!r.algorithms.empty()) algorithms.push_back(r.algorithms);
    (replays[i] == I.steady_replay.get() ? steady : gradient) = std::move(r);
  }
  LlmResult out;
  out.algorithms = algorithms.empty() ? "-" : algorithms.front() + (algorithms.size() > 1 ? "; " + algorithms[1] : "");
  const CommTimes comm = comm_times(steady, gradient);
  out.comm_s = {{"tp_allreduce", comm.tp_ar}, {"tp_allgather", comm.tp_ag}, {"tp_reducescatter", comm.tp_rs},
                {"pp_send", comm.pp},         {"cp_send", comm.cp_step},     {"ep_alltoall", comm.ep_a2a},
                {"dp_allreduce", comm.dp_ar}, {"dp_reducescatter", comm.dp_rs}, {"dp_allgather", comm.dp_ag}};
  const double pp_s = comm.pp, dp_rs = comm.dp_rs;
  const double dp_share = I.sm_share(comm.dp_channels);
  const int stages = L.pp * L.vp;
  std::vector<PassCost> fwd(static_cast<std::size_t>(stages)), bwd(fwd);
  I.pass_costs(comm, fwd, bwd);

  // The pipeline, with and without point-to-point time (the difference is pp_s).
  const int m = L.micro_batches();
  PipelineInput pin;
  pin.pp = L.pp;
  pin.vp = L.vp;
  pin.micro_batches = m;
  for (int v = 0; v < stages; ++v) {
    pin.forward_s.push_back(fwd[static_cast<std::size_t>(v)].total());
    pin.backward_s.push_back(bwd[static_cast<std::size_t>(v)].total());
  }
  // ZeRO-2 reduces every micro-batch's gradients (they are sharded, so none accumulate): each
  // backward pass exposes what its share of that reduction does not hide; DeepSpeed overlaps it
  // only with overlap_comm, off by default below stage 3 (deepspeed/runtime/zero/config.py:
  // 134,350-354@DeepSpeed@38327e07f6cd), which --overlap-grad-reduce turns on.
  if (L.zero == 2 && !L.fsdp && dp_rs > 0) {
    double rank_bwd = 0;
    for (int c = 0; c < L.vp; ++c) rank_bwd += pin.backward_s[static_cast<std::size_t>(c * L.pp)];
    for (int v = 0; v < stages; ++v) {
      double extra = (L.overlap_grad_reduce ? exposed_sharing(dp_rs, rank_bwd, dp_share) : dp_rs) / L.vp;
      pin.backward_s[static_cast<std::size_t>(v)] += extra;
      bwd[static_cast<std::size_t>(v)].zero3 += extra;
    }
  }
  out.stage_forward_s = pin.forward_s;
  out.stage_backward_s = pin.backward_s;
  pin.p2p_s = pp_s;
  PipelineResult with_p2p = run_pipeline(pin);
  pin.p2p_s = 0;
  PipelineResult without_p2p = run_pipeline(pin);

  // Megatron-Core: bucketed gradient reductions on the timeline of each rank's last micro-batch,
  // then the optimizer step, then the parameter all-gathers ahead of the next forward
  // (src/llm/data_parallel.hpp). DeepSpeed ZeRO-2/3 and FSDP move theirs inside the passes.
  const double optimizer_s = I.optimizer_step_s();
  DpExposure exposure;
  exposure.reduce_s.assign(static_cast<std::size_t>(L.pp), 0);
  if (I.megatron_dp()) {
    // Each distinct size's collectives as the gradient window ran them ("<group>.s<k>.rs"); the
    // experts' buffers over the expert data-parallel groups.
    DpDurations d;
    auto durations = [&](const std::string& prefix, std::size_t sizes, std::vector<double>& reduce, std::vector<double>& gather) {
      for (std::size_t k = 0; k < sizes; ++k) {
        const std::string size = ".s" + std::to_string(k);
        reduce.push_back(slowest(gradient, prefix, size + (L.zero == 0 ? ".ar" : ".rs")));
        if (L.zero == 1) gather.push_back(slowest(gradient, prefix, size + ".ag"));
      }
    };
    durations("dp.", I.dp.dense_sizes.size(), d.dense_reduce_s, d.dense_gather_s);
    durations("edp.", I.dp.expert_sizes.size(), d.expert_reduce_s, d.expert_gather_s);
    std::vector<double> head_s(static_cast<std::size_t>(stages), 0);
    head_s.back() = I.time(head_kernels(I.model, L)).bwd_s;
    exposure = dp_exposure(L, I.dp, d, with_p2p, pin.forward_s, pin.backward_s, head_s, dp_share);
  }
  int critical = 0;
  double iteration_s = 0, reduce_exposed = 0;
  for (int r = 0; r < L.pp; ++r) {
    const double e = exposure.reduce_s[static_cast<std::size_t>(r)];
    if (with_p2p.end_s[static_cast<std::size_t>(r)] + e > iteration_s) {
      iteration_s = with_p2p.end_s[static_cast<std::size_t>(r)] + e;
      reduce_exposed = e;
      critical = r;
    }
  }
  const double gather_exposed = exposure.gather_s;
  iteration_s += optimizer_s + gather_exposed;

  // Breakdown on the critical rank.
  for (int c = 0; c < L.vp; ++c) {
    const std::size_t v = static_cast<std::size_t>(c * L.pp + critical);
    out.compute_s += m * (fwd[v].compute + bwd[v].compute);
    out.tp_s += m * (fwd[v].tp + bwd[v].tp);
    out.cp_s += m * (fwd[v].cp + bwd[v].cp);
    out.ep_s += m * (fwd[v].ep + bwd[v].ep);
    out.dp_s += m * (fwd[v].zero3 + bwd[v].zero3);
  }
  const double busy = without_p2p.busy_s[static_cast<std::size_t>(critical)];
  out.bubble_s = without_p2p.end_s[static_cast<std::size_t>(critical)] - busy;
  out.pp_s = with_p2p.end_s[static_cast<std::size_t>(critical)] - without_p2p.end_s[static_cast<std::size_t>(critical)];
  out.dp_s += reduce_exposed + gather_exposed;
  if (I.megatron_dp()) {
    out.dp_bucket_params = I.dp_bucket_params;
    out.dp_first_chunk_buckets = I.dp.dense.empty() ? 0 : static_cast<int>(I.dp.dense.front().buckets.size());
    out.dp_gradient_type = I.types.gradient_nccl;
    out.dp_reduce_exposed_s = reduce_exposed;
    out.dp_gather_exposed_s = gather_exposed;
  }
  out.optimizer_s = optimizer_s;
  out.iteration_s = iteration_s;

  I.add_figures(out);
  out.floors = llm_bounds(I.topology, I.catalog, I.model, L, I.options);
#ifdef TOPSIM_INVARIANTS
  check_llm_invariants(out, out.floors);
#endif
  return out;
}

const TraceSpec& LlmIteration::steady_window() const { return impl_->steady; }
const TraceSpec& LlmIteration::gradient_window() const { return impl_->gradient; }
const DpLayout& LlmIteration::data_parallel() const { return impl_->dp; }

LlmResult simulate_iteration(const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                             const LlmLayout& layout, const LlmOptions& options, IterationWindows* windows) {
  LlmIteration iteration(topology, catalog, model, layout, options);
  if (windows) *windows = {iteration.steady_window(), iteration.gradient_window(), iteration.data_parallel()};
  Simulator simulator;
  std::vector<std::unique_ptr<PlatformRunner>> owned;
  std::vector<Runner*> runners;
  for (Replay* window : iteration.windows()) {
    owned.push_back(std::make_unique<PlatformRunner>(simulator, simulator.add_platform(topology, window->routes(), window->needs())));
    runners.push_back(owned.back().get());
  }
  return iteration.run(runners);
}

}  // namespace topsim
