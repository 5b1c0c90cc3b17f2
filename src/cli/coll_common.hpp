#pragma once
// What the coll and scale commands share: the options that shape a request (datatype,
// algorithm, protocol, channels, P2P, GPUDirect), and how a communicator is described.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace topsim {

struct RequestArgs {
  std::string dtype = "float";
  std::string algo, proto;
  int channels = 0;
  bool no_p2p = false;
  bool no_gdr = false;
  std::string nccl;               ///< --nccl: release ("2.18.5") or modelled line; "" for the default
  std::vector<std::string> env;   ///< --env NCCL_KEY=VALUE,...
  std::string routing = "ideal";  ///< --routing: ideal, ecmp, adaptive
  unsigned long long seed = 0;    ///< --seed: ECMP hash seed
  int gpus_per_thread = 1;        ///< --gpus-per-thread: nccl-tests -g
};

/// Adds -d, --algo, --proto, --channels, --no-p2p, --no-gdr, --routing, --seed, --nccl and --env to a subcommand.
void add_request_options(CLI::App& command, RequestArgs& args);
/// Adds --gpus-per-thread (nccl-tests -g) to a subcommand that simulates nccl-tests runs.
void add_gpus_per_thread_option(CLI::App& command, RequestArgs& args);
/// Adds --nccl and --env alone (workload commands).
void add_nccl_options(CLI::App& command, RequestArgs& args);
/// The request those options describe, for `op` (size left 0); UsageError on bad names.
CollRequest request_of(const RequestArgs& args, CollOp op);
/// The route options those flags give; adaptive routing gets a fresh placement, shared by every
/// copy of the result (one communicator and its platform).
RouteOptions routes_of(const RequestArgs& args);

/// NCCL's environment as topsim models it: NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS,
/// NCCL_MAX_NCHANNELS, NCCL_P2P_DISABLE, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE,
/// NCCL_NET_GDR_LEVEL, NCCL_IB_HCA, NCCL_P2P_LEVEL. `items` are KEY=VALUE, or bare values continuing the previous key's
/// list (--env NCCL_ALGO=ring,tree). UsageError naming the modelled keys for any other key.
struct NcclEnv {
  TunerLimits limits;
  std::optional<bool> peer_access;
  std::optional<PeerReach> peer_reach;  ///< NCCL_P2P_LEVEL beyond NVLink
  bool level_disables_p2p = false;      ///< NCCL_P2P_LEVEL=LOC or 0
  std::optional<bool> gpu_direct;
  std::string ib_hca;  ///< NCCL_IB_HCA as given
};
NcclEnv parse_nccl_env(const std::vector<std::string>& items);

/// One line about a communicator: its GPUs and servers, and the rings or NIC rails it runs.
std::string communicator_text(const Communicator& comm);

/// The transport of each hop of a one-server communicator's first ring, as NCCL picks it (P2P
/// over NVLink or PCIe, SHM through host memory), with the PCIe P2P level; "" when every hop is
/// NVLink or the communicator spans a network.
std::string ring_transports_text(const Communicator& comm);

}  // namespace topsim
