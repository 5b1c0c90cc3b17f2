#include "routing/resources.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/error.hpp"

namespace topsim {

const char* to_string(Hop::Kind kind) {
  switch (kind) {
    case Hop::Kind::link: return "link";
    case Hop::Kind::crossbar: return "crossbar";
    case Hop::Kind::host_memory: return "host_memory";
    case Hop::Kind::copy_engine: return "copy_engine";
    case Hop::Kind::staging: return "staging";
    case Hop::Kind::gpu_sm: return "gpu_sm";
  }
  return "unknown";
}

std::size_t ResourceTable::declare(Resource resource) {
  resources_.push_back(std::move(resource));
  return resources_.size() - 1;
}

std::optional<ResourceUse> ResourceTable::use(const Hop& hop) {
  double latency_s = hop_latency_s(topology_, hop);
  auto checked = [&](std::size_t index, bool up) {
    // A resource's key fixes the hop's devices or links, and so its latency: a mismatch is a bug.
    if (resources_[index].latency_s != latency_s)
      throw std::logic_error("ResourceTable: hops of " + resources_[index].name + " differ in latency");
    return ResourceUse{index, up};
  };
  if (hop.kind == Hop::Kind::link) {
    std::vector<LinkUse> members = hop.links;
    std::sort(members.begin(), members.end(), [](const LinkUse& a, const LinkUse& b) { return a.link < b.link; });
    std::vector<std::size_t> key;
    for (const LinkUse& m : members) key.push_back(m.link);
    bool up = members.front().forward;
    // A link belongs to one bundle at most: its owner, if any, must be this very bundle.
    if (link_owner_.size() <= key.back()) link_owner_.resize(key.back() + 1, kNone);
    if (std::size_t owner = link_owner_[key.front()]; owner != kNone && resources_[owner].links == key)
      return checked(owner, up);
    for (std::size_t link : key)
      if (link_owner_[link] != kNone)
        throw InputError(topology_.file(), topology_.link(link).where.pointer,
                         "link " + std::to_string(link) + " is striped with different sets of NVSwitch planes on "
                                                          "different routes; wire the planes evenly");
    Resource r;
    r.name = "link";
    for (std::size_t link : key) r.name += "." + std::to_string(link);
    r.sharing = Resource::Sharing::split_duplex;
    r.kind = hop.kind;
    r.capacity_Bps = *hop_capacity_Bps(topology_, hop, mode_);
    r.latency_s = latency_s;
    r.links = key;
    std::size_t index = declare(std::move(r));
    for (std::size_t link : key) link_owner_[link] = index;
    return ResourceUse{index, up};
  }
  auto capacity = hop_capacity_Bps(topology_, hop, mode_);
  if (!capacity) {
    // Only links, crossbars and host memory have latency, and those always have a capacity.
    if (latency_s != 0) throw std::logic_error("ResourceTable: a hop without a capacity has a latency");
    return std::nullopt;
  }
  std::vector<Vertex> devices = hop.devices;
  std::sort(devices.begin(), devices.end());
  // Most shared resources are one device's (a switch core, a CPU's memory, a GPU's SMs): a
  // vector by device and kind finds them without building a map key.
  const std::size_t kinds = static_cast<std::size_t>(Hop::Kind::gpu_sm) + 1;
  std::size_t* single = nullptr;
  if (devices.size() == 1) {
    std::size_t slot = devices.front() * kinds + static_cast<std::size_t>(hop.kind);
    if (single_owner_.size() <= slot) single_owner_.resize(slot + 1, kNone);
    single = &single_owner_[slot];
    if (*single != kNone) return checked(*single, true);
  }
  auto key = std::make_pair(static_cast<int>(hop.kind), devices);
  if (single == nullptr)
    if (auto it = shared_.find(key); it != shared_.end()) return checked(it->second, true);
  Resource r;
  r.name = to_string(hop.kind);
  for (Vertex v : devices) r.name += "." + topology_.device(v).id;
  r.sharing = Resource::Sharing::shared;
  r.kind = hop.kind;
  r.capacity_Bps = *capacity;
  r.latency_s = latency_s;
  r.devices = devices;
  std::size_t index = declare(std::move(r));
  if (single != nullptr) *single = index;
  else shared_.emplace(key, index);
  return ResourceUse{index, true};
}

}  // namespace topsim
