#include "cli/link_usage_options.hpp"

#include "cli/common.hpp"
#include "report/link_usage.hpp"

namespace topsim {

void add_link_usage_options(CLI::App& command, LinkUsageArgs& args) {
  command.add_option("--heatmap", args.heatmap, "Write an SVG heat map of every link's utilisation over the run");
  command.add_option("--link-usage", args.json, "Write every link's utilisation over the run as JSON (topsim report draws it)");
  command.add_option("--bins", args.bins, "Time bins of --heatmap and --link-usage")->check(CLI::Range(1, 10000))->default_val(60);
}

void write_link_usage(const LinkUsageArgs& args, const Simulator& simulator, const std::string& source) {
  LinkUsage usage = simulator.link_usage(args.bins);
  usage.source = source;
  if (!args.json.empty()) write_file_whole(args.json, link_usage_json(usage), "--link-usage");
  if (!args.heatmap.empty()) write_file_whole(args.heatmap, svg(heat_map(usage)), "--heatmap");
}

}  // namespace topsim
