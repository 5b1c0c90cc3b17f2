#include "llm/bounds.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "compute/kernel.hpp"
#include "llm/iteration.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Slack of the checks: SimGrid's max-min solver works to 1e-5 relative (engine/simulator.cpp).
constexpr double kRelative = 1e-4;

// Bytes one collective kind moves, summed over the ranks (into or out of them) and over the
// servers its ranks sit on, per instance of nccl-tests size S (see bounds.hpp).
struct Flow {
  double rank_out_B = 0, rank_in_B = 0, server_out_B = 0, server_in_B = 0;
  Flow& operator+=(const Flow& o) {
    rank_out_B += o.rank_out_B;
    rank_in_B += o.rank_in_B;
    server_out_B += o.server_out_B;
    server_in_B += o.server_in_B;
    return *this;
  }
};

enum class Coll { allreduce, allgather, reducescatter };

// One instance on a group of `ranks` spread over `servers` servers (k_j ranks on server j).
// Sums over servers: all-gather in = S sum_j (n - k_j) / n = S (servers - 1); likewise the
// reduce-scatter out; all-reduce S per server each way once the group leaves one server.
Flow collective_flow(Coll op, double size_B, double ranks, double servers) {
  Flow f;
  if (ranks < 2 || size_B <= 0) return f;
  const double spread = servers > 1 ? servers : 0;
  switch (op) {
    case Coll::allreduce:
      f.rank_out_B = f.rank_in_B = ranks * size_B;
      f.server_out_B = f.server_in_B = spread * size_B;
      break;
    case Coll::allgather:
      f.rank_in_B = (ranks - 1) * size_B;
      f.rank_out_B = size_B;  // each shard leaves its rank once
      f.server_in_B = servers > 1 ? (servers - 1) * size_B : 0;
      f.server_out_B = servers > 1 ? size_B : 0;
      break;
    case Coll::reducescatter:
      f.rank_out_B = (ranks - 1) * size_B;
      f.rank_in_B = size_B;
      f.server_out_B = servers > 1 ? (servers - 1) * size_B : 0;
      f.server_in_B = servers > 1 ? size_B : 0;
      break;
  }
  return f;
}

Flow times(Flow f, double count) {
  f.rank_out_B *= count;
  f.rank_in_B *= count;
  f.server_out_B *= count;
  f.server_in_B *= count;
  return f;
}

struct Job {
  const Topology& topology;
  const LlmLayout& L;
  Placement placement;
  int servers_of(const std::vector<int>& ranks) const {
    std::set<int> nodes;
    for (int r : ranks) nodes.insert(topology.node_of(r));
    return static_cast<int>(nodes.size());
  }
};

// Kernel floors of one micro-batch through every layer, the embedding and the head, with the
// recomputation the layout asks for (as the iteration runs it).
double micro_batch_floor_s(const TransformerSpec& model, const LlmLayout& L, const GpuModel& gpu,
                           const ComputeModel& compute) {
  auto floor_of = [&](const std::vector<NamedKernel>& kernels, bool core_only) {
    double s = 0;
    for (const NamedKernel& k : kernels)
      if (!core_only || k.core) s += kernel_cost(gpu, compute, k.kernel).floor_s;
    return s;
  };
  auto pass_floor = [&](const LayerKernels& lk, bool layer) {
    double s = floor_of(lk.forward, false) + floor_of(lk.backward, false);
    if (layer && L.recompute == Recompute::full) s += floor_of(lk.forward, false);
    if (layer && L.recompute == Recompute::selective && L.attention == Attention::unfused) s += floor_of(lk.forward, true);
    return s;
  };
  double total = 0;
  double by_kind[2] = {-1, -1};  // dense, MoE: layers of one kind cost the same
  for (int l = 0; l < model.layers; ++l) {
    double& kind = by_kind[model.is_moe_layer(l) ? 1 : 0];
    if (kind < 0) kind = pass_floor(layer_kernels(model, L, l, &gpu), true);
    total += kind;
  }
  return total + pass_floor(embedding_kernels(model, L), false) + pass_floor(head_kernels(model, L), false);
}

