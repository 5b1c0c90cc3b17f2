#include "collectives/communicator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "collectives/nccl_transport.hpp"
#include "model/link_usage.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

// Loads within this fraction of each other are one load: SimGrid's clock works to 1e-9 s and
// its solver's sums round at 1e-16 relative, so saturated resources differ by far less.
constexpr double kTiedLoad = 1e-9;
// Flows whose finishes differ by SimGrid's timing precision (1e-9 s) finish together.
constexpr double kSameFinish_s = 1e-9;
// A resource busy for this share of the time data moved is the bound; below it, nothing was
// saturated and the channels' rate caps (or the plan's shape) held the operation.
constexpr double kSaturated = 0.9;

// What the schedule puts on the wire for a flow's payload: the protocol's efficiency applied.
double wire_B(double payload_B, const NcclProtocol& proto) { return std::round(payload_B / proto.efficiency); }

std::vector<int> checked(const Topology& topology, std::vector<int> gpus) {
  if (gpus.empty()) throw UsageError("a communicator needs at least one GPU");
  std::set<int> seen;
  for (int g : gpus) {
    if (g < 0 || g >= topology.gpu_count())
      throw UsageError("GPU " + std::to_string(g) + " does not exist: " + topology.name() + " has " +
                       std::to_string(topology.gpu_count()) + " GPUs (0-" + std::to_string(topology.gpu_count() - 1) + ")");
    if (!seen.insert(g).second) throw UsageError("GPU " + std::to_string(g) + " is listed twice");
  }
  return gpus;
}

// NCCL's transports: P2P over PCIe up to its P2P level, SHM through host memory beyond
// (collectives/nccl_transport.hpp), both driven by the GPUs' SMs.
RouteOptions nccl_routes(RouteOptions options, const Topology& topology, const std::vector<int>& gpus,
                         const NcclVersion& version) {
  options.mode = TransferMode::sm;
  options.peer_reach = nccl_peer_reach(topology, gpus, version, options.peer_reach);
  return options;
}

// Which algorithms NCCL offers for an operation.
std::vector<Algo> algorithms_for(CollOp op) {
  switch (op) {
    case CollOp::allreduce: return {Algo::ring, Algo::tree, Algo::nvls, Algo::collnet, Algo::nvls_tree};
    case CollOp::allgather:
    case CollOp::reducescatter:
    case CollOp::broadcast:
    case CollOp::reduce: return {Algo::ring};
    case CollOp::alltoall:
    case CollOp::sendrecv: return {Algo::direct};
  }
  return {};
}

const std::shared_ptr<const NcclVersion>& non_null(const std::shared_ptr<const NcclVersion>& version) {
  if (!version) throw std::invalid_argument("Communicator: no NCCL version");
  return version;
}

}  // namespace

Communicator::Communicator(const Topology& topology, std::vector<int> gpus, const NcclVersion& version,
                           RouteOptions routes, NcclRingGraphCache* ring_graphs)
    : Communicator(topology, std::move(gpus), std::make_shared<const NcclVersion>(version), std::move(routes),
                   ring_graphs) {}

Communicator::Communicator(const Topology& topology, std::vector<int> gpus, std::shared_ptr<const NcclVersion> version,
                           RouteOptions routes, NcclRingGraphCache* ring_graphs)
    : fabric_(topology, checked(topology, gpus), nccl_routes(routes, topology, checked(topology, gpus), *non_null(version))),
      shared_version_(std::move(version)),
      version_(*non_null(shared_version_)) {
  // Servers joined only by a network run NCCL's hierarchical algorithms over NIC rails; GPUs
  // of one server, or of servers in one NVLink domain, run the single-domain ones.
  if (fabric_.nodes().size() > 1) {
    int a = 0;
    while (a < ranks() && fabric_.node_of_rank(a) == fabric_.node_of_rank(0)) ++a;
    network_ = fabric_.arc(0, a).kind == RouteKind::network;
  }
  if (network_) find_rails();
  else rings_ = search_rings_as_nccl(ring_graphs);
  find_tuner_topology();
}

