#pragma once
// The --gpu what-if: another GPU model on the same board. The board (NVSwitches, NICs, PCIe,
// CPUs, the fabric) stays as written; only the GPUs change, and each uses as many of the
// board's NVLink ports as its model has.
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// What a swap did, for headers and notes. NVLink counts are per GPU, the largest over the
/// GPUs (every bundled board wires its GPUs alike).
struct GpuSwap {
  std::string gpu;            ///< the model put in
  std::string nvlink_model;   ///< the generation the board's GPU NVLinks use; "" when it has none
  int board_nvlinks = 0;      ///< NVLinks the board wires to one GPU
  int gpu_nvlinks = 0;        ///< NVLinks the model has
  int kept_nvlinks = 0;       ///< NVLinks one GPU keeps: min(board_nvlinks, gpu_nvlinks) for switch boards
  double kept_Bps = 0;        ///< one GPU's kept NVLinks, both directions (as datasheets quote it)
  double board_Bps = 0;       ///< the same for the board's NVLinks
  std::vector<std::string> notes;  ///< what was dropped or left unused, for the user (stderr)

  /// For headers after the board's name: "a800 (8 of 12 NVLinks)" when links were dropped,
  /// "h100 (8 NVLinks wired of its 18)" when the model has more than the board wires, else "a100-80gb".
  std::string text() const;
};

/// Spreads `keep` links over connections of `counts` parallel links: one link to each connection
/// in turn, in order, skipping those already at their count, until `keep` are placed or all are
/// full. 8 over {2,2,2,2,2,2} gives {2,2,1,1,1,1}.
std::vector<int> water_fill(const std::vector<int>& counts, int keep);

/// Replaces every GPU's model with `gpu_model` in `spec` (a server, or a cluster as expanded).
/// A GPU's NVLinks are trimmed to its model's count by water_fill over its NVLink connections in
/// file order; a GPU-GPU link keeps the smaller of its two ends' shares, and a link left with no
/// lane is removed, and so is an NVSwitch left with no link (a note names it). A model with more NVLinks than the board wires keeps the board's wiring (a
/// note says so); a board without NVLink takes any model, silently.
/// UsageError (naming --gpu, the board and the GPUs that fit it) for an unknown model, a model
/// whose NVLink generation is not the board's, or a model without NVLink on an NVLink board.
GpuSwap swap_gpu(TopologySpec& spec, const std::string& gpu_model, const Catalog& catalog);

}  // namespace topsim
