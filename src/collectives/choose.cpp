// How a communicator turns a request into NCCL's choice: what NCCL's tuner knows of these GPUs
// (found once, like ncclTopoTuneModel at init), and per request the estimates, exclusions and
// channel counts of every candidate (getAlgoInfo).
#include <algorithm>
#include <limits>

#include "collectives/communicator.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

std::string Communicator::runnable(CollOp op, Algo algo) const {
  if (algo == Algo::pat) return "topsim has no PAT planner yet";
  return unavailable(op, algo);
}

void Communicator::find_tuner_topology() {
  const Topology& t = fabric_.topology();
  const NcclModel& model = nccl();
  TunerTopology& tt = tuner_;
  tt.ranks = ranks();
  tt.nodes = network_ ? static_cast<int>(fabric_.nodes().size()) : 1;
  tt.architecture = model.name;
  tt.gpu_direct = fabric_.options().gpu_direct;
  auto link_Bps = version_.nvlink_Bps.find(model.name);
  // NCCL's graph bandwidth in its own per-link NVLink figure: topsim's rings run at the NVLink
  // efficiency of models/nccl.json, NCCL's search at its topo.h constant.
  double nvlink_scale = link_Bps != version_.nvlink_Bps.end() && fabric_.nvlink_unit_Bps() > 0
                            ? link_Bps->second / fabric_.nvlink_unit_Bps()
                            : 1.0;
  if (ranks() < 2) return;
  if (!network_) {
    bool nvlink = !rings_.orders.empty();
    for (const auto& order : rings_.orders) nvlink &= all_nvlink(rank_order_hops(order, true));
    // NCCL's search says it directly: typeIntra, and nChannels x bwIntra in its own figures.
    if (rings_.nccl_search) nvlink = rings_.type_intra == "NVL" || rings_.type_intra == "NVB";
    tt.nvlink_intra = nvlink;
    tt.ring_Bps = rings_.nccl_search ? rings_.rings() * rings_.nccl_bw_intra_Bps
                                     : rings_.rings() * rings_.speed_Bps * (nvlink ? nvlink_scale : 1.0);
    tt.inter_Bps = tt.ring_Bps;
    tt.channels = std::max(1, std::min(rings_.channels(), version_.max_channels));
  } else {
    const std::vector<int>& local = node_ranks_.front();
    bool nvlink = true;
    for (const Rail& rail : rails_) {
      std::vector<int> chain;
      for (int position : rail.chain) chain.push_back(local[position]);
      nvlink &= all_nvlink(rank_order_hops(chain, false));
    }
    tt.nvlink_intra = nvlink;
    double nic_Bps = 0;
    for (const Rail& rail : rails_) {
      int entry = rail.chain.front();
      nic_Bps += fabric_.arc(local[entry], node_ranks_[1][entry], rail.nic).bottleneck_Bps;
    }
    tt.ring_Bps = tt.inter_Bps = nic_Bps;
    const NicModel& nic = t.device(t.nics().at(static_cast<std::size_t>(fabric_.nic(fabric_.nodes().front(), rails_.front().nic)))).nic();
    tt.net_latency_s = nic.transport == "efa" ? nic.message_latency_s : 0;
    tt.channels = std::max(1, std::min(2 * rails(), version_.max_channels));
  }
  // NVLS: every GPU's NVLinks into the NVSwitches, at NCCL's per-link figure.
  const Device& first = t.device(t.gpu(fabric_.gpu(0)));
  if (model.nvls_efficiency && first.gpu().nvlink_count > 0) {
    int a = 0, b = 1;
    if (network_) {
      a = node_ranks_.front().front();
      b = node_ranks_.front().size() > 1 ? node_ranks_.front()[1] : a;
    }
    bool switched = a != b && through_nvswitch(t, find_route(t, fabric_.gpu(a), fabric_.gpu(b), fabric_.options()));
    if (switched && link_Bps != version_.nvlink_Bps.end())
      tt.nvls_Bps = first.gpu().nvlink_count * link_Bps->second;
  }
}