RingSet Communicator::search_rings_as_nccl(NcclRingGraphCache* ring_graphs) {
  // NCCL's graph search sees one server (ncclTopoGetSystem), or under MNNVL the servers of one
  // NVLink domain fused into one system (this communicator spans no network, so its servers
  // are one domain). Communicators past what the search is written for keep topsim's: 32
  // ranks, or NCCL_TOPO_MAX_NODES where NVSwitches bound each step to two neighbours.
  bool one_server = true;
  for (int r = 0; r < ranks(); ++r) one_server &= fabric_.node_of_rank(r) == fabric_.node_of_rank(0);
  const int ranks_limit = nccl_search_rank_limit(fabric_.topology(), fabric_.gpus(), version_);
  if (ranks() < 2 || (!one_server && !version_.graph.mnnvl) || ranks() > ranks_limit || !version_.graph.searchable) {
    RingSet set = search_rings(fabric_);
    set.max_channels = version_.max_channels;
    return set;
  }
  NcclRingGraph graph =
      nccl_ring_graph(fabric_.topology(), fabric_.gpus(), version_, fabric_.options().peer_access, ring_graphs);
  RingSet set;
  set.nccl_search = true;
  set.nccl_bw_intra_Bps = graph.bw_intra_Bps;
  set.type_intra = to_string(graph.type_intra);
  set.max_channels = version_.max_channels;
  for (std::vector<int> order : graph.rings) {
    std::rotate(order.begin(), std::find(order.begin(), order.end(), 0), order.end());
    auto it = std::find(set.orders.begin(), set.orders.end(), order);
    if (it == set.orders.end()) {
      set.orders.push_back(order);
      set.multiplicity.push_back(1);
    } else {
      ++set.multiplicity[static_cast<std::size_t>(it - set.orders.begin())];
    }
  }
  // Each ring runs at NCCL's bwIntra, in topsim's figures: NCCL's per-link NVLink constant is
  // not topsim's calibrated NVLink rate, so NVLink rings are rescaled as the tuner's are.
  auto link_Bps = version_.nvlink_Bps.find(nccl().name);
  double unit = fabric_.nvlink_unit_Bps();
  bool nvlink = graph.type_intra <= PathType::nvb;
  double scale = nvlink && unit > 0 && link_Bps != version_.nvlink_Bps.end() ? link_Bps->second / unit : 1.0;
  set.speed_Bps = graph.bw_intra_Bps / scale;
  return set;
}

bool through_nvswitch(const Topology& topology, const Route& route) {
  for (const Hop& hop : route.path.hops)
    for (Vertex v : hop.devices)
      if (topology.device(v).type == DeviceType::nvswitch) return true;
  return false;
}

const NcclModel& Communicator::nccl() const {
  const Topology& t = fabric_.topology();
  const Device& d = t.device(t.gpu(fabric_.gpu(0)));
  if (!d.nccl)
    throw InputError(t.file(), d.where.pointer,
                     d.id + " (" + d.model_name + "): models/ has no NCCL model for architecture '" +
                         d.gpu().architecture + "'; add nccl_models." + d.gpu().architecture);
  for (int g : fabric_.gpus())
    if (t.device(t.gpu(g)).gpu().architecture != d.gpu().architecture)
      throw UsageError("the GPUs of one communicator must share an architecture; GPU" + std::to_string(g) + " is " +
                       t.device(t.gpu(g)).gpu().architecture + ", GPU" + std::to_string(fabric_.gpu(0)) + " is " +
                       d.gpu().architecture);
  return *d.nccl;
}

