// topsim topo export: a topology as another simulator's platform file (SimGrid's, for SMPI).
#include "cli/common.hpp"
#include "export/simgrid_xml.hpp"
#include "p2p/p2p.hpp"
#include "util/error.hpp"

namespace topsim {

void add_topo_export_command(CLI::App& topo, Context& context) {
  CLI::App* cmd = topo.add_subcommand(
      "export", "Write a topology as a SimGrid platform file (SMPI, s4u): GPUs as hosts, routes as topsim p2p copies");
  struct Options {
    std::string topology;
    bool simgrid_xml = false;
    bool no_p2p = false;
    std::string output;
    ScaleOut scale;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("topology", options->topology, "Topology file, or the name of a bundled one (dgx-a100)")->required();
  cmd->add_flag("--simgrid-xml", options->simgrid_xml, "SimGrid 3.32 platform XML (version 4.1); the only format so far");
  cmd->add_flag("--no-p2p", options->no_p2p, "Peer access disabled: every route is staged through host memory");
  cmd->add_option("-o,--output", options->output, "The platform file (default: standard output)");
  add_scale_out_options(*cmd, options->scale);
  cmd->callback([options, &context]() {
    if (!options->simgrid_xml) throw UsageError("topo export: name the format to write: --simgrid-xml");
    Topology t = context.workspace().topology(options->topology, options->scale);
    P2pOptions p2p;
    p2p.peer_access = !options->no_p2p;
    std::string xml = simgrid_platform_xml(t, route_options(p2p));
    if (options->output.empty()) {
      context.out = xml;
      return;
    }
    write_file_whole(options->output, xml, "-o");
  });
}

}  // namespace topsim
