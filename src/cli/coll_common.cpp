#include "cli/coll_common.hpp"

#include "collectives/nccl_transport.hpp"

#include <algorithm>
#include <map>

#include "util/error.hpp"

#include "util/text.hpp"

namespace topsim {

void add_request_options(CLI::App& command, RequestArgs& args) {
  command.add_option("-d,--datatype", args.dtype, "float, half, bfloat16, double, int8, ... (nccl-tests names)")
      ->default_val("float");
  command.add_option("--algo", args.algo, "Force an algorithm: ring, tree, nvls, direct, collnet (SHARP)");
  command.add_option("--proto", args.proto, "Force a protocol: ll, ll128, simple");
  command.add_option("--channels", args.channels, "Force a channel count (two per ring)")->check(CLI::Range(1, 64));
  command.add_flag("--no-p2p", args.no_p2p, "Peer access disabled: NCCL goes through host memory (NCCL_P2P_DISABLE=1)");
  command.add_flag("--no-gdr", args.no_gdr,
                   "No GPUDirect RDMA: NIC traffic bounces through host memory (NCCL_NET_GDR_LEVEL=LOC)");
  command.add_option("--routing", args.routing,
                     "Network routing over equal-cost links and spines: ideal (even split, default), ecmp (each flow "
                     "hashed onto one), adaptive (each flow onto the least loaded)")
      ->check(CLI::IsMember({"ideal", "ecmp", "adaptive"}));
  command.add_option("--seed", args.seed, "ECMP hash seed (default 0)");
  add_nccl_options(command, args);
}

void add_gpus_per_thread_option(CLI::App& command, RequestArgs& args) {
  command.add_option("--gpus-per-thread", args.gpus_per_thread,
                     "GPUs one host thread drives, as nccl-tests -g: its kernel launches bound small sizes (default 1)")
      ->check(CLI::Range(1, 1 << 20));
}

void add_nccl_options(CLI::App& command, RequestArgs& args) {
  command.add_option("--nccl", args.nccl, "NCCL release whose tuner chooses (2.18.5, 2.26; default: newest modelled; "
                                          "topsim nccl versions)");
  command.add_option("--env", args.env,
                     "NCCL environment: NCCL_ALGO=ring,tree,NCCL_PROTO=simple,NCCL_MAX_NCHANNELS=8,NCCL_P2P_DISABLE=1,"
                     "NCCL_NVLS_ENABLE=0,NCCL_IB_HCA=mlx5_0,mlx5_1,...")
      ->delimiter(',');
}

namespace {

const std::vector<std::string>& env_keys() {
  static const std::vector<std::string> keys = {"NCCL_ALGO",          "NCCL_PROTO",         "NCCL_MIN_NCHANNELS",
                                                "NCCL_MAX_NCHANNELS", "NCCL_P2P_DISABLE",   "NCCL_NVLS_ENABLE",
                                                "NCCL_COLLNET_ENABLE", "NCCL_NET_GDR_LEVEL", "NCCL_IB_HCA",
                                                "NCCL_P2P_LEVEL"};
  return keys;
}

// NCCL's list syntax: names separated by commas, all excluded when the list starts with '^'.
template <typename Enum>
std::vector<Enum> env_list(const std::string& key, const std::vector<std::string>& values, const std::vector<Enum>& all,
                           Enum (*parse)(const std::string&)) {
  bool exclude = !values.empty() && !values.front().empty() && values.front()[0] == '^';
  std::vector<Enum> named;
  for (std::string v : values) {
    if (!v.empty() && v[0] == '^') v = v.substr(1);
    try {
      named.push_back(parse(v));
    } catch (const UsageError& e) {
      throw UsageError("--env " + key + ": " + e.what());
    }
  }
  if (!exclude) return named;
  std::vector<Enum> kept;
  for (Enum e : all)
    if (std::find(named.begin(), named.end(), e) == named.end()) kept.push_back(e);
  return kept;
}

bool env_flag(const std::string& key, const std::string& value) {
  if (value == "1") return true;
  if (value == "0") return false;
  throw UsageError("--env " + key + "=" + value + ": expected 0 or 1");
}

int env_count(const std::string& key, const std::string& value) {
  try {
    std::size_t used = 0;
    int n = std::stoi(value, &used);
    if (used == value.size() && n >= 1 && n <= 64) return n;
  } catch (const std::exception&) {
  }
  throw UsageError("--env " + key + "=" + value + ": expected a channel count 1-64");
}

}  // namespace

NcclEnv parse_nccl_env(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::vector<std::string>>> pairs;
  for (const std::string& item : items) {
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      if (pairs.empty()) throw UsageError("--env " + item + ": expected NCCL_KEY=VALUE");
      pairs.back().second.push_back(item);
      continue;
    }
    std::string key = item.substr(0, eq);
    if (std::find(env_keys().begin(), env_keys().end(), key) == env_keys().end())
      throw UsageError("--env " + key + ": topsim does not model it; modelled: " + join(env_keys(), ", "));
    pairs.push_back({key, {item.substr(eq + 1)}});
  }
  NcclEnv env;
  for (const auto& [key, values] : pairs) {
    const std::string& v = values.front();
    if (key != "NCCL_ALGO" && key != "NCCL_PROTO" && key != "NCCL_IB_HCA" && values.size() > 1)
      throw UsageError("--env " + key + ": one value expected, got " + join(values, ","));
    if (key == "NCCL_ALGO") env.limits.algos = env_list(key, values, all_algos(), &parse_algo);
    else if (key == "NCCL_PROTO") env.limits.protos = env_list(key, values, all_protos(), &parse_proto);
    else if (key == "NCCL_MIN_NCHANNELS") env.limits.min_channels = env_count(key, v);
    else if (key == "NCCL_MAX_NCHANNELS") env.limits.max_channels = env_count(key, v);
    else if (key == "NCCL_P2P_DISABLE") env.peer_access = !env_flag(key, v);
    else if (key == "NCCL_P2P_LEVEL") {
      // NCCL reads NCCL_P2P_DISABLE first and ignores the level when it is set (paths.cc ncclGetLevel).
      env.peer_reach = parse_nccl_p2p_level(v);
      if (!env.peer_reach) env.level_disables_p2p = true;
    }
    else if (key == "NCCL_NVLS_ENABLE") env.limits.nvls = env_flag(key, v);
    else if (key == "NCCL_IB_HCA") env.ib_hca = join(values, ",");
    else if (key == "NCCL_COLLNET_ENABLE") env.limits.collnet = env_flag(key, v);
    else if (key == "NCCL_NET_GDR_LEVEL") {
      static const std::vector<std::string> levels = {"LOC", "PIX", "PXB", "PHB", "SYS", "0", "1", "2", "3", "4", "5"};
      if (std::find(levels.begin(), levels.end(), v) == levels.end())
        throw UsageError("--env NCCL_NET_GDR_LEVEL=" + v + ": expected " + join(levels, ", "));
      env.gpu_direct = !(v == "LOC" || v == "0");
    }
  }
  if (env.limits.min_channels > 0 && env.limits.max_channels > 0 && env.limits.min_channels > env.limits.max_channels)
    throw UsageError("--env NCCL_MIN_NCHANNELS is above NCCL_MAX_NCHANNELS");
  return env;
}