std::string Communicator::unavailable(CollOp op, Algo algo) const {
  auto offered = algorithms_for(op);
  if (std::find(offered.begin(), offered.end(), algo) == offered.end()) {
    std::vector<std::string> names;
    for (Algo a : offered) names.push_back(to_string(a));
    return std::string(to_string(op)) + " runs " + join(names, " or ") + ", not " + to_string(algo);
  }
  if (algo == Algo::nvls) {
    const NcclModel& model = nccl();
    if (!model.nvls_efficiency) return "NVLS needs Hopper-class NVSwitches; NCCL offers none on " + model.name;
    if (ranks() < 2) return "NVLS needs at least two GPUs";
    const Topology& t = fabric_.topology();
    for (int r = 0; r < ranks(); ++r)
      if (!through_nvswitch(t, find_route(t, fabric_.gpu(r), fabric_.gpu((r + 1) % ranks()), fabric_.options())))
        return "NVLS needs every GPU behind the same NVSwitches";
  }
  if (algo == Algo::nvls_tree) {
    if (!network_) return "NVLS-Tree spans servers joined by a network";
    if (!nccl().nvls_efficiency) return "NVLS-Tree needs Hopper-class NVSwitches; NCCL offers none on " + nccl().name;
    if (tuner_.nvls_Bps <= 0) return "NVLS-Tree needs the GPUs of each server behind the same NVSwitches";
  }
  if (algo == Algo::collnet) {
    if (!network_) return "CollNet reduces in the network switches; these GPUs do not span a network";
    const Topology& t = fabric_.topology();
    for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph()))) {
      const Device& d = t.device(v);
      if (d.type == DeviceType::network_switch && !d.switch_model().sharp)
        return "CollNet needs SHARP in every network switch; " + d.id + " (" + d.model_name + ") has none";
    }
  }
  if ((algo == Algo::ring || algo == Algo::tree) && ranks() > 1 && !network_ && rings_.rings() == 0)
    return "no ring could be built over these GPUs";
  return "";
}

std::vector<RankHop> Communicator::rank_order_hops(const std::vector<int>& order, bool closed) const {
  std::vector<RankHop> hops;
  int n = static_cast<int>(order.size());
  for (int i = 0; i + 1 < n + (closed ? 1 : 0); ++i) hops.push_back(RankHop{order[i], order[(i + 1) % n], -1});
  return hops;
}

std::size_t Communicator::composite(const std::string& key, const std::vector<RankHop>& hops,
                                    std::optional<double> cap) {
  auto it = composite_ids_.find(key);
  if (it != composite_ids_.end()) return it->second;
  if (!declaring_) throw std::logic_error("Communicator: composite '" + key + "' was not declared by needs()");
  Composite c;
  for (const RankHop& h : hops) {
    CompositeHop hop;
    hop.src = fabric_.gpu(h.from);
    hop.dst = fabric_.gpu(h.to);
    int a = fabric_.node_of_rank(h.from), b = fabric_.node_of_rank(h.to);
    if (h.rail >= 0 && a != b) {
      hop.src_nic = fabric_.nic(a, h.rail);
      hop.dst_nic = fabric_.nic(b, h.rail);
    }
    c.hops.push_back(hop);
  }
  c.cap_Bps = straggler_cap(hops, cap);
  needs_.composites.push_back(std::move(c));
  std::size_t id = needs_.composites.size() - 1;
  composite_ids_[key] = id;
  return id;
}

std::optional<double> Communicator::straggler_cap(const std::vector<RankHop>& hops, std::optional<double> cap) const {
  // A pipelined flow moves at its slowest kernel's pace: a straggler's SMs push `slowdown` times
  // fewer bytes per second through every channel it runs, so the whole flow is capped at what it
  // would carry alone (its cap, else its narrowest hop) divided by the slowest GPU's slowdown.
  const Topology& t = fabric_.topology();
  double slowdown = 1;
  for (const RankHop& h : hops)
    for (int rank : {h.from, h.to}) slowdown = std::max(slowdown, t.device(t.gpu(fabric_.gpu(rank))).slowdown);
  if (slowdown == 1) return cap;
  double alone_Bps = cap.value_or(std::numeric_limits<double>::infinity());
  for (const RankHop& h : hops) alone_Bps = std::min(alone_Bps, fabric_.arc(h.from, h.to, h.rail).bottleneck_Bps);
  return alone_Bps / slowdown;
}

