// topsim compare: one training scenario across topologies and what-ifs (GPU model, NIC model
// and count, server count), side by side, each column's throughput against the first's, and
// what sets each column's hardware apart from the first's (topo diff). A variant that cannot
// run is reported on its own row; the others still run, and the exit status is 2.
#include <exception>
#include <limits>
#include <map>
#include <memory>

#include "cli/price_options.hpp"
#include "cli/workload_common.hpp"
#include "io/io.hpp"
#include "study/buying.hpp"
#include "study/scenarios.hpp"
#include "study/topology_diff.hpp"
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

/// Every combination of the listed values, first values first; the scenario's own settings (its
/// first variant) fill what is not listed.
std::vector<Variant> listed_variants(const ScenarioSpec& scenario, const CompareArgs& args) {
  std::vector<int> per_node;
  for (const std::string& k : names_option(args.nics_per_node))
    per_node.push_back(k.empty() ? 0 : counts_option(k, "--nics-per-node").front());
  const Variant base = scenario.variants.front();
  std::vector<Variant> variants;
  for (const std::string& topology : names_option(args.topologies))
    for (const std::string& gpu : names_option(args.gpus_models))
      for (const std::string& nic : names_option(args.nics))
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
  return variants;
}

/// One column of the comparison: its points, or why it could not run (an invalid pairing such
/// as a GPU its board cannot take, or a missing topology), which spoils no other column.
struct VariantRun {
  Variant variant;
  ScenarioSpec scenario;  ///< the scenario with this variant alone
  std::unique_ptr<ScenarioRunner> runner;
  std::vector<ScenarioPoint> points;
  std::string error;  ///< "" when it ran
  std::exception_ptr thrown;  ///< what error came from, rethrown when no variant ran
};

// Runs `step` for `run`; bad input it meets (InputError, UsageError) becomes the run's error,
// and anything else (a bug) still stops the command.
template <typename Step>
void capture_error(VariantRun& run, Step step) {
  try {
    step();
  } catch (const InputError& e) {
    run.error = e.what();
    run.thrown = std::current_exception();
  } catch (const UsageError& e) {
    run.error = e.what();
    run.thrown = std::current_exception();
  }
}

std::vector<VariantRun> run_variants(const ScenarioSpec& scenario, const std::vector<Variant>& variants,
                                     const Workspace& ws, Batch& batch) {
  std::vector<VariantRun> runs(variants.size());
  // Every runner adds its platforms before the first run (study/batch.hpp).
  for (std::size_t i = 0; i < variants.size(); ++i) {
    VariantRun& r = runs[i];
    r.variant = variants[i];
    r.scenario = scenario;
    r.scenario.variants = {variants[i]};
    capture_error(r, [&] {
      r.runner = std::make_unique<ScenarioRunner>(r.scenario, ws.catalog(), topology_factory(ws), batch.platforms());
    });
  }
  for (VariantRun& r : runs)
    if (r.runner) capture_error(r, [&] { r.points = r.runner->run(); });
  return runs;
}

/// The topology a variant ran on, as topo diff compares it.
TopologyChoice variant_choice(const ScenarioSpec& scenario, const Variant& v) {
  ScaleOut scale;
  if (scenario.gpus.empty() && !scenario.nodes.empty()) scale.nodes = scenario.nodes.front();
  scale.nic = v.nic;
  scale.nics_per_node = v.nics_per_node;
  return {v.topology.empty() ? scenario.topology : v.topology, scale, v.gpu, v.name};
}

/// csv and json: scenario_table's rows, then a row per variant that failed, with its error.
Table rows_table(const std::vector<VariantRun>& runs, const std::string& topology, Format format) {
  std::vector<ScenarioPoint> points;
  for (const VariantRun& r : runs) points.insert(points.end(), r.points.begin(), r.points.end());
  const Table ran = scenario_table(points, format);
  std::vector<Column> columns = ran.columns();
  columns.push_back({"error"});
  Table table(columns);
  // Absent: null in JSON, an empty field in CSV.
  const Cell none = format == Format::json ? Cell(std::numeric_limits<double>::quiet_NaN()) : Cell(std::string());
  for (const auto& row : ran.rows()) {
    std::vector<Cell> cells = row;
    cells.push_back(none);
    table.add_row(cells);
  }
  for (const VariantRun& r : runs) {
    if (r.error.empty()) continue;
    std::vector<Cell> cells(columns.size(), none);
    cells[0] = r.variant.name;
    cells[1] = r.variant.topology.empty() ? topology : r.variant.topology;
    if (!r.variant.gpu.empty()) cells[2] = r.variant.gpu;  // else the topology's own, unknown: it did not build
    cells.back() = r.error;
    table.add_row(cells);
  }
  return table;
}