CollRequest request_of(const RequestArgs& args, CollOp op) {
  CollRequest request;
  request.op = op;
  request.dtype = parse_dtype(args.dtype);
  if (!args.algo.empty()) request.algo = parse_algo(args.algo);
  if (!args.proto.empty()) request.proto = parse_proto(args.proto);
  if (args.channels > 0) request.channels = args.channels;
  request.limits = parse_nccl_env(args.env).limits;
  request.gpus_per_thread = args.gpus_per_thread;
  return request;
}

RouteOptions routes_of(const RequestArgs& args) {
  NcclEnv env = parse_nccl_env(args.env);
  RouteOptions routes;
  routes.peer_access = !args.no_p2p && env.peer_access.value_or(!env.level_disables_p2p);
  routes.peer_reach = env.peer_reach;
  routes.gpu_direct = !args.no_gdr && env.gpu_direct.value_or(true);
  routes.ib_hca = env.ib_hca;
  if (args.routing == "ecmp") routes.routing = RoutingMode::ecmp;
  if (args.routing == "adaptive") {
    routes.routing = RoutingMode::adaptive;
    routes.placement = std::make_shared<FlowPlacement>();
  }
  routes.seed = args.seed;
  return routes;
}

std::string communicator_text(const Communicator& comm) {
  const Fabric& fabric = comm.fabric();
  const Topology& t = fabric.topology();
  std::vector<int> gpus = fabric.gpus();
  std::string text = std::to_string(comm.ranks()) + " GPUs (" + int_ranges(gpus) + ")";
  if (!comm.across_network()) {
    if (fabric.nodes().size() > 1) text += " on " + std::to_string(fabric.nodes().size()) + " servers of one NVLink domain";
    return text + ", " + std::to_string(comm.rings().rings()) + " rings over " +
           std::to_string(comm.rings().orders.size()) + " orders at " + fixed(comm.rings().speed_Bps / 1e9, 2) +
           " GB/s each";
  }
  // NIC models of the rails, counted (a server may mix them).
  std::map<std::string, int> models;
  for (int r = 0; r < comm.rails(); ++r)
    ++models[t.device(t.nics().at(static_cast<std::size_t>(fabric.nic(fabric.nodes().front(), r)))).model_name];
  std::vector<std::string> parts;
  for (const auto& [model, count] : models) parts.push_back(std::to_string(count) + "x " + model);
  return text + " on " + std::to_string(fabric.nodes().size()) + " servers, " + std::to_string(comm.rails()) +
         " NIC rails per server (" + join(parts, ", ") + ")";
}

std::string ring_transports_text(const Communicator& comm) {
  if (comm.across_network() || comm.rings().orders.empty()) return "";
  const std::vector<int>& order = comm.rings().orders.front();
  std::map<RouteKind, std::vector<std::string>> hops;
  for (std::size_t i = 0; i < order.size(); ++i) {
    int from = order[i], to = order[(i + 1) % order.size()];
    hops[comm.fabric().arc(from, to).kind].push_back(std::to_string(from) + ">" + std::to_string(to));
  }
  if (hops.size() == 1 && hops.begin()->first == RouteKind::nvlink) return "";
  static const std::map<RouteKind, std::string> names = {{RouteKind::nvlink, "P2P over NVLink"},
                                                          {RouteKind::pcie_peer, "P2P over PCIe"},
                                                          {RouteKind::host_staged, "SHM through host memory"},
                                                          {RouteKind::network, "NET"}};
  std::vector<std::string> parts;
  for (const auto& [kind, list] : hops) parts.push_back(names.at(kind) + " " + join(list, " "));
  const RouteOptions& o = comm.fabric().options();
  std::string level = !o.peer_access ? "P2P disabled" : std::string("P2P level ") + to_string(o.peer_reach.value_or(PeerReach::socket));
  return "ring transports (" + level + "): " + join(parts, "; ");
}

}  // namespace topsim