bool Communicator::all_nvlink(const std::vector<RankHop>& arcs) const {
  return std::all_of(arcs.begin(), arcs.end(),
                     [&](const RankHop& a) { return fabric_.arc(a.from, a.to, a.rail).kind == RouteKind::nvlink; });
}

double Communicator::step_cost_s(const NcclProtocol& proto, const std::vector<RankHop>& arcs) const {
  // NCCL charges a step by its slowest transport: NVLink, else PCIe/host.
  return all_nvlink(arcs) ? proto.nvlink_hop_s : proto.pcie_hop_s;
}

Communicator::Plan Communicator::plan(const CollRequest& request, CollSize size, Algo algo, const NcclProtocol& proto) {
  if (ranks() < 2) {  // one GPU: a local copy, NCCL's base cost only
    Plan plan;
    plan.latency_s = proto.ring_base_s;
    return plan;
  }
  switch (algo) {
    case Algo::ring: return plan_ring(request, size, proto);
    case Algo::tree: return plan_tree(request, size, proto);
    case Algo::nvls: return plan_nvls(request, size, proto);
    case Algo::nvls_tree: return plan_nvls_tree(request, size, proto);
    case Algo::collnet: return plan_collnet(request, size, proto);
    case Algo::direct: return plan_direct(request, size, proto);
    case Algo::pat: break;
  }
  throw std::logic_error(std::string("Communicator: no planner for ") + to_string(algo));
}

CollRequest Communicator::planned(const CollRequest& request, const Candidate& candidate) {
  CollRequest r = request;
  if (candidate.algo != Algo::direct) r.channels = candidate.channels;
  return r;
}

void Communicator::add_flow(Plan& plan, std::size_t composite_index, double payload_B, std::vector<RankHop> arcs) const {
  Flow f;
  f.index = composite_index;
  f.payload_B = payload_B;
  f.arcs = std::move(arcs);
  plan.flows.push_back(std::move(f));
}

PlatformNeeds Communicator::needs(const std::vector<CollRequest>& requests) {
  declaring_ = true;
  needs_ = PlatformNeeds{};
  needs_.all_pairs = false;
  needs_.routes = fabric_.route_table();
  const NcclModel& model = nccl();
  for (const CollRequest& request : requests) {
    CollSize size = nccl_tests_size(request.op, request.size_B, request.dtype, ranks());
    Choice choice = choose(request, size);
    for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
      if (!choice.simulates(i, request.simulate_all)) continue;
      const Candidate& c = choice.candidates[i];
      plan(planned(request, c), size, c.algo, *model.protocol(to_string(c.proto)));
    }
    bool chain = request.op == CollOp::broadcast || request.op == CollOp::reduce;
    if (request.model == CollModel::steps && network_)
      throw UsageError("the per-step model runs within one server or NVLink domain; these GPUs span a network");
    if ((request.model == CollModel::steps || chain) && !network_ && ranks() > 1 && ranks() <= kMaxStepRanks)
      for (const auto& order : rings_.orders)
        for (const RankHop& h : rank_order_hops(order, true)) {
          needs_.pairs.emplace_back(fabric_.gpu(h.from), fabric_.gpu(h.to));
          needs_.pairs.emplace_back(fabric_.gpu(h.to), fabric_.gpu(h.from));
        }
  }
  std::sort(needs_.pairs.begin(), needs_.pairs.end());
  needs_.pairs.erase(std::unique(needs_.pairs.begin(), needs_.pairs.end()), needs_.pairs.end());
  declaring_ = false;
  return needs_;
}

