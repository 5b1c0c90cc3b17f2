#pragma once
// A command's simulations: the one Simulator of the command, and the order SimGrid needs
// (declare what each platform must route, add every platform, then run). A command declares
// its platforms through add() (or platforms(), for a ScenarioRunner), then runs on the runners
// it got back; every add() precedes the first run.
#include <cstddef>
#include <memory>
#include <vector>

#include "engine/simulator.hpp"
#include "workload/scenario.hpp"

namespace topsim {

class Batch {
 public:
  /// `track_links`: record each link's load so that simulator().link_usage() can tell it.
  explicit Batch(bool track_links = false);
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Adds a platform routing what `needs` asks; the runner lives as long as the Batch.
  PlatformRunner& add(const Topology& topology, const RouteOptions& routes, const PlatformNeeds& needs = {});
  /// add() as a ScenarioRunner asks for it (the runner it returns is its own).
  PlatformFactory platforms();

  Simulator& simulator() { return simulator_; }
  const Simulator& simulator() const { return simulator_; }

 private:
  Simulator simulator_;
  std::vector<std::unique_ptr<PlatformRunner>> runners_;
};

}  // namespace topsim
