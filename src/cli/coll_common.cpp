#include "cli/coll_common.hpp"

#include <map>

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
}

CollRequest request_of(const RequestArgs& args, CollOp op) {
  CollRequest request;
  request.op = op;
  request.dtype = parse_dtype(args.dtype);
  if (!args.algo.empty()) request.algo = parse_algo(args.algo);
  if (!args.proto.empty()) request.proto = parse_proto(args.proto);
  if (args.channels > 0) request.channels = args.channels;
  return request;
}

RouteOptions routes_of(const RequestArgs& args) {
  RouteOptions routes;
  routes.peer_access = !args.no_p2p;
  routes.gpu_direct = !args.no_gdr;
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

}  // namespace topsim