void Communicator::bound_of(const Plan& plan, const std::vector<OpTiming>& timings, const NcclProtocol& proto,
                            double time_s, CollResult& result) {
  if (plan.flows.empty() || plan.latency_s >= time_s / 2) {
    result.bound = result.bound_class = "latency";
    return;
  }
  // Busy time of a resource: the wire bytes every flow put on it (as scheduled, protocol
  // efficiency applied) over its capacity, a flow counted as often as its route crosses it;
  // --link-usage's bytes_B over capacity_GBps by construction (resource_busy_s). Route every hop
  // first (routing may add resources), keeping each arc: a ring of 131,072 ranks has millions of
  // hops, and the arcs' map is looked up once per hop, not twice. Arcs live in an unordered_map,
  // whose elements stay put as it grows.
  std::vector<const Fabric::Arc*> arcs;
  for (const Flow& f : plan.flows)
    for (const RankHop& h : f.arcs) arcs.push_back(&fabric_.arc(h.from, h.to, h.rail));
  // The critical path: the start delay, then the flows that finish last (every flow waits on the
  // delay alone). Only resources those flows cross can have held the operation up at its end.
  double last_s = 0;
  for (std::size_t i = 0; i < plan.flows.size(); ++i) last_s = std::max(last_s, timings[i + 1].finish_s);
  std::vector<double> carried_B(fabric_.resources(), 0.0);
  std::vector<bool> on_path(fabric_.resources(), false);
  std::size_t next_arc = 0;
  for (std::size_t i = 0; i < plan.flows.size(); ++i) {
    const double wire = wire_B(plan.flows[i].payload_B, proto);
    const bool last = last_s - timings[i + 1].finish_s <= kSameFinish_s + kTiedLoad * last_s;
    for (std::size_t k = 0; k < plan.flows[i].arcs.size(); ++k)
      for (const auto& [resource, times] : arcs[next_arc + k]->uses) {
        carried_B[resource] += wire * times;
        if (last) on_path[resource] = true;
      }
    next_arc += plan.flows[i].arcs.size();
  }
  // Of resources equally busy (saturated ones, typically), the first in resource order: their
  // busy times differ only by rounding, which must not pick the name.
  std::vector<double> busy_s(fabric_.resources(), 0.0);
  double most_s = 0;
  for (int r = 0; r < fabric_.resources(); ++r) {
    busy_s[r] = resource_busy_s(carried_B[r], fabric_.capacity_Bps(r));
    if (on_path[r]) most_s = std::max(most_s, busy_s[r]);
  }
  int busiest = 0;
  while (busiest + 1 < fabric_.resources() && !(on_path[busiest] && busy_s[busiest] >= most_s * (1 - kTiedLoad))) ++busiest;
  // Printed: busy over the whole operation, --link-usage's mean_utilisation. Classed: busy over
  // the time data could move (after the start delay), so a resource saturated from the first byte
  // to the last is the bound whatever share of the time the fixed latency took.
  const double use = busy_s[busiest] / time_s;
  const double moving_s = time_s - plan.latency_s;
  if (busy_s[busiest] < kSaturated * moving_s) {
    result.bound = "channels (" + fixed(100 * use, 0) + "% of " + fabric_.resource_name(busiest) + ")";
    result.bound_class = "channels";
    return;
  }
  result.bound = fabric_.resource_name(busiest) + " (" + fixed(100 * std::min(use, 1.0), 0) + "%)";
  result.bound_class = fabric_.resource_class(busiest);
}

