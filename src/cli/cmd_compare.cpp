// topsim compare: one training scenario across topologies and what-ifs (GPU model, NIC model
// and count, server count), side by side, each column's throughput against the first's.
#include <map>
#include <memory>

#include "cli/price_options.hpp"
#include "cli/workload_common.hpp"
#include "io/io.hpp"
#include "study/buying.hpp"
#include "study/scenarios.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

struct CompareArgs {
  std::string scenario;
  std::string format;
  std::string topologies, gpus_models, nics, nics_per_node;
  std::string gpus, nodes;
  PriceArgs prices;
};

std::vector<std::string> names_option(const std::string& text) {
  if (text.empty()) return {""};
  std::vector<std::string> names = split(text, ',');
  for (const auto& n : names)
    if (n.empty()) throw UsageError("empty name in list '" + text + "'");
  return names;
}

/// Each point's throughput beside what it costs: per watt of its GPUs' TDP, per dollar.
Table cost_table(const std::vector<ScenarioPoint>& points, const Catalog& catalog, const PriceTable& prices) {
  Table table({{"variant"}, {"gpu"}, {"gpus"}, {"nodes"}, {"throughput", 1}, {"per_W", 3}, {"per_usd", 0}});
  for (const ScenarioPoint& p : points) {
    const CostFigures cost = cost_figures(catalog, prices, p.gpu, p.gpus, p.throughput);
    table.add_row({p.variant, p.gpu, static_cast<long long>(p.gpus), static_cast<long long>(p.nodes), p.throughput,
                   cell_or_dash(cost.per_W),
                   cell_or_dash(cost.per_usd)});
  }
  return table;
}

/// A buying comparison: its GPUs on its workloads, priced at the file's prices (--price and
/// --prices on top). The other what-if flags do not apply to it.
std::string buying_text(const std::string& path, const CompareArgs& args, const Workspace& ws, Format format) {
  if (!args.topologies.empty() || !args.gpus_models.empty() || !args.nics.empty() || !args.nics_per_node.empty() ||
      !args.gpus.empty() || !args.nodes.empty())
    throw UsageError(path + " is a buying comparison: edit its \"gpus\" and \"prices\" (or give --price); "
                            "--topologies, --gpu, --nic, --nics-per-node, --gpus and --nodes apply to training scenarios");
  BuyingSpec spec = load_buying(path);
  PriceTable prices;
  for (const auto& [gpu, usd] : spec.prices) {
    if (!ws.catalog().gpus().count(gpu))
      throw InputError(path, "/prices/" + gpu, "unknown GPU model '" + gpu + "' (models/gpus.json)");
    prices[gpu] = usd;
  }
  for (const auto& [gpu, usd] : read_prices(args.prices, ws.catalog())) prices[gpu] = usd;
  const std::vector<BuyingRow> rows = run_buying(spec, ws, prices);
  Table table({{"workload"}, {"gpu"}, {"throughput", 1}, {"unit"}, {"vs_first", 3}, {"fits"}, {"per_W", 3},
               {"usd_per_hour", 2}, {"per_usd", 0}});
  for (const BuyingRow& r : rows) {
    auto price = prices.find(r.gpu);
    table.add_row({r.workload, r.gpu, r.throughput, r.unit, r.vs_first, r.fits,
                   cell_or_dash(r.cost.per_W),
                   cell_or_dash(price != prices.end() ? std::optional<double>(price->second) : std::nullopt),
                   cell_or_dash(r.cost.per_usd)});
  }
  if (format != Format::table) return table.render(format);
  return "# topsim compare: " + spec.description + "\n# training on one GPU of " + spec.topology +
         "; per_W: throughput over the GPU's TDP; per_usd: units per US dollar at usd_per_hour\n# prices: " +
         spec.price_note + "\n" + table.to_text();
}

}  // namespace

