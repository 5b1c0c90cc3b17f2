#include "collectives/communicator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

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

RouteOptions nccl_routes() {
  RouteOptions options;
  options.mode = TransferMode::sm;
  return options;
}

// Which algorithms NCCL offers for an operation.
std::vector<Algo> algorithms_for(CollOp op) {
  switch (op) {
    case CollOp::allreduce: return {Algo::ring, Algo::tree, Algo::nvls};
    case CollOp::allgather:
    case CollOp::reducescatter:
    case CollOp::broadcast:
    case CollOp::reduce: return {Algo::ring};
    case CollOp::alltoall:
    case CollOp::sendrecv: return {Algo::direct};
  }
  return {};
}

}  // namespace

Communicator::Communicator(const Topology& topology, std::vector<int> gpus)
    : fabric_(topology, checked(topology, std::move(gpus)), nccl_routes()) {
  rings_ = search_rings(fabric_);
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
    for (int r = 0; r < ranks(); ++r) {
      Route route = find_route(t, fabric_.gpu(r), fabric_.gpu((r + 1) % ranks()), fabric_.options());
      bool switched = false;
      for (const Hop& hop : route.path.hops)
        for (Vertex v : hop.devices) switched |= t.device(v).type == DeviceType::nvswitch;
      if (!switched) return "NVLS needs every GPU behind the same NVSwitches";
    }
  }
  if ((algo == Algo::ring || algo == Algo::tree) && ranks() > 1 && rings_.rings() == 0)
    return "no ring could be built over these GPUs";
  return "";
}

std::vector<std::pair<int, int>> Communicator::rank_order_hops(const std::vector<int>& order, bool closed) const {
  std::vector<std::pair<int, int>> hops;
  int n = static_cast<int>(order.size());
  for (int i = 0; i + 1 < n + (closed ? 1 : 0); ++i) hops.emplace_back(order[i], order[(i + 1) % n]);
  return hops;
}

std::size_t Communicator::composite(const std::string& key, std::vector<std::pair<int, int>> rank_hops,
                                    std::optional<double> cap) {
  auto it = composite_ids_.find(key);
  if (it != composite_ids_.end()) return it->second;
  if (!declaring_) throw std::logic_error("Communicator: composite '" + key + "' was not declared by needs()");
  Composite c;
  for (const auto& [a, b] : rank_hops) c.hops.emplace_back(fabric_.gpu(a), fabric_.gpu(b));
  c.cap_Bps = cap;
  needs_.composites.push_back(std::move(c));
  std::size_t id = needs_.composites.size() - 1;
  composite_ids_[key] = id;
  return id;
}

int Communicator::ring_subset(std::optional<int> channels, std::vector<int>& multiplicity) const {
  multiplicity = rings_.multiplicity;
  if (!channels) return rings_.channels();
  // Two channels per ring: fewer channels run fewer of the rings found.
  int keep = std::max(1, (*channels + 1) / 2);
  for (int& m : multiplicity) {
    m = std::min(m, keep);
    keep -= m;
  }
  return *channels;
}

double Communicator::step_cost_s(const NcclProtocol& proto, const std::vector<std::pair<int, int>>& arcs) const {
  // NCCL charges a step by its slowest transport: NVLink, else PCIe/host.
  bool nvlink = std::all_of(arcs.begin(), arcs.end(),
                            [&](const auto& a) { return fabric_.arc(a.first, a.second).kind == RouteKind::nvlink; });
  return nvlink ? proto.nvlink_hop_s : proto.pcie_hop_s;
}

