#pragma once
// How busy each link was during one simulated run, in time bins: what a per-link utilisation
// heat map draws. Plain data, produced by the engine, written and read by io and report.
#include <string>
#include <vector>

namespace topsim {

/// Seconds a resource of `capacity_Bps` needs to carry `bytes_B` at full rate: its busy time.
/// `coll`'s bound (the busiest resource on the critical path) and --link-usage both use it, so
/// a bound's percentage is that link's mean_utilisation.
inline double resource_busy_s(double bytes_B, double capacity_Bps) { return capacity_Bps > 0 ? bytes_B / capacity_Bps : 0; }

/// One direction of one link resource (a topology link, or striped NVSwitch planes bundled as
/// one), as the engine shares it among flows.
struct LinkLoad {
  std::string link;                 ///< "gpu0 -nvlink3x12-> nvswitch0..5": endpoints, model, count, direction
  double capacity_Bps = 0;          ///< what the engine lets flows share on it (efficiency applied)
  double bytes_B = 0;               ///< bytes that crossed it during the run
  std::vector<double> utilisation;  ///< per bin: bytes in the bin / (capacity x bin length), in [0, 1]

  /// resource_busy_s of the bytes it carried.
  double busy_s() const { return resource_busy_s(bytes_B, capacity_Bps); }
  /// Over the whole run: the mean of the bins (all bins have one length), which is busy_s() over
  /// the run's duration_s (up to rounding).
  double mean_utilisation() const {
    double sum = 0;
    for (double u : utilisation) sum += u;
    return utilisation.empty() ? 0 : sum / static_cast<double>(utilisation.size());
  }
  /// Of the busiest bin.
  double peak_utilisation() const {
    double peak = 0;
    for (double u : utilisation) peak = u > peak ? u : peak;
    return peak;
  }
};

struct LinkUsage {
  std::string source;      ///< what ran, for titles ("trace x on dgx-a100")
  double duration_s = 0;   ///< the run: first op start to last op finish
  double bin_s = 0;        ///< duration_s / bins
  std::vector<LinkLoad> links;  ///< every link direction the run's routes cross, topology order
};

}  // namespace topsim