/// The table of throughputs: a column per variant that ran, each with its ratio to the first
/// that ran, above it the variants and what sets each apart from that first one.
std::string compare_text(const ScenarioSpec& scenario, const std::vector<VariantRun>& runs, const Workspace& ws) {
  const bool by_nodes = scenario.gpus.empty();
  const VariantRun* first = nullptr;
  std::vector<Column> columns = {{by_nodes ? "nodes" : "gpus"}};
  std::map<int, std::vector<const ScenarioPoint*>> by_count;
  for (const VariantRun& r : runs) {
    if (!r.error.empty()) continue;
    columns.push_back({r.variant.name, 1});
    if (first) columns.push_back({"ratio", 3});
    else first = &r;
    for (const ScenarioPoint& p : r.points) by_count[p.count].push_back(&p);
  }
  Table table(columns);
  for (const auto& [count, row_points] : by_count) {
    std::vector<Cell> row = {static_cast<long long>(count)};
    double base = row_points.front()->throughput;
    for (std::size_t i = 0; i < row_points.size(); ++i) {
      row.push_back(row_points[i]->throughput);
      if (i > 0) row.push_back(base > 0 ? row_points[i]->throughput / base : 0.0);
    }
    table.add_row(row);
  }
  const Network& net = ws.catalog().network(scenario.training.network, scenario.where.at("training").at("network"));
  std::string text = "# topsim compare: " + scenario.description + "\n# throughput in " + net.sample + "s/s per " +
                     (by_nodes ? "server count" : "GPU count") + "; ratio: against the first column\n";
  for (const VariantRun& r : runs) {
    if (!r.error.empty()) text += "# " + r.variant.name + ": failed: " + r.error + "\n";
    else text += "# " + r.variant.name + ": " + r.points.front().topology + ", " + r.points.front().gpu + "\n";
  }
  for (const VariantRun& r : runs)
    if (first && &r != first && r.error.empty())
      text += topology_diff_text(
          diff_topologies(ws, variant_choice(scenario, first->variant), variant_choice(scenario, r.variant)), "# ");
  return text + table.to_text();
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
    const std::vector<Variant> variants = listed_variants(scenario, *args);
    const Workspace& ws = context.workspace();
    const Catalog& catalog = ws.catalog();
    const PriceTable prices = read_prices(args->prices, catalog);
    Batch batch;
    const std::vector<VariantRun> runs = run_variants(scenario, variants, ws, batch);
    std::vector<ScenarioPoint> points;
    std::string failed;
    for (const VariantRun& r : runs) {
      points.insert(points.end(), r.points.begin(), r.points.end());
      if (!r.error.empty()) failed += "error: variant " + r.variant.name + ": " + r.error + "\n";
    }
    // Nothing ran: the first variant's error, as when the scenario alone is run.
    for (const VariantRun& r : runs)
      if (points.empty() && r.thrown) std::rethrow_exception(r.thrown);
    if (format != Format::table) {
      context.out = (prices.empty() ? rows_table(runs, scenario.topology, format) : cost_table(points, catalog, prices)).render(format);
    } else {
      context.out = compare_text(scenario, runs, ws);
      if (!prices.empty()) {
        const Network& net = catalog.network(scenario.training.network, scenario.where.at("training").at("network"));
        context.out += "\n# per_W: throughput over the GPUs' TDP; per_usd: " + net.sample +
                       "s per US dollar at the hourly prices given\n" + cost_table(points, catalog, prices).to_text();
      }
    }
    // The variants that ran are printed; the exit status says that the comparison is not whole.
    if (!failed.empty()) throw ExitStatus(2, failed);
  });
}

}  // namespace topsim
