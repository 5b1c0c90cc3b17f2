// models/networks.json: neural networks as layer lists (docs/formats.md, "networks").
#include <cmath>
#include <limits>
#include <map>

#include "io/model_reader.hpp"

namespace topsim {

namespace {

// The largest count accepted for params, elements and accesses: far above any real network,
// finite so that an overflowed or mistyped number is caught.
constexpr double kMaxCount = 1e18;

bool has_gemm(Layer::Kind kind) {
  return kind == Layer::Kind::conv || kind == Layer::Kind::linear || kind == Layer::Kind::matmul;
}

// The keys a layer of this kind takes, for messages that say what is valid.
std::string keys_of(Layer::Kind kind) {
  switch (kind) {
    case Layer::Kind::conv: return "name, kind, gemm, params, prunable";
    case Layer::Kind::linear: return "name, kind, gemm, params, prunable, tied, tp";
    case Layer::Kind::matmul: return "name, kind, gemm, batch, tp";
    case Layer::Kind::elementwise: return "name, kind, elements, accesses, pointwise, params, tp";
    case Layer::Kind::embedding: return "name, kind, elements, params";
  }
  return "";
}

std::string kind_phrase(Layer::Kind kind) {
  std::string name = to_string(kind);
  return (name[0] == 'e' ? "an " : "a ") + name + " layer";
}

void forbid(ObjectReader& r, const std::string& key, Layer::Kind kind) {
  if (r.has(key))
    fail(r.at(key), "'" + key + "' does not apply to " + kind_phrase(kind) + " (its keys: " + keys_of(kind) + ")");
}

void require(ObjectReader& r, const std::string& key, Layer::Kind kind) {
  if (!r.has(key))
    fail(r.where(), "missing required key '" + key + "' (" + kind_phrase(kind) + " takes: " + keys_of(kind) + ")");
}

// A count that must be > 0 (elements, accesses, the params of a weighted layer).
double positive(ObjectReader& r, const std::string& key, const std::string& meaning) {
  double value = r.number(key, -kMaxCount, kMaxCount, false);
  if (!(value > 0)) fail(r.at(key), "must be > 0 (" + meaning + "), got " + shortest(value));
  return value;
}

// "gemm": [m, n, k], each a positive number: C[m x n] = A[m x k] B[k x n] for one sample.
void read_gemm(ObjectReader& r, Layer& layer) {
  const Json& value = r.required("gemm");
  SourceRef where = r.at("gemm");
  if (!value.is_array() || value.size() != 3)
    fail(where, "expected [m, n, k] (three positive numbers: the GEMM of one sample), got " + describe(value));
  double* dims[] = {&layer.gemm_m, &layer.gemm_n, &layer.gemm_k};
  for (std::size_t i = 0; i < 3; ++i) {
    const Json& dim = value[i];
    if (!dim.is_number() || !(dim.get<double>() > 0) || !std::isfinite(dim.get<double>()))
      fail(where.at(i), std::string("GEMM ") + "mnk"[i] + " must be a positive number, got " + describe(dim));
    *dims[i] = dim.get<double>();
  }
}

// One layer object; `earlier` maps the names of the layers before it to their pointers and kinds.
Layer read_layer(const Json& value, const SourceRef& where,
                 const std::map<std::string, std::pair<std::string, Layer::Kind>>& earlier) {
  ObjectReader r(value, where);
  Layer layer;
  layer.name = r.string("name");
  if (auto first = earlier.find(layer.name); first != earlier.end())
    fail(r.at("name"), "duplicate layer name '" + layer.name + "' (first used at " + first->second.first +
                           "); layer names are unique within a network");
  layer.kind = read_enum<Layer::Kind>(r, "kind",
                                      {{"conv", Layer::Kind::conv},
                                       {"linear", Layer::Kind::linear},
                                       {"matmul", Layer::Kind::matmul},
                                       {"elementwise", Layer::Kind::elementwise},
                                       {"embedding", Layer::Kind::embedding}});
  const Layer::Kind kind = layer.kind;
  const bool weighted = kind == Layer::Kind::conv || kind == Layer::Kind::linear;

  if (has_gemm(kind)) {
    require(r, "gemm", kind);
    read_gemm(r, layer);
  } else {
    forbid(r, "gemm", kind);
  }

  if (kind == Layer::Kind::matmul) {
    layer.batch = r.optional_integer("batch", 1, std::numeric_limits<int>::max()).value_or(1);
  } else {
    forbid(r, "batch", kind);
  }

  // A tied weight (a language-model head reusing the embedding table) is counted at its
  // embedding, so the linear layer's params are only its bias and may be 0.
  std::optional<std::string> tied;
  if (kind == Layer::Kind::linear) {
    tied = r.optional_string("tied");
    if (tied) {
      auto target = earlier.find(*tied);
      if (target == earlier.end() || target->second.second != Layer::Kind::embedding)
        fail(r.at("tied"), "'" + *tied + "' is not an embedding layer before this one; 'tied' names the embedding "
                           "whose table is this layer's weight");
    }
  } else {
    forbid(r, "tied", kind);
  }

  if (kind == Layer::Kind::matmul) {
    if (r.optional_number("params", 0, kMaxCount, false).value_or(0) != 0)
      fail(r.at("params"), "a matmul layer multiplies two activations and has no weights: params must be 0 or "
                           "absent (weights belong to conv and linear layers)");
  } else if (weighted && !tied) {
    require(r, "params", kind);
    layer.params = positive(r, "params", "weights plus biases; only a 'tied' linear layer may have none");
  } else {
    layer.params = r.optional_number("params", 0, kMaxCount, false).value_or(0);
  }

  if (kind == Layer::Kind::elementwise || kind == Layer::Kind::embedding) {
    require(r, "elements", kind);
    layer.elements = positive(r, "elements", "output elements of one sample");
  } else {
    forbid(r, "elements", kind);
  }

  if (kind == Layer::Kind::elementwise) {
    require(r, "accesses", kind);
    layer.accesses = positive(r, "accesses", "tensor-sized reads plus writes of the forward pass");
    if (r.optional("pointwise") != nullptr) layer.pointwise = r.boolean("pointwise");
  } else {
    forbid(r, "accesses", kind);
    forbid(r, "pointwise", kind);
  }

  if (weighted) {
    if (r.optional("prunable") != nullptr) layer.prunable = r.boolean("prunable");
  } else {
    forbid(r, "prunable", kind);
  }

  // Tensor parallelism: linear layers split their outputs (column) or inputs (row); attention
  // and activations between them split their work (split).
  if (auto tp = r.optional_string("tp")) {
    std::vector<std::string> valid;
    if (kind == Layer::Kind::linear) valid = {"column", "row"};
    else if (kind == Layer::Kind::matmul || kind == Layer::Kind::elementwise) valid = {"split"};
    else forbid(r, "tp", kind);
    if (std::find(valid.begin(), valid.end(), *tp) == valid.end())
      fail(r.at("tp"), unknown_name_message("tp", *tp, valid) + " (for " + kind_phrase(kind) + ")");
    layer.tp = *tp == "column" ? Layer::Split::column : *tp == "row" ? Layer::Split::row : Layer::Split::split;
  }
  r.finish();
  return layer;
}

}  // namespace

Network read_network(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<Network>(name, value, where, [](ObjectReader& r, Network& m, SourcedParameters& params) {
    m.sample = r.string("sample");
    // Layer name -> (its pointer, its kind): uniqueness and 'tied' references.
    std::map<std::string, std::pair<std::string, Layer::Kind>> seen;
    m.layers = read_array(r, "layers", [&](const Json& layer_value, const SourceRef& layer_where) {
      Layer layer = read_layer(layer_value, layer_where, seen);
      seen.emplace(layer.name, std::make_pair(layer_where.pointer, layer.kind));
      return layer;
    });
    if (m.layers.empty()) fail(r.at("layers"), "a network needs at least one layer, in forward order");
    // Every layer's shape and parameter count comes from one architecture description, cited
    // as a whole under "layers".
    params.add("layers");
  });
}

}  // namespace topsim
