#pragma once
// What the coll and scale commands share: the options that shape a request (datatype,
// algorithm, protocol, channels, P2P, GPUDirect), and how a communicator is described.
#include <CLI/CLI.hpp>
#include <string>

#include "collectives/communicator.hpp"

namespace topsim {

struct RequestArgs {
  std::string dtype = "float";
  std::string algo, proto;
  int channels = 0;
  bool no_p2p = false;
  bool no_gdr = false;
};

/// Adds -d, --algo, --proto, --channels, --no-p2p and --no-gdr to a subcommand.
void add_request_options(CLI::App& command, RequestArgs& args);
/// The request those options describe, for `op` (size left 0); UsageError on bad names.
CollRequest request_of(const RequestArgs& args, CollOp op);
RouteOptions routes_of(const RequestArgs& args);

/// One line about a communicator: its GPUs and servers, and the rings or NIC rails it runs.
std::string communicator_text(const Communicator& comm);

}  // namespace topsim