Communicator::Plan Communicator::plan(const CollRequest& request, CollSize size, Algo algo, const NcclProtocol& proto) {
  Plan plan;
  int n = ranks();
  double S = size.size_B;
  if (n < 2) {  // one GPU: a local copy, NCCL's base cost only
    plan.latency_s = proto.ring_base_s;
    return plan;
  }
  std::vector<int> mult;
  plan.channels = ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  auto add = [&](std::size_t id, double payload, std::vector<std::pair<int, int>> arcs) {
    Flow f;
    f.index = id;
    f.payload_B = payload;
    f.arcs = std::move(arcs);
    plan.flows.push_back(std::move(f));
  };
  std::vector<std::pair<int, int>> used_arcs;  // every rank hop the plan crosses, for the step cost
  auto note = [&](const std::vector<std::pair<int, int>>& hops) { used_arcs.insert(used_arcs.end(), hops.begin(), hops.end()); };
  double steps = 0;
  double base = proto.ring_base_s;
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0 || algo == Algo::nvls || algo == Algo::direct) continue;
    const std::vector<int>& order = rings_.orders[k];
    double share = double(mult[k]) / rings;
    double cap = rings_.speed_Bps * mult[k];
    std::string tag = std::to_string(k) + "/" + std::to_string(mult[k]);
    // A chain is a pipeline: its last hop starts once the first chunk has crossed the others.
    // Each of the group's 2 x mult channels streams its part in chunks of the protocol's step.
    double chunks = std::max(1.0, std::ceil(S * share / (2 * mult[k]) / proto.chunk_B));
    auto filled = [&](double hops) { return S * share * (hops + chunks - 1) / chunks; };
    if (algo == Algo::ring && (request.op == CollOp::broadcast || request.op == CollOp::reduce)) {
      // A chain from the root (broadcast) or to it (reduce), along the ring.
      auto at = std::find(order.begin(), order.end(), request.root) - order.begin();
      std::vector<int> chain;
      for (int i = 0; i < n; ++i)
        chain.push_back(order[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      auto hops = rank_order_hops(chain, false);
      note(hops);
      add(composite("chain/" + std::string(to_string(request.op)) + "/" + std::to_string(request.root) + "/" + tag, hops,
                    cap),
          filled(n - 1), hops);
      steps = n - 1;
    } else if (algo == Algo::ring) {
      auto hops = rank_order_hops(order, true);
      note(hops);
      double per_hop = request.op == CollOp::allreduce ? 2.0 * (n - 1) / n * S : double(n - 1) / n * S;
      add(composite("ring/" + tag, hops, cap), per_hop * share, hops);
      steps = request.op == CollOp::allreduce ? 2 * (n - 1) : n - 1;
    } else if (algo == Algo::tree) {
      // Inside one node NCCL's tree is a chain: reduce up it while broadcasting down it.
      auto down = rank_order_hops(order, false);
      std::vector<std::pair<int, int>> up;
      for (auto it = down.rbegin(); it != down.rend(); ++it) up.emplace_back(it->second, it->first);
      note(down);
      // The broadcast down the chain trails the reduction up it by the chain's length.
      add(composite("tree-down/" + tag, down, cap), filled(2 * (n - 1)), down);
      add(composite("tree-up/" + tag, up, cap), filled(2 * (n - 1)), up);
      steps = 2 * (n - 1);
      base = proto.tree_base_s;
    }
  }
  if (algo == Algo::nvls) {
    // NVLink SHARP: every GPU sends all its data to the switches, which reduce, and receives
    // the result: S (1 + 1/n) each way per GPU, at the NVLS efficiency.
    auto hops = rank_order_hops(rings_.orders.front(), true);
    note(hops);
    add(composite("nvls", hops, std::nullopt), S * (1 + 1.0 / n) / *nccl().nvls_efficiency, hops);
    steps = 2;
    plan.channels = rings_.channels();
  }
  if (algo == Algo::direct) {
    std::vector<std::pair<int, int>> pairs;
    if (request.op == CollOp::alltoall) {
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
          if (a != b) pairs.emplace_back(a, b);
    } else {
      for (int a = 0; a < n; ++a) pairs.emplace_back(a, (a + 1) % n);
    }
    double payload = request.op == CollOp::alltoall ? S / n : S;
    for (const auto& [a, b] : pairs) {
      Flow f;
      f.composite = false;
      f.src = fabric_.gpu(a);
      f.dst = fabric_.gpu(b);
      f.payload_B = payload;
      f.arcs = {{a, b}};
      plan.flows.push_back(f);
      if (declaring_) needs_.pairs.emplace_back(f.src, f.dst);
    }
    note(pairs);
    steps = 1;
  }
  plan.latency_s = base + steps * step_cost_s(proto, used_arcs);
  return plan;
}

