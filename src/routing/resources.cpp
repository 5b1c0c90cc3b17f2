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

std::size_t& ResourceTable::owner_of(std::size_t member_key) {
  if (member_key % kMemberStride != 0) return member_owner_.try_emplace(member_key, kNone).first->second;
  std::size_t link = member_key / kMemberStride;
  return link_owner_[link];
}

std::size_t& PagedOwners::operator[](std::size_t ordinal) {
  const std::size_t page = ordinal >> kPageBits;
  if (pages_.size() <= page) pages_.resize(page + 1);
  if (!pages_[page]) {
    pages_[page] = std::make_unique<std::array<std::size_t, std::size_t{1} << kPageBits>>();
    pages_[page]->fill(kNone);
  }
  return (*pages_[page])[ordinal & ((std::size_t{1} << kPageBits) - 1)];
}

std::size_t ResourceTable::declare(Resource resource) {
  resources_.push_back(std::move(resource));
  keys_.emplace_back();
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
  if (hop.kind == Hop::Kind::link && hop.links.size() == 1 && hop.links.front().member < 0) {
    // One whole link, already a resource of its own (most hops): no key to build.
    const LinkUse& only = hop.links.front();
    std::size_t owner = link_owner_[only.link];
    if (owner != kNone && keys_[owner].size() == 1) return checked(owner, only.forward);
  }
  if (hop.kind == Hop::Kind::link) {
    Hop::Links members = hop.links;
    std::sort(members.begin(), members.end(),
              [](const LinkUse& a, const LinkUse& b) { return std::make_pair(a.link, a.member) < std::make_pair(b.link, b.member); });
    // Key: link x kMemberStride + (member + 1), so that a whole link (member -1) keys as before
    // ordered by link, and each member of a bundle (ecmp, adaptive) is a resource of its own.
    boost::container::small_vector<std::size_t, 4> key;
    for (const LinkUse& m : members) {
      if (m.member + 1 >= static_cast<int>(kMemberStride)) throw std::logic_error("ResourceTable: member index too large");
      key.push_back(m.link * kMemberStride + static_cast<std::size_t>(m.member + 1));
    }
    bool up = members.front().forward;
    // A link (or a bundle's member) belongs to one bundle at most: its owner, if any, must be
    // this very bundle.
    if (std::size_t owner = owner_of(key.front()); owner != kNone && std::equal(keys_[owner].begin(), keys_[owner].end(), key.begin(), key.end()))
      return checked(owner, up);
    for (std::size_t member : key)
      if (owner_of(member) != kNone)
        throw InputError(topology_.file(), topology_.link(member / kMemberStride).where.pointer,
                         "link " + std::to_string(member / kMemberStride) +
                             " is striped with different sets of NVSwitch planes on "
                             "different routes; wire the planes evenly");
    Resource r;
    r.name = "link";
    for (const LinkUse& m : members) {
      r.name += "." + std::to_string(m.link);
      if (m.member >= 0) r.name += "#" + std::to_string(m.member);
      r.links.push_back(m.link);
    }
    r.sharing = Resource::Sharing::split_duplex;
    r.kind = hop.kind;
    r.capacity_Bps = *hop_capacity_Bps(topology_, hop, mode_);
    r.latency_s = latency_s;
    std::size_t index = declare(std::move(r));
    for (std::size_t member : key) owner_of(member) = index;
    keys_[index].assign(key.begin(), key.end());
    return ResourceUse{index, up};
  }
  auto capacity = hop_capacity_Bps(topology_, hop, mode_);
  if (!capacity) {
    // Only links, crossbars and host memory have latency, and those always have a capacity.
    if (latency_s != 0) throw std::logic_error("ResourceTable: a hop without a capacity has a latency");
    return std::nullopt;
  }
  Hop::Devices devices = hop.devices;
  std::sort(devices.begin(), devices.end());
  // Most shared resources are one device's (a switch core, a CPU's memory, a GPU's SMs): a
  // vector by device and kind finds them without building a map key.
  const std::size_t kinds = static_cast<std::size_t>(Hop::Kind::gpu_sm) + 1;
  std::size_t* single = nullptr;
  if (devices.size() == 1) {
    std::size_t slot = devices.front() * kinds + static_cast<std::size_t>(hop.kind);
    single = &single_owner_[slot];
    if (*single != kNone) return checked(*single, true);
  }
  auto key = std::make_pair(static_cast<int>(hop.kind), std::vector<Vertex>(devices.begin(), devices.end()));
  if (single == nullptr)
    if (auto it = shared_.find(key); it != shared_.end()) return checked(it->second, true);
  Resource r;
  r.name = to_string(hop.kind);
  for (Vertex v : devices) r.name += "." + topology_.device(v).id;
  r.sharing = Resource::Sharing::shared;
  r.kind = hop.kind;
  r.capacity_Bps = *capacity;
  r.latency_s = latency_s;
  r.devices = key.second;
  std::size_t index = declare(std::move(r));
  if (single != nullptr) *single = index;
  else shared_.emplace(key, index);
  return ResourceUse{index, true};
}

}  // namespace topsim
