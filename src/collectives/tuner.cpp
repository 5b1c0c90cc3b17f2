#include "collectives/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace topsim {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// NCCL's log2i: floor(log2(n)), 0 for n < 2.
int log2i(double n) {
  int l = 0;
  for (long long v = static_cast<long long>(n); v > 1; v >>= 1) ++l;
  return l;
}

double table(const std::map<std::string, std::map<std::string, double>>& t, const std::string& algo,
             const std::string& proto) {
  auto a = t.find(algo);
  if (a == t.end()) return 0;
  auto p = a->second.find(proto);
  return p == a->second.end() ? 0 : p->second;
}

double per_nodes(const std::map<std::string, NcclPerNodes>& t, const std::string& row, int index, double none) {
  auto it = t.find(row);
  return it == t.end() ? none : it->second[static_cast<std::size_t>(index)];
}

bool tuned(CollOp op) { return op != CollOp::sendrecv && op != CollOp::alltoall; }

// Whether NCCL's tuner weighs this algorithm/protocol pair at all for the operation, in any line.
bool exists(CollOp op, Algo algo, Proto proto) {
  if (!tuned(op) || algo == Algo::direct) return false;
  bool simple_only = algo == Algo::nvls || algo == Algo::nvls_tree || algo == Algo::collnet || algo == Algo::pat;
  return !(simple_only && proto != Proto::simple);
}

}  // namespace

int nodes_index(int nodes) { return nodes <= 2 ? std::max(nodes, 1) - 1 : 2; }

