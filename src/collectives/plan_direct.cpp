// Point-to-point operations as nccl-tests runs them: sendrecv (each rank to the next) and
// alltoall (every ordered pair), on NCCL's p2p channels (docs/nccl.md, "Point-to-point").
// Each pair is one flow capped at what its channels carry: the channels NCCL gives that
// operation at its size (p2p_schedule.hpp) times one channel's rate, shared with the rank's
// other operations when they outnumber the channels. Where the release line's split is not
// transcribed (2.12), each pair runs at its route's bandwidth, as before.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collectives/communicator.hpp"
#include "collectives/p2p_schedule.hpp"
#include "util/text.hpp"

namespace topsim {

bool Communicator::p2p_split_modelled() const {
  return version_.p2p_chunk_nvlink_B > 0 && version_.p2p_part_min_divisor[0] > 0;
}

int Communicator::p2p_peer_channels(int a, int b) const {
  // ncclTopoGetNchannels: two channels per NVLink of the pair's path, two for any other path
  // inside a server; across the network two, halved while ranks x them exceed four per p2p
  // channel, raised to the NICs a GPU needs (taken as its server's NICs per GPU).
  const int per = version_.p2p_channels_per_peer;
  const Fabric::Arc& arc = fabric_.arc(a, b);
  if (arc.kind == RouteKind::nvlink) {
    const double unit = fabric_.nvlink_unit_Bps();
    const int links = unit > 0 ? static_cast<int>(std::floor(arc.bottleneck_Bps / unit + 1e-9)) : 1;
    return per * std::max(1, links);
  }
  if (arc.kind != RouteKind::network) return per;
  const int channels = std::min(tuner_.channels, version_.max_channels);
  int net = per;
  while (net * ranks() > channels * 4 && net > 1) net /= 2;
  const int local = static_cast<int>(node_ranks_.front().size());
  const int nics = local > 0 ? (rails() + local - 1) / local : 1;
  return std::max(nics, net);
}

P2pLayout Communicator::p2p_layout_here() const {
  // Every pair's ask: the first server's ranks against every rank (servers are alike; this
  // bounds the work at 8 x ranks routes on communicators of thousands).
  const int n = ranks();
  int least = std::numeric_limits<int>::max();
  const int sources = std::min(n, network_ ? static_cast<int>(node_ranks_.front().size()) : 8);
  for (int i = 0; i < sources; ++i) {
    const int a = network_ ? node_ranks_.front()[static_cast<std::size_t>(i)] : i;
    for (int b = 0; b < n; ++b)
      if (a != b) least = std::min(least, p2p_peer_channels(a, b));
  }
  return p2p_layout(tuner_.channels, version_.max_channels, least, n);
}

double Communicator::p2p_op_bytes(CollOp op, CollSize size) const {
  return op == CollOp::alltoall ? size.size_B / ranks() : size.size_B;
}

double Communicator::p2p_step_B() const {
  // computeBuffSizes: one chunk size for the whole communicator.
  if (network_) return version_.p2p_chunk_net_B;
  bool nvlink = true;
  for (int b = 1; b < ranks() && nvlink; ++b) nvlink = fabric_.arc(0, b).kind == RouteKind::nvlink;
  return nvlink ? version_.p2p_chunk_nvlink_B : version_.p2p_chunk_B;
}

int Communicator::p2p_op_channels_here(const P2pLayout& layout, double bytes, bool ll) const {
  const int span = network_ ? 1 : 0;
  const double step = p2p_step_B();
  // LL splits by its own, smaller step (LL buffer / NCCL_STEPS, 64 KiB: 8 KiB parts); taken here
  // as one part per LL threshold (16 KiB), the per-channel size the threshold itself assumes.
  const double min_part = ll ? version_.p2p_ll_threshold_B : step / version_.p2p_part_min_divisor[span];
  return p2p_op_channels(layout, bytes, min_part, step * version_.p2p_part_max_steps[span]);
}

int Communicator::p2p_channels_for(const CollRequest& request, CollSize size) const {
  if (request.channels) return *request.channels;
  if (ranks() < 2 || !p2p_split_modelled()) return version_.p2p_channels_per_peer;
  return p2p_op_channels_here(p2p_layout_here(), p2p_op_bytes(request.op, size), false);
}

double Communicator::p2p_channel_Bps(int a, int b) const {
  // One channel's rate as NCCL's own model gives it: inside one NVLink domain with rings, the
  // rings' bandwidth (NCCL's bwIntra in topsim's NVLink figures) over the channels running them;
  // elsewhere the share of the pair's path NCCL sized the pair's channels to (two per NVLink,
  // two per NIC).
  // Rings off NVLink (over C2C or PCIe while the pair has NVLink) say nothing of the pair's channels.
  const Fabric::Arc& arc = fabric_.arc(a, b);
  const bool same_transport = (arc.kind == RouteKind::nvlink) == tuner_.nvlink_intra;
  if (!network_ && rings_.rings() > 0 && rings_.channels() > 0 && same_transport)
    return rings_.speed_Bps * rings_.rings() / rings_.channels();
  return arc.bottleneck_Bps / p2p_peer_channels(a, b);
}

void Communicator::add_direct(const CollRequest& request, CollSize size, const NcclProtocol& proto, Plan& plan) {
  const int n = ranks();
  std::vector<std::pair<int, int>> pairs;
  if (request.op == CollOp::alltoall) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) pairs.emplace_back(a, b);
  } else {
    for (int a = 0; a < n; ++a) pairs.emplace_back(a, (a + 1) % n);
  }
  const double payload = p2p_op_bytes(request.op, size);
  const bool split = p2p_split_modelled();
  P2pLayout layout;
  int op_channels = 0;
  double share = 1;
  if (split) {
    layout = p2p_layout_here();
    op_channels = request.channels.value_or(p2p_op_channels_here(layout, payload, proto.name == "ll"));
    // A rank runs one operation per peer (alltoall: every rank, itself included; sendrecv:
    // one): when they ask for more channels than exist, they share them.
    const int ops = request.op == CollOp::alltoall ? n : 1;
    share = std::min(1.0, static_cast<double>(layout.channels) / (static_cast<double>(ops) * op_channels));
  }
  double fill_s = 0;
  for (const auto& [a, b] : pairs) {
    Flow f;
    f.src = fabric_.gpu(a);
    f.dst = fabric_.gpu(b);
    f.payload_B = payload;
    f.arcs = {RankHop{a, b, -1}};
    if (!split) {
      f.composite = false;
      plan.flows.push_back(f);
      if (declaring_) needs_.pairs.emplace_back(f.src, f.dst);
      continue;
    }
    const double channel_Bps = p2p_channel_Bps(a, b);
    const double cap_Bps = op_channels * channel_Bps * share;
    // The first chunk of a part crosses the sender's copy before the receiver's starts: one
    // chunk at the channel's rate (addP2pToPlan: the network's chunk is cut to a quarter below
    // one step, to a half below eight).
    double chunk = p2p_step_B();
    if (fabric_.arc(a, b).kind == RouteKind::network) {
      if (payload < chunk) chunk /= 4;
      else if (payload < 8 * chunk) chunk /= 2;
    }
    // LL's receiver reads each 8-byte line as its flag lands: no chunk waits whole.
    const double part = std::ceil(payload / op_channels);
    if (proto.name == "simple") fill_s = std::max(fill_s, std::min(part, chunk) / (channel_Bps * share));
    f.index = composite("p2p:" + std::to_string(a) + ">" + std::to_string(b) + "@" + shortest(cap_Bps), f.arcs, cap_Bps);
    plan.flows.push_back(f);
  }
  plan.channels = split ? op_channels : request.channels.value_or(version_.p2p_channels_per_peer);
  plan.latency_s += fill_s;
}

Communicator::Plan Communicator::plan_direct(const CollRequest& request, CollSize size, const NcclProtocol& proto) {
  Plan plan;
  add_direct(request, size, proto, plan);
  // NCCL's launch and one step: the latency terms are the ring's (see docs/nccl.md); the
  // first chunk's extra stage (add_direct) comes on top.
  if (!network_) {
    std::vector<RankHop> used;
    for (const Flow& f : plan.flows) used.insert(used.end(), f.arcs.begin(), f.arcs.end());
    plan.latency_s += proto.ring_base_s + step_cost_s(proto, used);
  } else {
    plan.latency_s += proto.ring_base_s + net_step_s(proto);
  }
  return plan;
}

}  // namespace topsim
