#pragma once
// A buying comparison: each GPU model on each training scenario (one GPU, in the comparison's
// server) and each inference request, with throughput per watt and per dollar.
#include <string>
#include <vector>

#include "model/buying_spec.hpp"
#include "study/costs.hpp"
#include "study/workspace.hpp"

namespace topsim {

struct BuyingRow {
  std::string workload;   ///< "train <scenario>" or the inference request's name
  std::string gpu;
  double throughput = 0;  ///< per second, in `unit`
  std::string unit;       ///< "images/s", "sequences/s", "samples/s", "tokens/s"
  bool fits = true;
  double vs_first = 0;    ///< throughput over the first GPU's on the same workload
  CostFigures cost;
};

/// Every workload on every GPU, workloads in the file's order (training first). `prices` are the
/// file's with the command line's on top. InputError at the file's entry that cannot run.
std::vector<BuyingRow> run_buying(const BuyingSpec& spec, const Workspace& workspace, const PriceTable& prices);

}  // namespace topsim
