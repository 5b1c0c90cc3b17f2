#pragma once
// Internal to io: what every model reader of models/*.json shares. Each model cites a source for
// every parameter it sets; read_model() wraps a model-specific body with that check.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "io/json_reader.hpp"
#include "io/provenance_io.hpp"
#include "model/catalog.hpp"
#include "util/text.hpp"

namespace topsim {

// Each model lists the parameters it set (dotted paths such as "memory.bandwidth"); its
// "sources" object must cite every one of them, by the same path or by a parent ("memory"),
// and may not cite parameters that do not exist. A number without a source is a defect.
/// "file:/pointer", as error messages name a place.
inline std::string where_text(const SourceRef& where) {
  return where.pointer.empty() ? where.file : where.file + ":" + where.pointer;
}

class SourcedParameters {
 public:
  /// While alive, parameters are registered under "prefix." (e.g. "copy.write_latency").
  class Prefix {
   public:
    Prefix(SourcedParameters& params, const std::string& prefix) : params_(params), saved_(params.prefix_) {
      params_.prefix_ = prefix + ".";
    }
    ~Prefix() { params_.prefix_ = saved_; }
    Prefix(const Prefix&) = delete;
    Prefix& operator=(const Prefix&) = delete;

   private:
    SourcedParameters& params_;
    std::string saved_;
  };

  void add(const std::string& key) { paths_.push_back(prefix_ + key); }

  // Read a parameter and register it in one step.
  double quantity(ObjectReader& r, const std::string& key, Quantity kind) {
    add(key);
    return r.quantity(key, kind);
  }
  std::optional<double> optional_quantity(ObjectReader& r, const std::string& key, Quantity kind) {
    auto value = r.optional_quantity(key, kind);
    if (value) add(key);
    return value;
  }
  int integer(ObjectReader& r, const std::string& key, int min, int max) {
    add(key);
    return r.integer(key, min, max);
  }
  std::string string(ObjectReader& r, const std::string& key) {
    add(key);
    return r.string(key);
  }

  /// In a user's own models (SourceRef::user_notes) "sources" may be absent and may leave
  /// parameters uncited: each such model gets one note instead of an error. A source naming
  /// what is not a parameter stays an error everywhere (a typo).
  Sources read(ObjectReader& reader) const {
    const auto& notes = reader.where().user_notes;
    if (notes && !reader.has("sources")) {
      notes->push_back(where_text(reader.where()) + ": no \"sources\"; its figures are used as given, uncited");
      return {};
    }
    const Json& value = reader.required("sources");
    SourceRef where = reader.at("sources");
    expect_object(value, where);
    Sources sources;
    for (const auto& item : value.items())
      sources[item.key()] = provenance_text(read_provenance(item.value(), where.at(item.key())));
    // A named copy of the key: C++17 lambdas cannot capture a structured binding (clang rejects it).
    for (const auto& source : sources) {
      const std::string& key = source.first;
      bool names_parameter = std::any_of(paths_.begin(), paths_.end(), [&](const std::string& path) {
        return path == key || path.rfind(key + ".", 0) == 0;
      });
      if (!names_parameter)
        fail(where.at(key), "source given for '" + key + "', which is not a parameter of this model; parameters: " +
                                join(paths_, ", "));
    }
    std::vector<std::string> uncited;
    for (const auto& path : paths_) {
      bool cited = false;
      for (std::string prefix = path;; prefix = prefix.substr(0, prefix.rfind('.'))) {
        if (sources.count(prefix) != 0) cited = true;
        if (cited || prefix.find('.') == std::string::npos) break;
      }
      if (cited) continue;
      if (!notes) fail(where, "no source for parameter '" + path + "'; every number in models/ says where it came from");
      uncited.push_back(path);
    }
    if (!uncited.empty()) notes->push_back(where_text(where) + ": no source for " + join(uncited, ", ") + "; used as given, uncited");
    return sources;
  }

 private:
  std::vector<std::string> paths_;
  std::string prefix_;
};

template <typename Enum>
Enum read_enum(ObjectReader& reader, const std::string& key, const std::vector<std::pair<std::string, Enum>>& names) {
  std::string text = reader.string(key);
  std::vector<std::string> valid;
  for (const auto& [name, value] : names) {
    if (name == text) return value;
    valid.push_back(name);
  }
  fail(reader.at(key), unknown_name_message(key, text, valid));
}

// Reads what every model has (name, place, description, cited sources) around the
// model-specific body, which registers each parameter it reads with `params`.
template <typename Model, typename Body>
Model read_model(const std::string& name, const Json& value, const SourceRef& where, Body body) {
  ObjectReader r(value, where);
  Model m;
  m.name = name;
  m.where = where;
  // A user's own model may leave out what it is; bundled ones say it.
  m.description = where.user_notes ? r.optional_string("description").value_or("") : r.string("description");
  SourcedParameters params;
  body(r, m, params);
  m.sources = params.read(r);
  r.finish();
  return m;
}


/// Readers of the sections of models/*.json that live in their own files (one model each).
ComputeModel read_compute(const std::string& name, const Json& value, const SourceRef& where);
Network read_network(const std::string& name, const Json& value, const SourceRef& where);
TransformerSpec read_transformer(const std::string& name, const Json& value, const SourceRef& where);
/// models/megatron.json's "megatron_arguments" (io/megatron_args_io.cpp).
MegatronArgumentTable read_megatron_arguments(const Json& value, const SourceRef& where);
/// A training layout object (validation rows, LLM scenarios): the keys of LlmLayout by their
/// snake_case names; absent ones keep LlmLayout's defaults.
LlmLayout read_llm_layout(const Json& value, const SourceRef& where, const LlmLayout& base = {});
FrameworkModel read_framework(const std::string& name, const Json& value, const SourceRef& where);
InferenceFrameworkModel read_inference_framework(const std::string& name, const Json& value, const SourceRef& where);
LatencyBound read_latency_bound(const std::string& name, const Json& value, const SourceRef& where);
OptimizerModel read_optimizer(const std::string& name, const Json& value, const SourceRef& where);
ShardingModel read_sharding(const std::string& name, const Json& value, const SourceRef& where);
NcclVersion read_nccl_version(const std::string& name, const Json& value, const SourceRef& where);
/// The "graph_search" object of a release line (io/nccl_graph_io.cpp).
NcclGraphData read_nccl_graph_data(const Json& value, const SourceRef& where);

/// The GPU architectures topsim knows, in generation order.
const std::vector<std::string>& known_architectures();

}  // namespace topsim