Schedule Communicator::step_schedule(const CollRequest& request, CollSize size, const NcclProtocol& proto,
                                     double latency_s) {
  // The reference: every step of every hop is a transfer that starts when its sender has sent
  // its previous step and received the step it forwards. Only the first pass through the steps
  // pays NCCL's per-step cost; later chunks stream behind it, as NCCL's buffering lets them.
  int n = ranks();
  double S = size.size_B;
  std::vector<int> mult;
  ring_subset(request.channels, mult);
  int rings = std::accumulate(mult.begin(), mult.end(), 0);
  bool chain = request.op == CollOp::broadcast || request.op == CollOp::reduce;
  int hops = chain ? n - 1 : n;
  int steps = request.op == CollOp::allreduce ? 2 * (n - 1) : n - 1;
  double step_cost = (latency_s - proto.ring_base_s) / (chain ? n - 1 : steps);
  Schedule schedule;
  std::size_t start = schedule.delay(fabric_.gpu(0), proto.ring_base_s);
  for (std::size_t k = 0; k < rings_.orders.size(); ++k) {
    if (mult[k] == 0) continue;
    double share = double(mult[k]) / rings;
    std::vector<int> order = rings_.orders[k];
    if (chain) {
      auto at = std::find(order.begin(), order.end(), request.root) - order.begin();
      std::vector<int> rotated;
      for (int i = 0; i < n; ++i) rotated.push_back(order[(at + (request.op == CollOp::broadcast ? i : i + 1)) % n]);
      order = rotated;
      steps = static_cast<int>(std::max(1.0, std::ceil(S * share / (2 * mult[k]) / proto.chunk_B)));
    }
    double bytes = std::round((chain ? S * share / steps : S * share / n) / proto.efficiency);
    // previous[i]: the last transfer out of the i-th rank of the order (start for none yet).
    std::vector<std::size_t> previous(n, start);
    for (int s = 0; s < steps; ++s) {
      std::vector<std::size_t> sent = previous;
      for (int i = 0; i < hops; ++i) {
        std::vector<std::size_t> after = {previous[i]};
        if (chain ? i > 0 : true) after.push_back(chain ? sent[i - 1] : previous[(i - 1 + n) % n]);
        std::sort(after.begin(), after.end());
        after.erase(std::unique(after.begin(), after.end()), after.end());
        if (!chain || s == 0) after = {schedule.delay(fabric_.gpu(order[i]), step_cost, after)};
        sent[i] = schedule.transfer(fabric_.gpu(order[i]), fabric_.gpu(order[(i + 1) % n]), bytes, after, false);
      }
      previous = sent;
    }
  }
  return schedule;
}

bool Communicator::short_chain(const CollRequest& request, CollSize size, const NcclProtocol& proto) const {
  // A chain of few chunks is store-and-forward: one hop busy at a time. One flow over all hops
  // would have every hop contend at once, so such chains run step by step (cheap: few chunks).
  if (request.op != CollOp::broadcast && request.op != CollOp::reduce) return false;
  if (ranks() > kMaxStepRanks || rings_.rings() == 0) return false;
  return size.size_B / (2.0 * rings_.rings()) <= kStepChunks * proto.chunk_B;
}

PlatformNeeds Communicator::needs(const std::vector<CollRequest>& requests) {
  declaring_ = true;
  needs_ = PlatformNeeds{};
  needs_.all_pairs = false;
  const NcclModel& model = nccl();
  for (const CollRequest& request : requests) {
    CollSize size = nccl_tests_size(request.op, request.size_B, request.dtype, ranks());
    for (Algo algo : algorithms_for(request.op)) {
      if (!unavailable(request.op, algo).empty()) continue;
      for (const NcclProtocol& proto : model.protocols) plan(request, size, algo, proto);
    }
    bool chain = request.op == CollOp::broadcast || request.op == CollOp::reduce;
    if ((request.model == CollModel::steps || chain) && ranks() > 1 && ranks() <= kMaxStepRanks)
      for (const auto& order : rings_.orders)
        for (const auto& [a, b] : rank_order_hops(order, true)) {
          needs_.pairs.emplace_back(fabric_.gpu(a), fabric_.gpu(b));
          needs_.pairs.emplace_back(fabric_.gpu(b), fabric_.gpu(a));
        }
  }
  std::sort(needs_.pairs.begin(), needs_.pairs.end());
  needs_.pairs.erase(std::unique(needs_.pairs.begin(), needs_.pairs.end()), needs_.pairs.end());
  declaring_ = false;
  return needs_;
}