void add_compare_command(CLI::App& app, Context& context) {
  CLI::App* compare = app.add_subcommand("compare", "One training scenario across topologies and what-ifs, side by side");
  auto args = std::make_shared<CompareArgs>();
  compare->add_option("scenario", args->scenario, "Training scenario: a path or a bundled name")->required();
  add_format_option(*compare, args->format);
  compare->add_option("--topologies", args->topologies, "Topologies to compare, e.g. dgx-a100,hgx-a800,dgx2");
  compare->add_option("--gpu", args->gpus_models, "GPU models to compare, e.g. a100-80gb,a800; for each, " + gpu_what_if_help());
  compare->add_option("--nic", args->nics, "NIC models or port types to compare, e.g. hdr200,ndr");
  compare->add_option("--nics-per-node", args->nics_per_node, "NICs per server to compare, e.g. 8,4,2");
  compare->add_option("--gpus", args->gpus, "GPU counts in one server (replaces the scenario's)");
  compare->add_option("--nodes", args->nodes, "Server counts (replaces the scenario's)");
  add_price_options(*compare, args->prices);
  compare->callback([args, &context]() {
    Format format = parse_format(args->format);
    std::string path = context.workspace().scenario_path(args->scenario);
    if (is_buying_file(path)) {
      context.out = buying_text(path, *args, context.workspace(), format);
      return;
    }
    if (is_trace_file(path)) throw UsageError(path + " is a trace; compare runs training scenarios (topsim run replays traces)");
    ScenarioSpec scenario = load_scenario(path);
    override_counts(scenario, args->gpus, args->nodes);
    std::vector<int> per_node;
    for (const std::string& k : names_option(args->nics_per_node)) {
      if (k.empty()) {
        per_node.push_back(0);
        continue;
      }
      std::vector<int> one = counts_option(k, "--nics-per-node");
      per_node.push_back(one.front());
    }
    // Every combination of the listed values, first values first; the scenario's own settings
    // (its first variant) fill what is not listed.
    const Variant base = scenario.variants.front();
    std::vector<Variant> variants;
    for (const std::string& topology : names_option(args->topologies))
      for (const std::string& gpu : names_option(args->gpus_models))
        for (const std::string& nic : names_option(args->nics))
          for (int k : per_node) {
            Variant v = base;
            std::vector<std::string> parts;
            if (!topology.empty()) parts.push_back(v.topology = topology);
            if (!gpu.empty()) parts.push_back(v.gpu = gpu);
            if (!nic.empty()) parts.push_back(v.nic = nic);
            if (k > 0) {
              v.nics_per_node = k;
              parts.push_back(std::to_string(k) + " NICs");
            }
            v.name = parts.empty() ? base.name : join(parts, "/");
            variants.push_back(v);
          }
    if (variants.size() < 2)
      throw UsageError("nothing to compare: list two or more values in --topologies, --gpu, --nic or --nics-per-node");
    scenario.variants = variants;

    const Catalog& catalog = context.workspace().catalog();
    const PriceTable prices = read_prices(args->prices, catalog);
    Batch batch;
    std::vector<ScenarioPoint> points = run_scenario_points(scenario, context.workspace(), batch);
    if (format != Format::table) {
      context.out = (prices.empty() ? scenario_table(points, format) : cost_table(points, catalog, prices)).render(format);
      return;
    }
    const bool by_nodes = scenario.gpus.empty();
    std::vector<Column> columns = {{by_nodes ? "nodes" : "gpus"}};
    for (const Variant& v : variants) {
      columns.push_back({v.name, 1});
      if (&v != &variants.front()) columns.push_back({"ratio", 3});
    }
    Table table(columns);
    std::map<int, std::vector<const ScenarioPoint*>> by_count;
    for (const ScenarioPoint& p : points) by_count[p.count].push_back(&p);
    for (const auto& [count, row_points] : by_count) {
      std::vector<Cell> row = {static_cast<long long>(count)};
      double first = row_points.front()->throughput;
      for (std::size_t i = 0; i < row_points.size(); ++i) {
        row.push_back(row_points[i]->throughput);
        if (i > 0) row.push_back(first > 0 ? row_points[i]->throughput / first : 0.0);
      }
      table.add_row(row);
    }
    const Network& net = catalog.network(scenario.training.network, scenario.where.at("training").at("network"));
    std::string text = "# topsim compare: " + scenario.description + "\n# throughput in " + net.sample +
                       "s/s per " + (by_nodes ? "server count" : "GPU count") +
                       "; ratio: against the first column\n";
    for (const ScenarioPoint* p : by_count.begin()->second)
      text += "# " + p->variant + ": " + p->topology + ", " + p->gpu + "\n";
    context.out = text + table.to_text();
    if (!prices.empty())
      context.out += "\n# per_W: throughput over the GPUs' TDP; per_usd: " + net.sample +
                     "s per US dollar at the hourly prices given\n" + cost_table(points, catalog, prices).to_text();
  });
}

}  // namespace topsim
