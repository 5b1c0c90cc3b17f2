#pragma once
// --price GPU=USD_PER_HOUR and --prices FILE: what one GPU costs per hour, for per-dollar figures.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/catalog.hpp"
#include "study/costs.hpp"

namespace topsim {

struct PriceArgs {
  std::vector<std::string> items;  ///< "a100=1.29" each (also comma-separated)
  std::string file;                ///< JSON {"prices": {"a100": 1.29, ...}} in USD per GPU-hour
};

void add_price_options(CLI::App& command, PriceArgs& args);

/// The file's prices, then the flags' (a flag overrides the file). UsageError (flags) or
/// InputError (file, at its JSON pointer) for an unknown GPU, a price not above zero or a
/// malformed item.
PriceTable read_prices(const PriceArgs& args, const Catalog& catalog);

}  // namespace topsim
