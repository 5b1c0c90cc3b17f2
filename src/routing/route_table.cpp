#include "routing/route_table.hpp"

#include <algorithm>

namespace topsim {

namespace {

std::string hop_class(const Topology& t, const Hop& hop) {
  switch (hop.kind) {
    case Hop::Kind::link: return to_string(t.link(hop.links.front().link).kind);
    case Hop::Kind::crossbar: {
      DeviceType type = t.device(hop.devices.front()).type;
      if (type == DeviceType::network_switch) return "network";
      return type == DeviceType::pcie_switch ? "pcie" : to_string(type);
    }
    case Hop::Kind::host_memory: return "memory";
    case Hop::Kind::copy_engine: return "copy-engine";
    case Hop::Kind::staging: return "staging";
    case Hop::Kind::gpu_sm: return "gpu";
  }
  return "?";
}

}  // namespace

RouteTable::RouteTable(const Topology& topology, RouteOptions options)
    : topology_(topology), options_(std::move(options)), table_(topology, options_.mode), nearest_(topology),
      slots_(kFirstSlots) {
  segments_ = [this](Vertex gpu, Vertex nic, bool reverse, std::vector<Hop>& hops) { append_segment(gpu, nic, reverse, hops); };
}

bool RouteTable::inside(const Path& path, int node) const {
  for (const Hop& hop : path.hops) {
    for (const LinkUse& l : hop.links)
      if (!topology_.own_link(node, l.link)) return false;
    for (Vertex v : hop.devices)
      if (!topology_.in_server(node, v)) return false;
  }
  return true;
}

Hop RouteTable::shifted(const Hop& hop, const Topology::ServerImage& image) {
  Hop out;
  out.kind = hop.kind;
  for (const LinkUse& l : hop.links) {
    LinkUse moved = l;
    moved.link = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(l.link) + image.link_shift);
    out.links.push_back(moved);
  }
  for (Vertex v : hop.devices) out.devices.push_back(static_cast<Vertex>(static_cast<std::ptrdiff_t>(v) + image.vertex_shift));
  return out;
}

const RouteTable::Template* RouteTable::route_template(Vertex src, Vertex dst, int node) {
  const Topology::ServerImage* image = topology_.server_image(node);
  if (!options_.server_templates || image == nullptr) return nullptr;
  Vertex model_src = static_cast<Vertex>(static_cast<std::ptrdiff_t>(src) - image->vertex_shift);
  Vertex model_dst = static_cast<Vertex>(static_cast<std::ptrdiff_t>(dst) - image->vertex_shift);
  std::uint64_t key = (static_cast<std::uint64_t>(model_src) << 32) | static_cast<std::uint64_t>(model_dst);
  auto [it, fresh] = route_templates_.try_emplace(key);
  Template& t = it->second;
  if (fresh) {
    try {
      t.route = find_route(topology_, topology_.device(model_src).gpu_index, topology_.device(model_dst).gpu_index, options_,
                           &nearest_);
      t.usable = inside(t.route.path, image->model);
      t.latency_s = path_latency_s(topology_, t.route.path);
      t.bottleneck_Bps = path_bandwidth_Bps(topology_, t.route.path, options_.mode);
    } catch (const std::exception&) {
      t.usable = false;  // searched on the server itself, which names its own devices
    }
  }
  return t.usable ? &t : nullptr;
}

void RouteTable::append_segment(Vertex gpu, Vertex nic, bool reverse, std::vector<Hop>& hops) {
  const Topology::ServerImage* image = topology_.server_image(topology_.device(gpu).node);
  if (options_.server_templates && image != nullptr && topology_.device(nic).node == topology_.device(gpu).node) {
    Vertex model_gpu = static_cast<Vertex>(static_cast<std::ptrdiff_t>(gpu) - image->vertex_shift);
    Vertex model_nic = static_cast<Vertex>(static_cast<std::ptrdiff_t>(nic) - image->vertex_shift);
    std::uint64_t key = (static_cast<std::uint64_t>(model_gpu) << 33) | (static_cast<std::uint64_t>(model_nic) << 1) |
                        (reverse ? 1U : 0U);
    auto [it, fresh] = segment_templates_.try_emplace(key);
    Template& t = it->second;
    if (fresh) {
      try {
        gpu_nic_hops(topology_, model_gpu, model_nic, reverse, options_.gpu_direct, t.route.path.hops);
        t.usable = inside(t.route.path, image->model);
      } catch (const std::exception&) {
        t.usable = false;
      }
    }
    if (t.usable) {
      for (const Hop& hop : t.route.path.hops) hops.push_back(shifted(hop, *image));
      return;
    }
  }
  gpu_nic_hops(topology_, gpu, nic, reverse, options_.gpu_direct, hops);
}

bool RouteTable::serves(const Topology& topology, const RouteOptions& options) const {
  return &topology == &topology_ && options.peer_access == options_.peer_access && options.peer_reach == options_.peer_reach &&
         options.gpu_direct == options_.gpu_direct && options.mode == options_.mode && options.ib_hca == options_.ib_hca &&
         options.routing == options_.routing && options.seed == options_.seed && options.placement == options_.placement &&
         options.server_templates == options_.server_templates;
}

