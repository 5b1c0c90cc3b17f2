#include "collectives/fabric.hpp"

#include <algorithm>
#include <limits>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

Fabric::Fabric(const Topology& topology, std::vector<int> gpus, RouteOptions options)
    : topology_(topology), gpus_(std::move(gpus)), options_(options),
      routes_(std::make_shared<RouteTable>(topology, options)) {
  // Linear in the ranks and the cluster's NICs: a communicator of a 16,384-server cluster, and
  // each of the thousands of an LLM layout's, must not search its servers list per rank.
  std::vector<char> in_comm(static_cast<std::size_t>(topology_.node_count()), 0);
  for (int g : gpus_) {
    int node = topology_.node_of(g);
    char& seen = in_comm.at(static_cast<std::size_t>(node));
    if (!seen) nodes_.push_back(node);
    seen = 1;
  }
  // A rail is kept only where every server of the cluster (not only the communicator's) still
  // has that NIC: counted over the cluster's distinct NIC layouts, stored for the communicator's.
  std::vector<std::string> names;
  std::map<std::string, std::size_t, std::less<>> everywhere;  // NIC id within its server -> servers with it
  std::size_t servers_with_nics = 0;
  bool any_allowed = false;
  for (const auto& [ids, servers] : topology_.server_nic_ids()) {
    bool allowed_here = false;
    for (const std::string& id : ids)
      if (nic_allowed(options_.ib_hca, id)) everywhere[id] += static_cast<std::size_t>(servers), allowed_here = true;
    if (allowed_here) servers_with_nics += static_cast<std::size_t>(servers);
    any_allowed |= allowed_here;
  }
  if (!topology_.nics().empty())
    for (Vertex v : topology_.server_nics(topology_.device(topology_.nics().front()).node))
      names.emplace_back(topology_.nic_local_id(v));
  std::map<int, std::vector<std::string>> locals;  // the communicator's servers, beside nics_
  for (int node : nodes_)
    for (Vertex v : topology_.server_nics(node)) {
      std::string_view local = topology_.nic_local_id(v);
      if (!nic_allowed(options_.ib_hca, local)) continue;
      nics_[node].push_back(topology_.device(v).nic_index);
      locals[node].emplace_back(local);
    }
  keep_common_rails(locals, everywhere, servers_with_nics);
  if (!options_.ib_hca.empty() && !any_allowed)
    throw UsageError("NCCL_IB_HCA=" + options_.ib_hca + " matches none of the NICs (" + join(names, ", ") + ")");
}

void Fabric::keep_common_rails(const std::map<int, std::vector<std::string>>& locals,
                               const std::map<std::string, std::size_t, std::less<>>& everywhere, std::size_t servers) {
  // Rail i is NIC i of every server. When a NIC failed (a what-if) the servers no longer have the
  // same NICs: a rail is then kept only where every server still has that NIC, so a failed NIC
  // drops its rail everywhere and the others stay on their own leaves.
  bool same = std::all_of(everywhere.begin(), everywhere.end(), [&](const auto& e) { return e.second == servers; });
  if (same) return;
  for (auto& [node, ordinals] : nics_) {
    std::vector<int> kept;
    const std::vector<std::string>& ids = locals.at(node);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (everywhere.find(ids[i])->second == servers) kept.push_back(ordinals[i]);
    ordinals = std::move(kept);
  }
}

bool nic_allowed(const std::string& ib_hca, std::string_view nic) {
  if (ib_hca.empty()) return true;
  std::string list = ib_hca;
  bool exclude = list[0] == '^';
  if (exclude) list = list.substr(1);
  bool exact = !list.empty() && list[0] == '=';
  if (exact) list = list.substr(1);
  bool named = false;
  for (std::string entry : split(list, ',')) {
    entry = entry.substr(0, entry.find(':'));
    if (entry.empty()) continue;
    named |= exact ? nic == entry : nic.rfind(entry, 0) == 0;
  }
  return named != exclude;
}

int Fabric::nic(int node, int rail) const {
  auto it = nics_.find(node);
  if (it == nics_.end() || rail >= static_cast<int>(it->second.size()))
    throw UsageError("server " + std::to_string(node) + " of " + topology_.name() + " has no NIC " + std::to_string(rail));
  return it->second[static_cast<std::size_t>(rail)];
}

