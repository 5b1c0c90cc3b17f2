#include "model/validation_spec.hpp"

namespace topsim {

namespace {
constexpr double kLargeMessage_B = 64.0 * 1024 * 1024;  // the split: busbw from 64 MiB up, time below
}

std::string quantity_of(const ValidationRow& row, int servers) {
  if (row.kind == "p2p") return "p2p";
  if (row.kind == "training") return "training";
  if (row.kind == "kernel") return "kernel";
  if (row.kind == "llm") return "llm";
  if (row.kind == "inference") return !row.mig.empty() ? "mig" : row.sparse || row.metric == "speedup" ? "sparsity" : "inference";
  if (servers > 1 || row.scale.nodes > 1) return "multinode";
  return size_quantity(row.size_B);
}

const char* size_quantity(double size_B) { return size_B >= kLargeMessage_B ? "busbw>=64MiB" : "time<64MiB"; }

}  // namespace topsim
