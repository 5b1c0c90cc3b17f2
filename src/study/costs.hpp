#pragma once
// What a throughput costs: per watt of the boards' TDP and per US dollar at an hourly price per
// GPU. One definition for every command that prices results (infer, compare).
#include <map>
#include <optional>
#include <string>

#include "model/catalog.hpp"

namespace topsim {

/// US dollars per GPU-hour by GPU model name (--price, --prices).
using PriceTable = std::map<std::string, double>;

struct CostFigures {
  std::optional<double> per_W;    ///< throughput / (gpus x TDP): samples (tokens) per joule; none without a TDP
  std::optional<double> per_usd;  ///< throughput x 3600 / (gpus x price): samples per dollar; none without a price
};

/// `throughput` (per second) of `gpus` boards of GPU model `gpu` ("a100-80gb/1g.10gb" is priced
/// and powered as its board).
CostFigures cost_figures(const Catalog& catalog, const PriceTable& prices, const std::string& gpu, double gpus,
                         double throughput);

}  // namespace topsim
