#include "study/batch.hpp"

namespace topsim {

Batch::Batch(bool track_links) {
  if (track_links) simulator_.track_links();
}

PlatformRunner& Batch::add(const Topology& topology, const RouteOptions& routes, const PlatformNeeds& needs) {
  std::size_t platform = simulator_.add_platform(topology, routes, needs);
  runners_.push_back(std::make_unique<PlatformRunner>(simulator_, platform));
  return *runners_.back();
}

PlatformFactory Batch::platforms() {
  return [this](const Topology& topology, const RouteOptions& routes, const PlatformNeeds& needs) {
    return std::unique_ptr<Runner>(new PlatformRunner(simulator_, simulator_.add_platform(topology, routes, needs)));
  };
}

}  // namespace topsim
