#pragma once
// Failures, degraded links and stragglers asked as a what-if (--fail, --degrade, --straggler).
// Plain data naming parts of a topology; src/topology/faults.hpp applies it to a TopologySpec.
#include <string>
#include <vector>

namespace topsim {

/// A link that keeps `fraction` of its bandwidth, 0 < fraction <= 1.
struct LinkDegrade {
  std::string link;  ///< "A-B" (its two end devices, either order) or "#N" (its index in the links array)
  double fraction = 1;
};

/// A GPU whose compute and NCCL kernels run `factor` times slower, factor >= 1.
struct Straggler {
  std::string gpu;  ///< device id ("gpu3", "n1.gpu3")
  double factor = 1;
};

struct Faults {
  std::vector<std::string> failed;  ///< device ids or link names ("A-B", "#N"), removed with their links
  std::vector<LinkDegrade> degraded;
  std::vector<Straggler> stragglers;

  bool any() const { return !failed.empty() || !degraded.empty() || !stragglers.empty(); }
};

}  // namespace topsim
