// Buying comparisons (scenarios/*.json with an "inference" list): GPUs side by side on training
// scenarios and inference requests, with hourly prices.
#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

BuyingInference read_buying_inference(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  BuyingInference b;
  b.where = where;
  b.name = r.string("name");
  b.model = r.string("model");
  if (auto v = r.optional_string("precision")) b.precision = *v;
  if (auto v = r.optional_string("framework")) b.framework = *v;
  if (auto v = r.optional_string("scenario")) b.scenario = *v;
  b.seq = r.optional_integer("seq", 1, 1 << 20).value_or(0);
  b.batch = r.optional_integer("batch", 1, 1 << 20).value_or(0);
  r.finish();
  return b;
}

}  // namespace

bool is_buying_file(const std::string& path) { return file_has_top_key(path, "inference"); }

BuyingSpec load_buying(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  ObjectReader r(document, SourceRef{path, ""});
  BuyingSpec s;
  s.where = SourceRef{path, ""};
  s.description = r.string("description");
  s.gpus = read_array(r, "gpus", [](const Json& v, const SourceRef& at) { return read_string(v, at); });
  if (s.gpus.size() < 2) fail(r.at("gpus"), "a comparison needs two or more GPU models");
  s.topology = r.string("topology");
  const Json& prices = r.required("prices");
  SourceRef prices_at = r.at("prices");
  expect_object(prices, prices_at);
  ObjectReader p(prices, prices_at);
  for (const auto& item : prices.items()) s.prices[item.key()] = p.number(item.key(), 0, 1e9, true);
  s.price_note = r.string("price_note");
  s.training = read_array(r, "training", [](const Json& v, const SourceRef& at) { return read_string(v, at); });
  s.inference = read_array(r, "inference", read_buying_inference);
  r.finish();
  return s;
}

}  // namespace topsim
