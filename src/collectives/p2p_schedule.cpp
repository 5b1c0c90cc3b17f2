#include "collectives/p2p_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace topsim {

namespace {

int pow2_up(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

}  // namespace

P2pLayout p2p_layout(int comm_channels, int max_channels, int least_peer_channels, int ranks) {
  P2pLayout layout;
  const int channels = std::max(1, std::min(comm_channels, max_channels));
  // ncclTopoComputeP2pChannels: both counts are rounded up to powers of two, which the mapping
  // of peers to channels relies on; a peer never gets more than all of them.
  layout.channels = pow2_up(channels);
  layout.per_peer = std::min(pow2_up(std::max(1, std::min(channels, least_peer_channels))), layout.channels);
  // scheduleP2pTasksToPlan: one channel per operation while every rank has one in flight.
  layout.per_op_min = layout.per_peer;
  while (layout.per_op_min * ranks > layout.channels && layout.per_op_min > 1) layout.per_op_min /= 2;
  return layout;
}

int p2p_op_channels(const P2pLayout& layout, double bytes, double min_part_B, double max_part_B) {
  if (bytes <= 0) return 1;
  int n = static_cast<int>(std::min<double>(layout.per_op_min, std::ceil(bytes / min_part_B)));
  double part_B = std::max(min_part_B, std::ceil(bytes / n));
  while (part_B > max_part_B && n <= layout.per_peer / 2) {
    n *= 2;
    part_B = std::ceil(bytes / n);
  }
  return n;
}

}  // namespace topsim