std::size_t RouteTable::hash(const Key& k) {
  // splitmix64's finaliser over the four ordinals: libstdc++ hashes integers to themselves, and
  // GPU and NIC ordinals of one server differ only in their low bits.
  auto mix = [](std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  std::uint64_t gpus = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) | static_cast<std::uint32_t>(k.dst);
  std::uint64_t nics = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src_nic)) << 32) | static_cast<std::uint32_t>(k.dst_nic);
  return static_cast<std::size_t>(mix(gpus ^ mix(nics)));
}

std::size_t RouteTable::slot_of(const Key& k) const {
  std::size_t mask = slots_.size() - 1;
  std::size_t at = hash(k) & mask;
  while (slots_[at].entry != kEmpty && !(slots_[at].key == k)) at = (at + 1) & mask;
  return at;
}

void RouteTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{});
  for (const Slot& s : old)
    if (s.entry != kEmpty) slots_[slot_of(s.key)] = s;
}

ConstraintKey RouteTable::key(const ResourceUse& use) const {
  bool split = table_.resources()[use.resource].sharing == Resource::Sharing::split_duplex;
  return static_cast<ConstraintKey>(use.resource * 2 + (split && !use.up ? 1 : 0));
}

void RouteTable::note_new_resources(const Hop& hop, const ResourceUse& use) {
  // A resource is declared by the hop that first uses it: this one.
  while (declaring_.size() < table_.resources().size()) {
    std::string cls = hop_class(topology_, hop);
    auto known = std::find(class_names_.begin(), class_names_.end(), cls);
    if (known == class_names_.end()) known = class_names_.insert(class_names_.end(), std::move(cls));
    class_of_.push_back(static_cast<std::uint8_t>(known - class_names_.begin()));
    Declaring d;
    d.kind = hop.kind;
    d.up = use.up;
    if (hop.kind == Hop::Kind::link) {
      d.first = static_cast<std::uint32_t>(declaring_links_.size());
      d.count = static_cast<std::uint32_t>(hop.links.size());
      declaring_links_.insert(declaring_links_.end(), hop.links.begin(), hop.links.end());
    } else {
      d.first = static_cast<std::uint32_t>(declaring_devices_.size());
      d.count = static_cast<std::uint32_t>(hop.devices.size());
      declaring_devices_.insert(declaring_devices_.end(), hop.devices.begin(), hop.devices.end());
    }
    declaring_.push_back(d);
  }
}

const std::string& RouteTable::name(ConstraintKey key) const {
  if (auto it = names_.find(key); it != names_.end()) return it->second;
  const Declaring& d = declaring_.at(resource_of(key));
  Hop hop;
  hop.kind = d.kind;
  if (d.kind == Hop::Kind::link) {
    hop.links.assign(declaring_links_.begin() + d.first, declaring_links_.begin() + d.first + d.count);
  } else {
    hop.devices.assign(declaring_devices_.begin() + d.first, declaring_devices_.begin() + d.first + d.count);
  }
  // Its UP direction is its lowest-indexed link forward; a shared resource has one name for
  // both keys.
  bool split = table_.resources()[resource_of(key)].sharing == Resource::Sharing::split_duplex;
  bool down = split && key % 2 == 1;
  if (split && d.up == down)
    for (LinkUse& l : hop.links) l.forward = !l.forward;
  return names_.emplace(key, describe(topology_, hop)).first->second;
}

const RouteTable::Entry& RouteTable::route(int src_gpu, int dst_gpu, int src_nic, int dst_nic) {
  Key k{src_gpu, dst_gpu, src_nic, dst_nic};
  std::size_t at = slot_of(k);
  if (slots_[at].entry != kEmpty) return entries_[slots_[at].entry];
  auto add_use = [this](Entry& e, const Hop& hop) {
    if (auto use = table_.use(hop)) {
      note_new_resources(hop, *use);
      e.uses.push_back(*use);
    }
  };
  const Template* whole = nullptr;
  int node = topology_.node_of(src_gpu);
  if ((src_nic < 0 || dst_nic < 0) && src_gpu != dst_gpu && node == topology_.node_of(dst_gpu))
    whole = route_template(topology_.gpu(src_gpu), topology_.gpu(dst_gpu), node);
  if (whole != nullptr) {
    const Topology::ServerImage& image = *topology_.server_image(node);
    Entry& e = entries_.emplace_back();
    e.kind = whole->route.kind;
    e.latency_s = whole->latency_s;
    e.bottleneck_Bps = whole->bottleneck_Bps;
    e.uses.reserve(whole->route.path.hops.size());
    for (const Hop& hop : whole->route.path.hops) add_use(e, shifted(hop, image));
  } else {
    Route route = src_nic >= 0 && dst_nic >= 0
                      ? find_route_via(topology_, src_gpu, src_nic, dst_nic, dst_gpu, options_, &segments_)
                      : find_route(topology_, src_gpu, dst_gpu, options_, &nearest_);
    Entry& e = entries_.emplace_back();
    e.kind = route.kind;
    e.latency_s = path_latency_s(topology_, route.path);
    e.bottleneck_Bps = path_bandwidth_Bps(topology_, route.path, options_.mode);
    e.uses.reserve(route.path.hops.size());
    for (const Hop& hop : route.path.hops) add_use(e, hop);
  }
  slots_[at] = Slot{k, static_cast<std::uint32_t>(entries_.size() - 1)};
  if (2 * entries_.size() > slots_.size()) grow();
  return entries_.back();
}

}  // namespace topsim
