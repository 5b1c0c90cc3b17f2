#pragma once
// NCCL's own choice of algorithm, protocol and channels (src/graph/tuning.cc ncclTopoTuneModel
// and ncclTopoGetAlgoTime, src/enqueue.cc getAlgoInfo) for one release line, as data from
// models/nccl_versions.json applied to what topsim found of the topology. NCCL's estimate is
// only how NCCL chooses; the simulation then says how long the choice takes.
#include <string>
#include <vector>

#include "collectives/op.hpp"
#include "model/nccl_version.hpp"

namespace topsim {

/// What NCCL's tuner knows of a communicator: its graphs' bandwidths in NCCL's own per-link
/// figures (nChannels x bwIntra / bwInter), counts and transports.
struct TunerTopology {
  int ranks = 1;
  int nodes = 1;
  std::string architecture;    ///< of every rank (NCCL's minCompCap == maxCompCap case)
  bool nvlink_intra = true;    ///< the rings inside a server are all NVLink (typeIntra == LINK_NVL)
  bool gpu_direct = true;      ///< NICs reached without the host (typeInter <= PATH_PXB)
  double ring_Bps = 0;         ///< ring/tree graph busBw in one server, or with at most two servers
  double inter_Bps = 0;        ///< the same across more than two servers: NIC rails x NIC bandwidth
  double nvls_Bps = 0;         ///< NVLS graph busBw (0: no NVLS here)
  int channels = 1;            ///< comm->nChannels of the ring and tree graphs
  /// The latency the network plugin reports for the rail NICs (graphs->latencyInter), seconds:
  /// NCCL's own net_ib and net_socket report none (props->latency = 0, net_ib.cc:945 and
  /// net_socket.cc:120@v2.28.9-1); aws-ofi-nccl reports its platform's figure, the EFA NICs'
  /// message_latency (models/nics.json). 0 on one server.
  double net_latency_s = 0;
};

/// The limits NCCL's environment puts on the choice (NCCL_ALGO, NCCL_PROTO, NCCL_*_NCHANNELS,
/// NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE). Empty lists allow everything the line offers.
struct TunerLimits {
  std::vector<Algo> algos;
  std::vector<Proto> protos;
  int min_channels = 0;  ///< 0: none
  int max_channels = 0;  ///< 0: none
  bool nvls = true;
  bool collnet = false;
};

/// One candidate as NCCL weighs it.
struct NcclEstimate {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  double latency_s = 0;    ///< comm->latencies: base + hops x hardware latency
  double algbw_Bps = 0;    ///< comm->bandwidths after the refinements (0: disabled)
  double time_s = -1;      ///< ncclTopoGetAlgoTime; -1 when NCCL itself does not weigh it
  /// Why NCCL, or topsim (algorithms it cannot run here), leaves it out; "" if weighed. When
  /// topsim leaves out what NCCL weighs, time_s still says what NCCL would estimate.
  std::string excluded;
};

/// The refinement tables' index for a node count: one node, two, more.
int nodes_index(int nodes);

/// NCCL's estimate of every algorithm/protocol pair for `op` of `bytes` (nccl-tests' size: the
/// whole buffer), in NCCL's order (algorithms, then protocols). `runnable(algo)` says whether
/// topsim can run an algorithm here ("" if it can); NCCL's own exclusions come first.
template <typename Runnable>
std::vector<NcclEstimate> nccl_estimates(const NcclVersion& version, const TunerTopology& topo, const TunerLimits& limits,
                                         CollOp op, double bytes, Runnable runnable);

/// The estimate NCCL takes: the least time among those weighed; nullptr when none is.
const NcclEstimate* nccl_choice(const std::vector<NcclEstimate>& estimates);

/// getAlgoInfo's channel count: fewer channels while the bytes would not fill each channel's
/// threads to their threshold (rings, trees); NVLS runs its own channel count.
int nccl_channels(const NcclVersion& version, const TunerTopology& topo, Algo algo, Proto proto, double bytes);

/// One candidate's estimate (the body of nccl_estimates, without topsim's exclusions).
NcclEstimate nccl_estimate(const NcclVersion& version, const TunerTopology& topo, const TunerLimits& limits, CollOp op,
                           double bytes, Algo algo, Proto proto);

template <typename Runnable>
std::vector<NcclEstimate> nccl_estimates(const NcclVersion& version, const TunerTopology& topo, const TunerLimits& limits,
                                         CollOp op, double bytes, Runnable runnable) {
  std::vector<NcclEstimate> out;
  for (Algo algo : all_algos())
    for (Proto proto : all_protos()) {
      NcclEstimate e = nccl_estimate(version, topo, limits, op, bytes, algo, proto);
      if (e.excluded == "-") continue;  // not an algorithm of this operation in any NCCL
      if (e.excluded.empty()) {
        std::string why = runnable(algo);
        if (!why.empty()) e.excluded = why;  // NCCL's estimate stays, to show what NCCL would take
      }
      out.push_back(e);
    }
  return out;
}

}  // namespace topsim
