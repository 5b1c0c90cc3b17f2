// NCCL's ring algorithm: allreduce, allgather and reduce-scatter around the rings (one server)
// or around each NIC rail's ring (across servers), and broadcast and reduce as chains along them.
// Short Simple chains run step by step (store and forward); everything else is one flow per ring.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "collectives/communicator.hpp"

namespace topsim {

namespace {

bool chain_op(CollOp op) { return op == CollOp::broadcast || op == CollOp::reduce; }

// Bytes every hop of a ring carries per byte of the operation (before splitting over rings).
double ring_bytes_per_B(CollOp op, int n) { return op == CollOp::allreduce ? 2.0 * (n - 1) / n : double(n - 1) / n; }

// Pipeline steps of a ring operation (NCCL's nsteps).
int ring_steps(CollOp op, int n) { return op == CollOp::allreduce ? 2 * (n - 1) : n - 1; }

}  // namespace

int Communicator::ring_subset(std::optional<int> channels, std::vector<int>& multiplicity) const {
  multiplicity = rings_.multiplicity;
  if (!channels) return rings_.channels();
  // Two channels per ring: fewer channels run fewer of the rings found.
  int keep = std::max(1, (*channels + 1) / 2);
  for (int& m : multiplicity) {
    m = std::min(m, keep);
    keep -= m;
  }
  return *channels;
}

std::vector<Communicator::RingShare> Communicator::ring_shares(const CollRequest& request, Plan& plan) const {
  std::vector<int> mult;
  plan.channels = ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  std::vector<RingShare> shares;
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0) continue;
    RingShare s;
    s.order = &rings_.orders[k];
    s.rings = mult[k];
    s.share = double(mult[k]) / rings;
    s.cap_Bps = rings_.speed_Bps * mult[k];
    s.tag = std::to_string(k) + "/" + std::to_string(mult[k]);
    shares.push_back(s);
  }
  return shares;
}

int Communicator::rail_count(const CollRequest& request, Plan& plan) const {
  int rails = static_cast<int>(rails_.size());
  if (request.channels) rails = std::clamp((*request.channels + 1) / 2, 1, rails);
  plan.channels = request.channels ? *request.channels : std::min(2 * rails, version_.max_channels);
  return rails;
}

double Communicator::intra_step_s(const NcclProtocol& proto) const {
  // Steps inside a server take NVLink's term, or PCIe's when the rail's chain leaves NVLink.
  if (!intra_nvlink_) {
    std::vector<RankHop> inside;
    for (const RankHop& h : rail_ring(0))
      if (h.rail < 0) inside.push_back(h);
    intra_nvlink_ = all_nvlink(inside);
  }
  return *intra_nvlink_ ? proto.nvlink_hop_s : proto.pcie_hop_s;
}

double Communicator::net_step_s(const NcclProtocol& proto) const {
  const Topology& t = fabric_.topology();
  const NicModel& nic =
      t.device(t.nics().at(static_cast<std::size_t>(fabric_.nic(fabric_.nodes().front(), rails_.front().nic)))).nic();
  double step = proto.network_hop_s + nic.message_latency_s;
  if (proto.name == "simple" && fabric_.options().gpu_direct) {
    // NCCL flushes GPUDirect receives on GPUs below a compute capability (x10) that depends on the
    // line (none: every GPU); the receiving proxy waits for the flush before the GPU may read.
    const std::string& cc = t.device(t.gpu(fabric_.gpu(0))).gpu().compute_capability;
    double cc10 = cc.empty() ? 0 : std::round(std::stod(cc) * 10);
    if (cc10 < version_.factor_or("net_flush_below_cc", std::numeric_limits<double>::infinity())) step += nic.flush_latency_s;
  }
  return step;
}

