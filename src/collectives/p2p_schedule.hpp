#pragma once
// How NCCL spreads point-to-point operations (send/receive, and alltoall built from them) over
// its p2p channels: the channels of a communicator and per peer (ncclTopoComputeP2pChannels,
// NVIDIA/nccl src/graph/paths.cc) and the channels one operation runs on for its size
// (scheduleP2pTasksToPlan and addP2pToPlan, src/enqueue.cc). Pure arithmetic, no topology.

namespace topsim {

struct P2pLayout {
  int channels = 1;    ///< comm->p2pnChannels: every p2p channel, a power of two
  int per_peer = 1;    ///< comm->p2pnChannelsPerPeer: the most one operation runs on
  int per_op_min = 1;  ///< what one operation starts from: per_peer, halved until ranks x it fit the channels
};

/// `comm_channels`: the collectives' channels (comm->nChannels); `max_channels`: MAXCHANNELS
/// (NCCL_MAX_P2P_NCHANNELS' default); `least_peer_channels`: the fewest channels any pair of
/// ranks asks for (two per NVLink of its path, two per PCIe/SHM peer, per network peer two or
/// the NICs a GPU needs); `ranks`: the communicator's size. All at least 1.
P2pLayout p2p_layout(int comm_channels, int max_channels, int least_peer_channels, int ranks);

/// The channels one operation of `bytes` runs on: per_op_min, fewer while a part would be
/// under `min_part_B`, doubled while a part is over `max_part_B` and doubling stays within
/// per_peer. 1 for an empty operation.
int p2p_op_channels(const P2pLayout& layout, double bytes, double min_part_B, double max_part_B);

}  // namespace topsim