// Every collective and send the layout's scheme runs in one iteration (iteration.cpp's windows,
// counted per micro-batch and pass), as flows.
Flow iteration_flow(const Job& job, const TransformerSpec& model) {
  const LlmLayout& L = job.L;
  const LlmTypes types = llm_types(L);
  const double weight_B = dtype_size_B(types.other_dtype), grad_B = types.gradient_B;
  const double m = L.micro_batches();
  const double passes = L.recompute == Recompute::full ? 3 : 2;  // forward, backward, forward again
  Flow total;

  // Data parallelism, per stage and tensor rank: dense parameters over dp x cp, experts over
  // their dp x cp / ep replicas.
  auto sync = [&](double params, const std::vector<int>& ranks) {
    const double n = static_cast<double>(ranks.size()), servers = job.servers_of(ranks);
    if (L.shards_parameters()) {  // gathered ahead of each forward and backward, reduced after each backward
      total += times(collective_flow(Coll::allgather, params * weight_B, n, servers), 2 * m);
      total += times(collective_flow(Coll::reducescatter, params * grad_B, n, servers), m);
    } else if (L.zero == 0) {
      total += collective_flow(Coll::allreduce, params * grad_B, n, servers);
    } else {
      total += times(collective_flow(Coll::reducescatter, params * grad_B, n, servers), L.zero == 2 ? m : 1);
      total += collective_flow(Coll::allgather, params * weight_B, n, servers);
    }
  };
  for (int s = 0; s < L.pp; ++s) {
    const RankParams p = rank_params(model, L, s);
    for (int i = 0; i < L.tp; ++i) {
      std::vector<int> ranks;
      for (int c = 0; c < L.cp; ++c)
        for (int d = 0; d < L.dp; ++d) ranks.push_back(job.placement.rank({i, c, d, s}));
      sync(p.dense, ranks);
      if (p.experts > 0 && L.ep > 1)
        for (int e = 0; e < L.ep; ++e) {
          std::vector<int> expert_ranks;
          for (int c = 0; c < L.cp; ++c)
            for (int d = e; d < L.dp; d += L.ep) expert_ranks.push_back(job.placement.rank({i, c, d, s}));
          sync(p.experts, expert_ranks);
        }
    }
  }

  // Tensor, context and expert parallelism per layer and micro-batch; the mean stage's layers.
  int moe_layers = 0;
  for (int l = 0; l < model.layers; ++l) moe_layers += model.is_moe_layer(l) ? 1 : 0;
  const double layers_per_stage = double(model.layers) / L.pp, moe_per_stage = double(moe_layers) / L.pp;
  const LayerComm dense = layer_comm(model, L, 0);
  for (int s = 0; s < L.pp; ++s)
    for (int c = 0; c < L.cp; ++c)
      for (int d = 0; d < L.dp; ++d) {
        std::vector<int> ranks;
        for (int i = 0; i < L.tp; ++i) ranks.push_back(job.placement.rank({i, c, d, s}));
        const double servers = job.servers_of(ranks), per_layer = m * passes * layers_per_stage;
        if (L.tp > 1 && L.sp) {
          total += times(collective_flow(Coll::allgather, dense.tp_B, L.tp, servers), 2 * per_layer);
          total += times(collective_flow(Coll::reducescatter, dense.tp_B, L.tp, servers), 2 * per_layer);
        } else if (L.tp > 1) {
          total += times(collective_flow(Coll::allreduce, dense.tp_B, L.tp, servers), 2 * per_layer);
        }
      }
  const double gpus = L.gpus();
  if (L.cp > 1) {  // ring attention: cp - 1 sends forward, twice that backward
    const double sends = m * layers_per_stage * dense.cp_steps * (L.recompute == Recompute::full ? 4 : 3);
    total.rank_out_B += gpus * sends * dense.cp_B;
    total.rank_in_B += gpus * sends * dense.cp_B;
  }
  if (moe_layers > 0 && L.ep > 1) {  // dispatch and combine, each pass; each rank keeps 1/ep of its tokens
    int first_moe = 0;
    while (!model.is_moe_layer(first_moe)) ++first_moe;
    const double a2a_B = layer_comm(model, L, first_moe).ep_B * (L.ep - 1) / L.ep;
    const double count = m * moe_per_stage * 2 * passes;
    total.rank_out_B += gpus * count * a2a_B;
    total.rank_in_B += gpus * count * a2a_B;
  }

  // Pipeline: each micro-batch's activation forward and its gradient back across every
  // virtual-stage boundary.
  if (L.pp > 1)
    for (int c = 0; c < L.cp; ++c)
      for (int d = 0; d < L.dp; ++d)
        for (int i = 0; i < L.tp; ++i)
          for (int v = 0; v + 1 < L.pp * L.vp; ++v) {
            const int from = job.placement.rank({i, c, d, v % L.pp}), to = job.placement.rank({i, c, d, (v + 1) % L.pp});
            const double bytes = 2 * m * dense.pp_B;
            total.rank_out_B += bytes;
            total.rank_in_B += bytes;
            if (job.topology.node_of(from) != job.topology.node_of(to)) {
              total.server_out_B += bytes;
              total.server_in_B += bytes;
            }
          }
  return total;
}