std::vector<int> Communicator::chain_from_root(const std::vector<int>& order, const CollRequest& request) const {
  int n = static_cast<int>(order.size());
  auto at = std::find(order.begin(), order.end(), request.root) - order.begin();
  std::vector<int> chain;
  for (int i = 0; i < n; ++i) chain.push_back(order[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
  return chain;
}

Communicator::Plan Communicator::plan_ring(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  const int n = ranks();
  const double S = size.size_B;
  const bool chain = chain_op(request.op);
  if (!network_) {
    std::vector<RankHop> used;
    for (const RingShare& r : ring_shares(request, plan)) {
      if (chain) {
        auto hops = rank_order_hops(chain_from_root(*r.order, request), false);
        // No cap at the ring's speed: the search gave each ring its share of links it crosses in
        // both directions, but a chain runs one way, so the reverse capacity is free (two GPUs
        // staged through host memory broadcast at twice the rate they all-reduce). The links'
        // sharing between chains still binds them. Each of the group's 2 x rings channels
        // streams its part in chunks.
        double channel_B = S * r.share / (2 * r.rings);
        add_flow(plan,
                 composite("chain/" + std::string(to_string(request.op)) + "/" + std::to_string(request.root) + "/" + r.tag,
                           hops, std::nullopt),
                 pipelined_B(S * r.share, channel_B, proto.chunk_B, n - 1), hops);
        used.insert(used.end(), hops.begin(), hops.end());
      } else {
        auto hops = rank_order_hops(*r.order, true);
        add_flow(plan, composite("ring/" + r.tag, hops, r.cap_Bps), ring_bytes_per_B(request.op, n) * S * r.share, hops);
        used.insert(used.end(), hops.begin(), hops.end());
      }
    }
    plan.latency_s = proto.ring_base_s + (chain ? n - 1 : ring_steps(request.op, n)) * step_cost_s(proto, used);
    return plan;
  }
  const int m = static_cast<int>(node_ranks_.size());
  const int rails = rail_count(request, plan);
  const std::string tag = "/" + std::to_string(rails) + "/";
  for (int r = 0; r < rails; ++r) {
    std::vector<RankHop> ring = rail_ring(r);
    if (chain) {
      auto at = std::find_if(ring.begin(), ring.end(), [&](const RankHop& h) { return h.from == request.root; }) - ring.begin();
      std::vector<RankHop> hops;
      for (int i = 0; i + 1 < n; ++i) hops.push_back(ring[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      add_flow(plan,
               composite("net-chain/" + std::string(to_string(request.op)) + "/" + std::to_string(request.root) + tag +
                             std::to_string(r),
                         hops, std::nullopt),
               pipelined_B(S / rails, S / (2.0 * rails), proto.chunk_B, n - 1), hops);
    } else {
      add_flow(plan, composite("net-ring" + tag + std::to_string(r), ring, std::nullopt),
               ring_bytes_per_B(request.op, n) * S / rails, ring);
    }
  }
  // A share m/n of the steps crosses the network, the rest stays inside servers.
  double steps = chain ? n - 1 : ring_steps(request.op, n);
  plan.latency_s =
      proto.ring_base_s + steps * ((double(m) / n) * net_step_s(proto) + (1 - double(m) / n) * intra_step_s(proto));
  return plan;
}

Schedule Communicator::step_schedule(const CollRequest& request, CollSize size, const NcclProtocol& proto,
                                     double latency_s) {
  // The reference: every step of every hop is a transfer that starts when its sender has sent
  // its previous step and received the step it forwards. Only the first pass through the steps
  // pays NCCL's per-step cost; later chunks stream behind it, as NCCL's buffering lets them.
  int n = ranks();
  double S = size.size_B;
  std::vector<int> mult;
  ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  bool chain = chain_op(request.op);
  int hops = chain ? n - 1 : n;
  int steps = ring_steps(request.op, n);
  double step_cost = (latency_s - proto.ring_base_s) / (chain ? n - 1 : steps);
  Schedule schedule;
  std::size_t start = schedule.delay(fabric_.gpu(0), proto.ring_base_s);
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0) continue;
    double share = double(mult[k]) / rings;
    std::vector<int> order = rings_.orders[k];
    if (chain) {
      order = chain_from_root(order, request);
      steps = static_cast<int>(std::max(1.0, std::ceil(S * share / (2 * mult[k]) / proto.chunk_B)));
    }
    double bytes = std::round((chain ? S * share / steps : S * share / n) / proto.efficiency);
    // previous[i]: the last transfer out of the i-th rank of the order (start for none yet).
    std::vector<std::size_t> previous(n, start);
    for (int s = 0; s < steps; ++s) {
      std::vector<std::size_t> sent = previous;
      for (int i = 0; i < hops; ++i) {
        std::vector<std::size_t> after = {previous[i]};
        if (chain ? i > 0 : true) after.push_back(chain ? sent[i - 1] : previous[(i - 1 + n) % n]);
        std::sort(after.begin(), after.end());
        after.erase(std::unique(after.begin(), after.end()), after.end());
        if (!chain || s == 0) after = {schedule.delay(fabric_.gpu(order[i]), step_cost, after)};
        sent[i] = schedule.transfer(fabric_.gpu(order[i]), fabric_.gpu(order[(i + 1) % n]), bytes, after, false);
      }
      previous = sent;
    }
  }
  return schedule;
}

bool Communicator::short_chain(const CollRequest& request, CollSize size, const NcclProtocol& proto) const {
  // A chain of few chunks is store-and-forward: one hop busy at a time. One flow over all hops
  // would have every hop contend at once, so such chains run step by step (cheap: few chunks).
  if (!chain_op(request.op)) return false;
  // Only Simple stores and forwards whole steps; LL and LL128 forward each line as it lands.
  if (proto.name != "simple") return false;
  if (ranks() > kMaxStepRanks || rings_.rings() == 0) return false;
  return size.size_B / (2.0 * rings_.rings()) <= kStepChunks * proto.chunk_B;
}

}  // namespace topsim
