#include "study/buying.hpp"

#include <stdexcept>

#include "infer/inference.hpp"
#include "io/io.hpp"
#include "study/batch.hpp"
#include "study/scenarios.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

std::vector<BuyingRow> training_rows(const BuyingSpec& spec, const std::string& name, const Workspace& ws,
                                     const PriceTable& prices) {
  ScenarioSpec scenario = load_scenario(ws.scenario_path(name));
  scenario.gpus = {1};
  scenario.nodes.clear();
  const Variant base = scenario.variants.front();
  scenario.variants.clear();
  for (const std::string& gpu : spec.gpus) {
    Variant v = base;
    v.name = gpu;
    v.topology = spec.topology;
    v.gpu = gpu;
    scenario.variants.push_back(v);
  }
  Batch batch;
  const std::vector<ScenarioPoint> points = run_scenario_points(scenario, ws, batch);
  const Network& network = ws.catalog().network(scenario.training.network, scenario.where);
  std::vector<BuyingRow> rows;
  for (const ScenarioPoint& p : points) {
    BuyingRow row;
    row.workload = "train " + name;
    row.gpu = p.variant;
    row.throughput = p.throughput;
    row.unit = network.sample + "s/s";
    row.fits = p.memory_B <= p.capacity_B;
    row.cost = cost_figures(ws.catalog(), prices, p.variant, p.gpus, p.throughput);
    rows.push_back(row);
  }
  return rows;
}

std::vector<BuyingRow> inference_rows(const BuyingSpec& spec, const BuyingInference& b, const Workspace& ws,
                                      const PriceTable& prices) {
  InferenceRequest request;
  request.model = b.model;
  request.framework = b.framework;
  request.shape.precision = b.precision;
  request.shape.seq = b.seq;
  request.shape.batch = b.batch;
  std::vector<BuyingRow> rows;
  try {
    request.scenario = parse_serving_scenario(b.scenario);
    for (const std::string& gpu : spec.gpus) {
      const InferenceResult r = serve(ws.catalog(), ws.catalog().gpu(gpu, spec.where.at("gpus")), request, {});
      BuyingRow row;
      row.workload = b.name;
      row.gpu = gpu;
      row.throughput = r.throughput;
      row.unit = r.unit;
      row.fits = r.fits;
      row.cost = cost_figures(ws.catalog(), prices, gpu, 1, r.throughput);
      rows.push_back(row);
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(b.where.file, b.where.pointer, e.what());
  }
  return rows;
}

}  // namespace

std::vector<BuyingRow> run_buying(const BuyingSpec& spec, const Workspace& workspace, const PriceTable& prices) {
  std::vector<BuyingRow> rows;
  for (const std::string& name : spec.training) {
    std::vector<BuyingRow> more = training_rows(spec, name, workspace, prices);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  for (const BuyingInference& b : spec.inference) {
    std::vector<BuyingRow> more = inference_rows(spec, b, workspace, prices);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  // Rows come in blocks of one workload, the first GPU first.
  const std::size_t per_workload = spec.gpus.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double first = rows[i - i % per_workload].throughput;
    rows[i].vs_first = first > 0 ? rows[i].throughput / first : 0;
  }
  return rows;
}

}  // namespace topsim
