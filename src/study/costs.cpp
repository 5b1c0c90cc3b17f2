#include "study/costs.hpp"

namespace topsim {

namespace {
constexpr double kSecondsPerHour = 3600;
}

CostFigures cost_figures(const Catalog& catalog, const PriceTable& prices, const std::string& gpu, double gpus,
                         double throughput) {
  const std::string board = gpu.substr(0, gpu.find('/'));
  CostFigures c;
  auto model = catalog.gpus().find(board);
  if (model != catalog.gpus().end() && model->second.tdp_W > 0) c.per_W = throughput / (gpus * model->second.tdp_W);
  auto price = prices.find(board);
  if (price != prices.end()) c.per_usd = throughput * kSecondsPerHour / (gpus * price->second);
  return c;
}

}  // namespace topsim