int Fabric::rails() const {
  int least = std::numeric_limits<int>::max();
  for (int node : nodes_) {
    auto it = nics_.find(node);
    least = std::min(least, it == nics_.end() ? 0 : static_cast<int>(it->second.size()));
  }
  return nodes_.empty() ? 0 : least;
}

std::size_t Fabric::arc_slot(long long key) const {
  auto x = static_cast<std::uint64_t>(key);  // splitmix64's finaliser: neighbouring ranks differ in low bits only
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  const std::size_t mask = arc_slots_.size() - 1;
  std::size_t at = static_cast<std::size_t>(x) & mask;
  while (arc_slots_[at].key >= 0 && arc_slots_[at].key != key) at = (at + 1) & mask;
  return at;
}

const Fabric::Arc& Fabric::arc(int from_rank, int to_rank, int rail) const {
  long long n = static_cast<long long>(gpus_.size());
  long long key = (static_cast<long long>(rail) + 1) * n * n + static_cast<long long>(from_rank) * n + to_rank;
  std::size_t at = arc_slot(key);
  if (arc_slots_[at].key == key) return arc_list_[arc_slots_[at].arc];
  int a = node_of_rank(from_rank), b = node_of_rank(to_rank);
  const RouteTable::Entry& route = rail >= 0 && a != b ? routes_->route(gpu(from_rank), gpu(to_rank), nic(a, rail), nic(b, rail))
                                                       : routes_->route(gpu(from_rank), gpu(to_rank));
  Arc arc;
  arc.kind = route.kind;
  arc.latency_s = route.latency_s;
  arc.bottleneck_Bps = route.bottleneck_Bps;
  boost::container::small_vector<std::pair<int, int>, 16> uses;
  for (const ResourceUse& u : route.uses) {
    ConstraintKey k = routes_->key(u);
    if (ids_.size() <= k) ids_.resize(k + 1, -1);
    int& id = ids_[k];
    if (id < 0) {
      id = static_cast<int>(capacity_.size());
      capacity_.push_back(routes_->resources()[u.resource].capacity_Bps);
      keys_.push_back(k);
    }
    auto use = std::find_if(uses.begin(), uses.end(), [&](const auto& used) { return used.first == id; });
    if (use == uses.end()) uses.emplace_back(id, 1);
    else ++use->second;
  }
  if (block_free_ < uses.size()) {
    // Blocks double from small: a layout has thousands of communicators with a few arcs each.
    std::size_t size = std::max(std::min(kUseBlock, kFirstUseBlock << use_blocks_.size()), uses.size());
    use_blocks_.push_back(std::make_unique<std::pair<int, int>[]>(size));
    next_use_ = use_blocks_.back().get();
    block_free_ = size;
  }
  arc.uses.first = next_use_;
  next_use_ = std::copy(uses.begin(), uses.end(), next_use_);
  arc.uses.last = next_use_;
  block_free_ -= uses.size();
  arc_list_.push_back(std::move(arc));
  arc_slots_[at] = ArcSlot{key, static_cast<std::uint32_t>(arc_list_.size() - 1)};
  if (2 * arc_list_.size() > arc_slots_.size()) {
    std::vector<ArcSlot> old = std::move(arc_slots_);
    arc_slots_.assign(old.size() * 2, ArcSlot{});
    for (const ArcSlot& slot : old)
      if (slot.key >= 0) arc_slots_[arc_slot(slot.key)] = slot;
  }
  return arc_list_.back();
}

double Fabric::nvlink_unit_Bps() const {
  const Device& d = topology_.device(topology_.gpu(gpus_.front()));
  if (d.gpu().nvlink_model.empty() || !d.nccl || !d.nccl->nvlink_efficiency) return 0;
  // The GPU's first NVLink in the file's order, found among its own edges (not the cluster's).
  const Vertex gpu = topology_.gpu(gpus_.front());
  const Link* first = nullptr;
  for (Edge e : boost::make_iterator_range(boost::out_edges(gpu, topology_.graph()))) {
    const Link& link = topology_.link(e);
    if (link.kind == LinkKind::nvlink && (!first || link.index < first->index)) first = &link;
  }
  return first ? first->bandwidth_Bps * *d.nccl->nvlink_efficiency : 0;
}

}  // namespace topsim
