#include "cli/price_options.hpp"

#include <cmath>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::vector<std::string> gpu_names(const Catalog& catalog) {
  std::vector<std::string> names;
  for (const auto& entry : catalog.gpus()) names.push_back(entry.first);
  return names;
}

}  // namespace

void add_price_options(CLI::App& command, PriceArgs& args) {
  command.add_option("--price", args.items, "GPU=USD_PER_HOUR, e.g. a100=1.29 (repeat or comma-separate)")
      ->delimiter(',');
  command.add_option("--prices", args.file, "JSON file {\"prices\": {\"a100\": 1.29, ...}} in USD per GPU-hour");
}

PriceTable read_prices(const PriceArgs& args, const Catalog& catalog) {
  PriceTable prices;
  if (!args.file.empty()) {
    Json document = parse_json_text(read_text_file(args.file), args.file);
    ObjectReader file(document, SourceRef{args.file, ""});
    file.optional_string("description");
    const Json& table = file.required("prices");
    SourceRef table_at = file.at("prices");
    expect_object(table, table_at);
    ObjectReader entries(table, table_at);
    for (const auto& item : table.items()) {
      if (!catalog.gpus().count(item.key()))
        fail(table_at.at(item.key()), unknown_name_message("GPU model", item.key(), gpu_names(catalog)));
      prices[item.key()] = entries.number(item.key(), 0, 1e9, true);  // US dollars per GPU-hour, above 0
    }
    file.finish();
  }
  for (const std::string& item : args.items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--price " + item + ": expected GPU=USD_PER_HOUR, e.g. a100=1.29");
    const std::string gpu = item.substr(0, eq);
    if (!catalog.gpus().count(gpu)) throw UsageError("--price: " + unknown_name_message("GPU model", gpu, gpu_names(catalog)));
    double usd = 0;
    try {
      std::size_t used = 0;
      usd = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) usd = -1;
    } catch (const std::exception&) {
      usd = -1;
    }
    if (!(usd > 0) || !std::isfinite(usd))
      throw UsageError("--price " + item + ": the price is US dollars per GPU-hour, a number above 0");
    prices[gpu] = usd;
  }
  return prices;
}

}  // namespace topsim
