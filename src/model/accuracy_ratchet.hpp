#pragma once
// The committed per-class accuracy of the simulation (tests/accuracy-ratchet.json): what
// `validate --cross --ratchet` holds every class to. Plain data.
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct RatchetEntry {
  std::string accuracy_class;
  int rows = 0;                ///< check rows with a cross-validated error
  double geomean_pct = 0;      ///< the guide's metric, geo-mean(1+|error|)-1, in percent
  double median_pct = 0;
  double worst_pct = 0;
  int nccl_rows = 0;           ///< rows NCCL's tuner estimates
  double nccl_geomean_pct = 0;  ///< NCCL's own estimate on those rows
  double simulated_on_nccl_rows_pct = 0;  ///< the simulation on the same rows
  SourceRef where;
};

struct AccuracyRatchet {
  std::vector<RatchetEntry> classes;
};

}  // namespace topsim
