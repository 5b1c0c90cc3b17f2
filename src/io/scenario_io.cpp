// Training scenarios (scenarios/*.json): a network trained data-parallel on a topology over a
// list of GPU or server counts, with variants side by side.
#include <algorithm>
#include <set>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

SparsitySwitches read_switches(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  SparsitySwitches s;
  if (r.has("math")) s.math = r.boolean("math");
  if (r.has("weights")) s.weights = r.boolean("weights");
  if (r.has("gradients")) s.gradients = r.boolean("gradients");
  r.finish();
  return s;
}

TrainingSpec read_training(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  TrainingSpec t;
  t.network = r.string("network");
  t.framework = r.string("framework");
  t.optimizer = r.string("optimizer");
  t.batch_per_gpu = r.number("batch_per_gpu", 0, 1e9, true);
  t.precision = r.optional_string("precision").value_or("amp");
  const std::vector<std::string> precisions = {"amp", "bf16", "tf32", "fp32"};
  if (std::find(precisions.begin(), precisions.end(), t.precision) == precisions.end())
    fail(r.at("precision"), unknown_name_message("precision", t.precision, precisions));
  t.gradient_dtype = r.optional_string("gradient_dtype");
  if (t.gradient_dtype) {
    const std::vector<std::string> valid = {"float", "half", "bfloat16"};
    if (std::find(valid.begin(), valid.end(), *t.gradient_dtype) == valid.end())
      fail(r.at("gradient_dtype"), unknown_name_message("gradient_dtype", *t.gradient_dtype, valid));
  }
  t.bucket_B = r.optional_quantity("bucket", Quantity::size);
  t.step_time_s = r.optional_quantity("step_time", Quantity::time);
  if (t.step_time_s && *t.step_time_s <= 0) fail(r.at("step_time"), "a measured step takes more than 0 s");
  t.tensor_parallel = r.optional_integer("tensor_parallel", 1, 1024).value_or(1);
  if (const Json* s = r.optional("sparsity")) t.sparsity = read_switches(*s, r.at("sparsity"));
  r.finish();
  return t;
}

Variant read_variant(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  Variant v;
  v.where = where;
  v.name = r.string("name");
  if (v.name.empty()) fail(r.at("name"), "a variant needs a non-empty name");
  v.topology = r.optional_string("topology").value_or("");
  v.gpu = r.optional_string("gpu").value_or("");
  v.nic = r.optional_string("nic").value_or("");
  v.nics_per_node = r.optional_integer("nics_per_node", 1, 64).value_or(0);
  if (const Json* s = r.optional("sparsity")) v.sparsity = read_switches(*s, r.at("sparsity"));
  v.batch_per_gpu = r.optional_number("batch_per_gpu", 0, 1e9, true);
  v.tensor_parallel = r.optional_integer("tensor_parallel", 1, 1024);
  r.finish();
  return v;
}

}  // namespace

bool is_trace_file(const std::string& path) { return file_has_top_key(path, "ops"); }

ScenarioSpec load_scenario(const std::string& path) { return parse_scenario(read_text_file(path), path); }

ScenarioSpec parse_scenario(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  ObjectReader r(document, SourceRef{path, ""});
  ScenarioSpec s;
  s.where = r.where();
  s.description = r.string("description");
  s.topology = r.string("topology");
  s.nccl = r.optional_string("nccl").value_or("");
  s.training = read_training(r.required("training"), r.at("training"));
  if (r.has("gpus") == r.has("nodes"))
    fail(r.where(), "a scenario gives either \"gpus\" (GPU counts in one server) or \"nodes\" (server counts), not " +
                        std::string(r.has("gpus") ? "both" : "neither"));
  if (r.has("gpus")) s.gpus = read_rising_counts(r, "gpus");
  else s.nodes = read_rising_counts(r, "nodes");
  if (r.has("variants")) {
    s.variants = read_array(r, "variants", read_variant);
    if (s.variants.empty()) fail(r.at("variants"), "expected at least one variant (or no \"variants\" key)");
    std::set<std::string> names;
    for (const Variant& v : s.variants)
      if (!names.insert(v.name).second) fail(v.where.at("name"), "variant name '" + v.name + "' is used twice");
  } else {
    Variant only;
    only.name = "baseline";
    only.where = r.where();
    s.variants.push_back(only);
  }
  const Json& sources = r.required("sources");
  expect_object(sources, r.at("sources"));
  if (sources.empty()) fail(r.at("sources"), "a scenario cites where its settings come from (at least one source)");
  for (const auto& item : sources.items()) s.sources[item.key()] = read_string(item.value(), r.at("sources").at(item.key()));
  r.finish();
  return s;
}

}  // namespace topsim
