#include "engine/platform.hpp"

#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <algorithm>

namespace topsim {

void lend_models(sg4::NetZone* zone, const sg4::NetZone* lender) {
  auto* impl = zone->get_impl();
  const auto* from = lender->get_impl();
  impl->set_network_model(from->get_network_model());
  impl->set_cpu_pm_model(from->get_cpu_pm_model());
  impl->set_cpu_vm_model(from->get_cpu_vm_model());
  impl->set_disk_model(from->get_disk_model());
  impl->set_host_model(from->get_host_model());
}

void TimerPool::reserve(std::size_t count, const sg4::NetZone* lender) {
  if (hosts_.size() < count) {
    // At least doubling: every growth seals a zone, and a seal scans all the engine's hosts.
    count = std::max({count, 2 * hosts_.size(), kFirstTimers});
    sg4::NetZone* zone = sg4::create_empty_zone("topsim.timers" + std::to_string(zones_++));
    lend_models(zone, lender);
    std::size_t made = hosts_.size();
    for (std::size_t g = made; g < count; ++g) {
      hosts_.push_back(zone->create_host("topsim.timer" + std::to_string(g), kTimerFlopsPerSecond));
      hosts_.back()->set_core_count(kTimerCores);
    }
    zone->seal();
    for (std::size_t g = made; g < count; ++g) hosts_[g]->seal();
  }
}

sg4::NetZone* flow_zone(std::vector<sg4::NetZone*>& zones, std::size_t flow, const std::string& name,
                        const std::function<void(sg4::NetZone*)>& attach) {
  while (zones.size() <= flow / kFlowsPerZone) {
    zones.push_back(sg4::create_full_zone(name + std::to_string(zones.size())));
    attach(zones.back());
  }
  return zones[flow / kFlowsPerZone];
}

}  // namespace topsim