CollResult Communicator::run(const CollRequest& request, Runner& runner) {
  const NcclModel& model = nccl();
  CollResult result;
  result.op = request.op;
  result.dtype = request.dtype;
  result.size = nccl_tests_size(request.op, request.size_B, request.dtype, ranks());
  result.root = is_rooted(request.op) ? request.root : -1;
  result.nccl_version = version_.name;
  if (is_rooted(request.op) && (request.root < 0 || request.root >= ranks()))
    throw UsageError("root " + std::to_string(request.root) + " is not a rank of this communicator (0-" +
                     std::to_string(ranks() - 1) + ")");
  if (request.gpus_per_thread < 1 || request.gpus_per_thread > ranks())
    throw UsageError("GPUs per thread (nccl-tests -g) must be 1-" + std::to_string(ranks()) + ", the communicator's GPUs; got " +
                     std::to_string(request.gpus_per_thread));
  Choice choice = choose(request, result.size);
  for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
    if (!choice.simulates(i, request.simulate_all)) continue;
    Candidate& c = choice.candidates[i];
    bool chosen = static_cast<int>(i) == choice.chosen;
    const NcclProtocol& proto = *model.protocol(to_string(c.proto));
    CollRequest r = planned(request, c);
    Plan p = plan(r, result.size, c.algo, proto);
    Schedule schedule;
    bool steps = c.algo == Algo::ring && ranks() > 1 && !network_ &&
                 (request.model == CollModel::steps || short_chain(r, result.size, proto));
    if (steps) {
      schedule = step_schedule(r, result.size, proto, p.latency_s);
    } else {
      std::size_t start = schedule.delay(fabric_.gpu(0), p.latency_s);
      for (const Flow& f : p.flows) {
        double wire = wire_B(f.payload_B, proto);
        if (f.composite) schedule.composite(f.index, wire, {start});
        else schedule.transfer(f.src, f.dst, wire, {start}, false);
      }
    }
    auto timings = runner.run(schedule);
    double time = 0;
    for (const OpTiming& t : timings) time = std::max(time, t.finish_s);
    c.latency_s = p.latency_s;
    c.time_s = time;
    if (!chosen) continue;
    result.algo = c.algo;
    result.proto = c.proto;
    result.channels = c.algo == Algo::direct ? c.channels : p.channels;
    result.time_s = time;
    if (steps) result.bound = result.bound_class = "per-step model";
    else bound_of(p, timings, proto, time, result);
    host_bound(request, model, result);
  }
  result.candidates = std::move(choice.candidates);
  result.algbw_Bps = result.time_s > 0 ? result.size.size_B / result.time_s : 0;
  result.busbw_Bps = result.algbw_Bps * busbw_factor(request.op, ranks());
#ifdef TOPSIM_INVARIANTS
  if (result.busbw_Bps > busbw_bound_Bps(result.algo) * (1 + 1e-9))
    throw std::logic_error("Communicator: invariant violated: busbw " + std::to_string(result.busbw_Bps) +
                           " B/s above the topology's bound " + std::to_string(busbw_bound_Bps(result.algo)) + " B/s");
#endif
  return result;
}

void Communicator::host_bound(const CollRequest& request, const NcclModel& model, CollResult& result) const {
  // nccl-tests times a loop of iterations launched back to back: while the GPUs run one, the
  // host enqueues the next, so an iteration takes the longer of the kernels' time and the time
  // one thread needs to launch its GPUs' kernels in turn (src/common.cu@a0b82b2260cf, NVIDIA/
  // nccl-tests; ncclGroupEnd launches each communicator's kernel in turn, src/group.cc).
  const double host_s = request.gpus_per_thread * model.host_launch_s;
  if (host_s <= result.time_s) return;
  result.time_s = host_s;
  result.bound = "host launch (" + std::to_string(request.gpus_per_thread) + " GPUs per thread x " +
                 fixed(model.host_launch_s / kUs, 1) + " us)";
  result.bound_class = "host";
}