// Line rate, one direction, of every link at a GPU of the job, and of every link leaving a
// server of the job (to the fabric or to another server).
std::pair<double, double> line_rates_Bps(const Topology& t, int gpus) {
  double gpu_Bps = 0, server_Bps = 0;
  std::set<int> nodes;
  for (int g = 0; g < gpus; ++g) {
    nodes.insert(t.node_of(g));
    for (auto [e, end] = boost::out_edges(t.gpu(g), t.graph()); e != end; ++e) gpu_Bps += t.link(*e).line_rate_Bps();
  }
  for (auto [e, end] = boost::edges(t.graph()); e != end; ++e) {
    const int a = t.device(boost::source(*e, t.graph())).node, b = t.device(boost::target(*e, t.graph())).node;
    if (a == b) continue;
    const double rate = t.link(*e).line_rate_Bps();
    if (nodes.count(a) > 0) server_Bps += rate;
    if (nodes.count(b) > 0) server_Bps += rate;
  }
  return {gpu_Bps, server_Bps};
}

}  // namespace

double LlmBounds::iteration_s() const { return std::max({compute_s, gpu_links_s, network_s}); }

std::string LlmBounds::binding() const {
  if (compute_s >= gpu_links_s && compute_s >= network_s) return "compute";
  return gpu_links_s >= network_s ? "gpu links" : "network";
}

LlmBounds llm_bounds(const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                     const LlmLayout& L, const LlmOptions& options) {
  LlmBounds b;
  const GpuModel& gpu = topology.gpu_model(0);
  const ComputeModel& compute = catalog.compute(gpu.architecture, gpu.where);
  const OptimizerModel& optimizer = catalog.optimizer(options.optimizer, model.where);
  const LlmTypes types = llm_types(L);

  // Memory and the optimizer's stream over the mean rank's parameters.
  double held = 0, weights = 0, gradients = 0;  // held: what the optimizer state covers
  for (int s = 0; s < L.pp; ++s) {
    const RankParams p = rank_params(model, L, s);
    held += p.held(L, L.zero >= 1 || L.fsdp) / L.pp;
    weights += p.held(L, L.shards_parameters()) / L.pp;
    gradients += p.held(L, L.zero >= 2 || L.fsdp) / L.pp;
  }
  b.memory_B = weights * dtype_size_B(types.other_dtype) + gradients * types.gradient_B +
               held * (dtype_size_B("fp32") + optimizer.state_bytes_per_param);
  if (L.shards_parameters()) b.memory_B += largest_gathered_layer_B(model, L);

  const double optimizer_floor_s = held * optimizer.bytes_per_param / gpu.memory_Bps;
  b.compute_s = micro_batch_floor_s(model, L, gpu, compute) * L.micro_batches() / L.pp + optimizer_floor_s;

  const Job job{topology, L, Placement(L, options.order)};
  const Flow flow = iteration_flow(job, model);
  const auto [gpu_Bps, server_Bps] = line_rates_Bps(topology, L.gpus());
  b.gpu_links_B = std::max(flow.rank_out_B, flow.rank_in_B);
  b.network_B = std::max(flow.server_out_B, flow.server_in_B);
  b.gpu_links_s = gpu_Bps > 0 ? b.gpu_links_B / gpu_Bps : 0;
  b.network_s = server_Bps > 0 ? b.network_B / server_Bps : 0;
  return b;
}

void check_llm_invariants(const LlmResult& r, const LlmBounds& b) {
  auto fail = [](const std::string& what) { throw std::logic_error("LlmIteration: invariant violated: " + what); };
  auto below = [&](double floor_s, const char* what) {
    if (r.iteration_s < floor_s * (1 - kRelative))
      fail("iteration " + std::to_string(r.iteration_s) + " s below its " + what + " floor " + std::to_string(floor_s) + " s");
  };
  below(b.compute_s, "compute (kernels at datasheet peak)");
  below(b.gpu_links_s, "GPU-link (bytes over line rate)");
  below(b.network_s, "network (bytes over line rate)");
  if (r.hfu > 1 + kRelative) fail("hfu " + std::to_string(r.hfu) + " above 1");
  if (r.mfu > r.hfu * (1 + kRelative)) fail("mfu " + std::to_string(r.mfu) + " above hfu " + std::to_string(r.hfu));
  if (r.memory.total_B() < b.memory_B * (1 - kRelative))
    fail("memory " + std::to_string(r.memory.total_B()) + " B below what a rank must hold, " + std::to_string(b.memory_B) + " B");
}

}  // namespace topsim