Communicator::Choice Communicator::choose(const CollRequest& request, CollSize size) const {
  const NcclModel& model = nccl();
  Choice choice;
  TunerLimits limits = request.limits;
  if (request.algo) limits.algos = {*request.algo};
  if (request.proto) limits.protos = {*request.proto};
  if (request.algo == Algo::collnet) limits.collnet = true;
  auto modelled = [&](Proto p) { return model.protocol(to_string(p)) != nullptr; };
  auto clamp_channels = [&](int nc) {
    if (request.channels) return *request.channels;
    if (limits.max_channels > 0) nc = std::min(nc, limits.max_channels);
    if (limits.min_channels > 0) nc = std::max(nc, limits.min_channels);
    return nc;
  };
  if (request.op == CollOp::sendrecv || request.op == CollOp::alltoall || ranks() < 2) {
    // Not tuned: p2p operations run LL up to NCCL_P2P_LL_THRESHOLD, else Simple; one GPU copies.
    Candidate c;
    c.algo = request.op == CollOp::sendrecv || request.op == CollOp::alltoall ? Algo::direct : Algo::ring;
    const bool direct = c.algo == Algo::direct;
    double ll_bytes = size.size_B, ll_threshold_B = version_.p2p_ll_threshold_B;
    bool ll_buffers = true;
    int op_channels = version_.p2p_channels_per_peer;
    if (direct && ranks() >= 2 && p2p_split_modelled()) {
      // addP2pToPlan: the threshold holds per operation (a peer's share of an alltoall), times
      // the channels per peer (2.26-2.28) or the operation's own (2.30); connections over the
      // network carry no LL buffers unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1.
      const P2pLayout layout = p2p_layout_here();
      ll_bytes = p2p_op_bytes(request.op, size);
      const int ll_channels = p2p_op_channels_here(layout, ll_bytes, true);
      if (version_.p2p_ll_threshold_scale == "peer_channels") ll_threshold_B *= layout.per_peer;
      if (version_.p2p_ll_threshold_scale == "op_channels") ll_threshold_B *= ll_channels;
      ll_buffers = !network_ || version_.p2p_ll_over_network;
    }
    c.proto = request.proto ? *request.proto
              : ll_buffers && ll_bytes <= ll_threshold_B && modelled(Proto::ll) ? Proto::ll
                                                                                 : Proto::simple;
    if (direct && ranks() >= 2 && p2p_split_modelled())
      op_channels = p2p_op_channels_here(p2p_layout_here(), ll_bytes, c.proto == Proto::ll);
    if (request.algo && *request.algo != c.algo)
      throw UsageError("--algo " + std::string(to_string(*request.algo)) + ": " +
                       (ranks() < 2 ? std::string("one GPU runs no algorithm") : unavailable(request.op, *request.algo)));
    if (!modelled(c.proto))
      throw UsageError("--proto " + std::string(to_string(c.proto)) + ": models/ has no " + to_string(c.proto) +
                       " for " + model.name);
    c.nccl.algo = c.algo;
    c.nccl.proto = c.proto;
    c.channels = clamp_channels(direct ? op_channels : 1);
    choice.candidates.push_back(c);
    choice.chosen = 0;
    return choice;
  }
  std::vector<NcclEstimate> estimates = nccl_estimates(version_, tuner_, limits, request.op, size.size_B,
                                                       [&](Algo a) { return runnable(request.op, a); });
  double best = std::numeric_limits<double>::infinity();
  for (NcclEstimate& e : estimates) {
    if (e.excluded.empty() && !modelled(e.proto)) {
      e.excluded = "models/ has no " + std::string(to_string(e.proto)) + " for " + model.name;
    }
    Candidate c;
    c.algo = e.algo;
    c.proto = e.proto;
    c.nccl = e;
    c.channels = clamp_channels(nccl_channels(version_, tuner_, e.algo, e.proto, size.size_B));
    if (e.excluded.empty() && e.time_s < best) {
      best = e.time_s;
      choice.chosen = static_cast<int>(choice.candidates.size());
    }
    choice.candidates.push_back(c);
  }
  if (choice.chosen < 0) {
    std::vector<std::string> why;
    for (const Candidate& c : choice.candidates)
      if ((!request.algo || c.algo == *request.algo) && (!request.proto || c.proto == *request.proto))
        why.push_back(std::string(to_string(c.algo)) + "/" + to_string(c.proto) + ": " + c.nccl.excluded);
    std::string forced = request.algo ? "--algo " + std::string(to_string(*request.algo))
                         : request.proto ? "--proto " + std::string(to_string(*request.proto))
                                         : std::string(to_string(request.op));
    if (why.empty() && request.algo) why.push_back(unavailable(request.op, *request.algo));
    if (why.empty()) why.push_back("NCCL " + version_.name + " offers nothing allowed here");
    throw UsageError(forced + ": NCCL " + version_.name + " cannot run it here (" + join(why, "; ") + ")");
  }
  return choice;
}

}  // namespace topsim