std::string Communicator::bound_of(const Plan& plan, const std::vector<OpTiming>& timings, const NcclProtocol& proto,
                                   double time_s) {
  if (plan.flows.empty() || plan.latency_s >= time_s / 2) return "latency";
  std::vector<double> load(fabric_.resources(), 0.0);
  for (std::size_t i = 0; i < plan.flows.size(); ++i) {
    const OpTiming& t = timings[i + 1];
    double seconds = t.finish_s - t.start_s;
    if (seconds <= 0) continue;
    double rate = plan.flows[i].payload_B / proto.efficiency / seconds;
    for (const auto& [a, b] : plan.flows[i].arcs)
      for (const auto& [resource, times] : fabric_.arc(a, b).uses) load[resource] += rate * times;
  }
  int busiest = 0;
  for (int r = 1; r < fabric_.resources(); ++r)
    if (load[r] / fabric_.capacity_Bps(r) > load[busiest] / fabric_.capacity_Bps(busiest)) busiest = r;
  double use = load[busiest] / fabric_.capacity_Bps(busiest);
  if (use < 0.9) return "channels (" + fixed(100 * use, 0) + "% of " + fabric_.resource_name(busiest) + ")";
  return fabric_.resource_name(busiest) + " (" + fixed(100 * std::min(use, 1.0), 0) + "%)";
}

CollResult Communicator::run(const CollRequest& request, Runner& runner) {
  const NcclModel& model = nccl();
  CollResult result;
  result.op = request.op;
  result.dtype = request.dtype;
  result.size = nccl_tests_size(request.op, request.size_B, request.dtype, ranks());
  result.root = is_rooted(request.op) ? request.root : -1;
  if (is_rooted(request.op) && (request.root < 0 || request.root >= ranks()))
    throw UsageError("root " + std::to_string(request.root) + " is not a rank of this communicator (0-" +
                     std::to_string(ranks() - 1) + ")");

  std::vector<Algo> algos = algorithms_for(request.op);
  if (request.algo) {
    std::string why = unavailable(request.op, *request.algo);
    if (!why.empty()) throw UsageError("--algo " + std::string(to_string(*request.algo)) + ": " + why);
    algos = {*request.algo};
  }
  std::vector<const NcclProtocol*> protos;
  for (const NcclProtocol& p : model.protocols)
    if (!request.proto || p.name == to_string(*request.proto)) protos.push_back(&p);
  if (protos.empty()) {
    std::vector<std::string> names;
    for (const auto& p : model.protocols) names.push_back(p.name);
    throw UsageError("--proto " + std::string(to_string(*request.proto)) + ": NCCL on " + model.name + " runs " +
                     join(names, ", "));
  }

  double best = std::numeric_limits<double>::infinity();
  for (Algo algo : algos) {
    if (!unavailable(request.op, algo).empty()) continue;
    for (const NcclProtocol* proto : protos) {
      if (algo == Algo::nvls && proto->name != "simple") {
        if (request.proto && request.algo) throw UsageError("--algo nvls runs the simple protocol only");
        continue;
      }
      Plan p = plan(request, result.size, algo, *proto);
      Schedule schedule;
      bool steps = algo == Algo::ring && ranks() > 1 &&
                   (request.model == CollModel::steps || short_chain(request, result.size, *proto));
      if (steps) {
        schedule = step_schedule(request, result.size, *proto, p.latency_s);
      } else {
        std::size_t start = schedule.delay(fabric_.gpu(0), p.latency_s);
        for (const Flow& f : p.flows) {
          double wire = std::round(f.payload_B / proto->efficiency);
          if (f.composite) schedule.composite(f.index, wire, {start});
          else schedule.transfer(f.src, f.dst, wire, {start}, false);
        }
      }
      auto timings = runner.run(schedule);
      double time = 0;
      for (const OpTiming& t : timings) time = std::max(time, t.finish_s);
      Candidate c;
      c.algo = algo;
      c.proto = parse_proto(proto->name);
      c.latency_s = p.latency_s;
      c.time_s = time;
      result.candidates.push_back(c);
      if (time < best * (1 - 1e-12)) {
        best = time;
        result.algo = algo;
        result.proto = c.proto;
        result.channels = p.channels;
        result.time_s = time;
        result.bound = steps ? std::string("(per-step model)") : bound_of(p, timings, *proto, time);
      }
    }
  }
  if (result.candidates.empty()) throw UsageError(std::string("no algorithm can run ") + to_string(request.op) + " here");
  result.algbw_Bps = result.time_s > 0 ? result.size.size_B / result.time_s : 0;
  result.busbw_Bps = result.algbw_Bps * busbw_factor(request.op, ranks());
  return result;
}

}  // namespace topsim