double Communicator::busbw_bound_Bps(Algo algo) const {
  const Topology& t = fabric_.topology();
  double least = std::numeric_limits<double>::infinity();
  for (int r = 0; r < ranks(); ++r) {
    double egress = 0;
    for (auto [e, end] = boost::out_edges(t.gpu(fabric_.gpu(r)), t.graph()); e != end; ++e) egress += t.link(*e).line_rate_Bps();
    least = std::min(least, egress);
  }
  return algo == Algo::nvls || algo == Algo::nvls_tree || algo == Algo::collnet ? 2 * least : least;
}

namespace {

// "25", "31.508", "50": GB/s to the MB/s, without trailing zeros (shortest() prints 5e+01).
std::string trimmed_GBps(double Bps) {
  std::string text = fixed(Bps / 1e9, 3);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

Communicator::BusbwCeiling Communicator::busbw_ceiling(CollOp op) const {
  const Topology& t = fabric_.topology();
  bool nvlink_only = !network_ && ranks() > 1;
  for (int a = 0; a < ranks() && nvlink_only; ++a)
    for (int b = 0; b < ranks() && nvlink_only; ++b)
      if (a != b) nvlink_only = find_route(t, fabric_.gpu(a), fabric_.gpu(b), fabric_.options()).kind == RouteKind::nvlink;
  BusbwCeiling ceiling;
  ceiling.Bps = std::numeric_limits<double>::infinity();
  for (int r = 0; r < ranks(); ++r) {
    double egress = 0;
    std::map<std::pair<std::string, double>, int> counted;  // (model, one link's rate) -> links
    for (auto [e, end] = boost::out_edges(t.gpu(fabric_.gpu(r)), t.graph()); e != end; ++e) {
      const Link& link = t.link(*e);
      if (nvlink_only && link.kind != LinkKind::nvlink) continue;
      egress += link.line_rate_Bps();
      counted[{link.model_name, link.bandwidth_Bps}] += link.count;
    }
    if (egress >= ceiling.Bps) continue;
    ceiling.Bps = egress;
    ceiling.gpu = fabric_.gpu(r);
    std::vector<std::string> parts;
    for (const auto& [model, n] : counted)
      parts.push_back(std::to_string(n) + " x " + model.first + " at " + trimmed_GBps(model.second) + " GB/s");
    ceiling.links = join(parts, " + ");
  }
  std::vector<std::string> doubling;
  for (Algo algo : algorithms_for(op))
    if ((algo == Algo::nvls || algo == Algo::nvls_tree || algo == Algo::collnet) && unavailable(op, algo).empty())
      doubling.push_back(to_string(algo));
  if (!doubling.empty()) {
    ceiling.Bps *= 2;
    ceiling.doubled_by = join(doubling, ", ");
  }
  return ceiling;
}

std::size_t Communicator::append(const CollRequest& request, Schedule& schedule, const std::vector<std::size_t>& after,
                                 std::size_t composite_offset) {
  if (!request.algo || !request.proto) throw std::logic_error("Communicator::append needs a chosen algorithm and protocol");
  const NcclProtocol* proto = nccl().protocol(to_string(*request.proto));
  if (proto == nullptr) throw std::logic_error("Communicator::append: protocol not in the NCCL model");
  CollSize size = nccl_tests_size(request.op, request.size_B, request.dtype, ranks());
  // The channels run() gave the chosen pair (what needs() declared): choose() again, forced to it.
  Choice choice = choose(request, size);
  Plan p = plan(planned(request, choice.candidates.at(static_cast<std::size_t>(choice.chosen))), size, *request.algo,
                *proto);
  std::size_t start = schedule.delay(fabric_.gpu(0), p.latency_s, after);
  std::vector<std::size_t> flows;
  for (const Flow& f : p.flows) {
    double wire = wire_B(f.payload_B, *proto);
    if (f.composite) flows.push_back(schedule.composite(f.index + composite_offset, wire, {start}));
    else flows.push_back(schedule.transfer(f.src, f.dst, wire, {start}, false));
  }
  if (flows.empty()) return start;
  return schedule.delay(fabric_.gpu(0), 0, flows);
}

}  // namespace topsim