NcclEstimate nccl_estimate(const NcclVersion& version, const TunerTopology& topo, const TunerLimits& limits, CollOp op,
                           double bytes, Algo algo, Proto proto) {
  NcclEstimate e;
  e.algo = algo;
  e.proto = proto;
  const std::string a = to_string(algo), p = to_string(proto);
  auto offered = version.algorithms.find(to_string(op));
  if (!exists(op, algo, proto) || offered == version.algorithms.end() || !contains(offered->second, a)) {
    e.excluded = "-";
    return e;
  }
  const int n = topo.ranks, nodes = topo.nodes, ppn = n / std::max(nodes, 1);
  const std::string row = version.architecture_rows.at(topo.architecture);
  const int index = nodes_index(nodes);
  // NCCL's own exclusions, in the order ncclTopoTuneModel and the environment apply them.
  if (!contains(version.protocols, p)) e.excluded = "NCCL " + version.name + " has no " + p;
  else if (proto == Proto::ll128 &&
           !(contains(version.ll128_architectures, topo.architecture) && topo.nvlink_intra && (nodes == 1 || topo.gpu_direct)))
    e.excluded = "LL128 is off by default here (on only for " + [&] {
      std::string s;
      for (const auto& x : version.ll128_architectures) s += (s.empty() ? "" : "/") + x;
      return s;
    }() + " over NVLink)";
  else if (!limits.algos.empty() && std::find(limits.algos.begin(), limits.algos.end(), algo) == limits.algos.end())
    e.excluded = "not in NCCL_ALGO";
  else if (!limits.protos.empty() && std::find(limits.protos.begin(), limits.protos.end(), proto) == limits.protos.end())
    e.excluded = "not in NCCL_PROTO";
  else if (algo == Algo::collnet && !limits.collnet) e.excluded = "CollNet runs only with NCCL_COLLNET_ENABLE=1";
  else if ((algo == Algo::nvls || algo == Algo::nvls_tree) && !limits.nvls) e.excluded = "NCCL_NVLS_ENABLE=0";
  else if ((algo == Algo::nvls || algo == Algo::nvls_tree) && topo.nvls_Bps <= 0) e.excluded = "no NVLS on these GPUs";
  else if (algo == Algo::nvls && nodes > 1) e.excluded = "NVLS alone stays in one NVLink domain (NVLS-Tree spans servers)";
  else if (algo == Algo::nvls_tree && nodes < 2) e.excluded = "NVLS-Tree spans servers";
  else if (algo == Algo::pat && !(nodes > 1 && ppn == 1)) e.excluded = "PAT runs at one GPU per server";
  if (!e.excluded.empty()) return e;

  // Bandwidth: the graph's busBw, refined, then turned into algBw.
  const double total = nodes <= 2 || algo == Algo::collnet ? topo.ring_Bps : topo.inter_Bps;
  double bw = total;
  if (algo == Algo::nvls) bw = topo.nvls_Bps;
  if (algo == Algo::nvls_tree) bw = std::min(topo.nvls_Bps, nodes <= 2 ? topo.inter_Bps : topo.inter_Bps / 2);
  const double channels = topo.channels;
  const double ll_max = per_nodes(version.ll_max_Bps, row, index, HUGE_VAL);
  if (algo == Algo::ring && proto == Proto::ll)
    bw = std::min(ll_max, bw * (nodes > 1 || op == CollOp::allreduce || op == CollOp::reduce ? version.factor("ring_ll")
                                                                                             : version.factor("ring_ll_gather")));
  if (algo == Algo::ring && proto == Proto::ll128)
    bw = std::min(bw * (ppn < 2 ? version.factor("ring_ll128_one_rank_per_node") : version.factor("ring_ll128")),
                  channels * per_nodes(version.ring_ll128_channel_Bps, row, index, HUGE_VAL));
  if (algo == Algo::tree && op == CollOp::allreduce)
    bw = std::min(bw * version.factor("tree"), channels * per_nodes(version.tree_channel_Bps, row, index, HUGE_VAL));
  if (algo == Algo::tree && proto == Proto::ll) bw = std::min(bw * version.factor("tree_ll"), ll_max);
  if (algo == Algo::tree && proto == Proto::ll128)
    bw = std::min(bw * (nodes == 1 ? version.factor("tree_ll128_one_node") : version.factor("tree_ll128")),
                  channels * per_nodes(version.tree_ll128_channel_Bps, row, index, HUGE_VAL));
  int nsteps = op == CollOp::allreduce ? 2 * (n - 1)
               : op == CollOp::reducescatter || op == CollOp::allgather ? n - 1
                                                                        : n;
  const int allreduce_inter = version.ring_allreduce_inter_steps == "2*nodes" ? 2 * nodes : 2 * (nodes - 1);
  int inter_steps = op == CollOp::allreduce ? (nodes > 1 ? allreduce_inter : 0)
                    : op == CollOp::reducescatter || op == CollOp::allgather ? nodes - 1
                                                                             : nodes;
  if (algo == Algo::pat) bw *= version.factor("pat");
  // busBw to algBw. Which rule applies is data: NCCL 2.18 scales NVLS-Tree by f x nodes / (2 (nodes - 1)),
  // 2.28+ converts NVLS as it does rings (nvls_ring_algbw), the others by a constant. PAT
  // (2.26+) keeps its busBw: NCCL converts only rings for allgather and reduce-scatter.
  const bool nvls_any = algo == Algo::nvls || algo == Algo::nvls_tree;
  if (algo == Algo::ring) bw *= double(n) / nsteps;
  else if (algo == Algo::nvls_tree && version.factors.count("nvls_tree_algbw") && nodes > 1)
    bw *= version.factor("nvls_tree_algbw") * nodes / (2.0 * (nodes - 1));
  else if (nvls_any && version.factors.count("nvls_ring_algbw")) bw *= version.factor("nvls_ring_algbw") * double(n) / nsteps;
  else if (nvls_any) bw *= version.factor("nvls_algbw");
  else if (algo != Algo::pat) bw *= version.factor("tree_algbw");
  e.algbw_Bps = bw;

  // Latency: the base, then hardware latency per hop.
  const std::string intra_hw = topo.nvlink_intra ? "nvlink" : "pcie";
  const std::string hw = nodes == 1 ? intra_hw : "network";
  auto hw_lat = [&](const std::string& transport, const std::string& algo_name) {
    return table(version.hw_latency_s.at(transport), algo_name, p);
  };
  double intra = hw_lat(intra_hw, a), inter = hw_lat("network", a);
  if (version.net_latency_inter == "adds")
    inter += topo.net_latency_s * (proto == Proto::simple ? 2 : 1);
  else if (version.net_latency_inter == "replaces" && topo.net_latency_s > 0)
    inter = topo.net_latency_s;
  double latency = table(version.base_latency_s, a, p);
  if (algo == Algo::ring) {
    if (op == CollOp::broadcast || op == CollOp::reduce) {
      std::string hop = proto == Proto::simple && version.chain_simple_hop == "tree" ? "tree" : "ring";
      latency += nsteps * hw_lat(hw, hop);
    } else if (version.ring_step_latency == "hw") {
      latency += nsteps * hw_lat(hw, a);
    } else {
      // getNetOverhead, in us (NCCL 2.18+; 0 before)
      double overhead = nodes > 1 ? version.factor_or("net_overhead", 0) * 1e-6 * (proto == Proto::simple ? 3 : 1) : 0;
      latency += (nsteps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
    }
  } else if (algo == Algo::tree) {
    latency += 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
  } else if (algo == Algo::collnet) {
    latency += 2 * (ppn - 1) * intra + inter;
  } else if (algo == Algo::nvls) {
    // base + hop: 2.18 has the latency in base (23 us) and 0 for the NVLink hop, 2.21+ the reverse
    latency += intra + (nodes > 1 ? inter : 0);
  } else if (algo == Algo::nvls_tree) {
    latency += intra + 2 * log2i(nodes) * inter;
  } else if (algo == Algo::pat) {
    // base + log2(nodes) x inter / divisor + a per-rank term (us), NCCL 2.26+
    latency += log2i(nodes) * inter / version.factor_or("pat_inter_divisor", 1) +
               n * version.factor_or("pat_per_rank_latency_us", 0) * 1e-6;
  }
  e.latency_s = latency;

  // ncclTopoGetAlgoTime.
  double time_bw = bw;
  int log_size = log2i(bytes / 64);
  auto correction = version.tree_correction.find(p);
  if (algo == Algo::tree && log_size < 23 && correction != version.tree_correction.end() && correction->second.size() > 22)
    time_bw *= correction->second[static_cast<std::size_t>(log_size)];
  double time_latency = latency;
  auto plateau = version.ring_plateau.find(row);
  if (algo == Algo::ring && proto == Proto::simple && nodes > 1 && op == CollOp::allreduce &&
      bytes / (channels * n) >= 64 && plateau != version.ring_plateau.end())
    time_latency *= plateau->second;
  e.time_s = time_bw > 0 ? time_latency + bytes / time_bw : -1;
  if (e.time_s < 0) e.excluded = "no bandwidth";
  return e;
}

const NcclEstimate* nccl_choice(const std::vector<NcclEstimate>& estimates) {
  const NcclEstimate* best = nullptr;
  for (const NcclEstimate& e : estimates)
    if (e.excluded.empty() && e.time_s >= 0 && (best == nullptr || e.time_s < best->time_s)) best = &e;
  return best;
}

int nccl_channels(const NcclVersion& version, const TunerTopology& topo, Algo algo, Proto proto, double bytes) {
  if (algo == Algo::nvls || algo == Algo::nvls_tree) return version.nvls_channel_count(topo.architecture, topo.nodes);
  int nc = topo.channels;
  if (algo != Algo::ring && algo != Algo::tree) return nc;
  const std::string p = to_string(proto);
  double threads = version.max_threads.at(p);
  double threshold = version.thread_threshold.at(p) * (algo == Algo::ring && proto == Proto::ll ? topo.ranks : 1);
  while (bytes < nc * threads * threshold) {
    if (nc >= 2) --nc;
    else if (std::fmod(threads, 128) == 0) threads /= 2;
    else break;
  }
  return nc;
}

}  // namespace topsim
