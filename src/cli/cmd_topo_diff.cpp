// topsim topo diff A B: every aspect in which two servers or clusters differ (GPU, NVLink,
// NVSwitches, NICs, PCIe, CPUs, fabric), from the same figures compare prints above its table.
#include <memory>

#include "cli/common.hpp"
#include "study/topology_diff.hpp"

namespace topsim {

void add_topo_diff_command(CLI::App& topo, Context& context) {
  auto* diff = topo.add_subcommand("diff", "Every difference between two servers or clusters");
  struct Options {
    std::string a, b;
    std::string format;
    ScaleOut scale;
  };
  auto options = std::make_shared<Options>();
  diff->add_option("a", options->a, "Topology file, or the name of a bundled one (dgx-a100)")->required();
  diff->add_option("b", options->b, "The topology to set against it (hgx-a800)")->required();
  add_format_option(*diff, options->format);
  add_scale_out_options(*diff, options->scale);
  diff->callback([options, &context]() {
    Format format = parse_format(options->format);
    const TopologyDiff result = diff_topologies(context.workspace(), {options->a, options->scale, "", ""},
                                                {options->b, options->scale, "", ""});
    context.out = topology_diff_render(result, format);
  });
}

}  // namespace topsim
