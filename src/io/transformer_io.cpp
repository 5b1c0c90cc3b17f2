// models/transformers.json and user model files: transformers by shape (docs/llm.md).
#include <limits>
#include "io/io.hpp"
#include "io/model_reader.hpp"

namespace topsim {

namespace {

// Far above any published model, finite so that a mistyped number is caught.
constexpr int kMaxDimension = 1 << 24;
constexpr int kMaxLayers = 4096;
constexpr int kMaxExperts = 65536;

// "all", {"first_dense": N} or a list of 0-based layer indices.
std::vector<bool> read_moe_layers(ObjectReader& r, int layers) {
  std::vector<bool> moe(static_cast<std::size_t>(layers), true);
  const Json* value = r.optional("moe_layers");
  if (value == nullptr) return moe;
  SourceRef where = r.at("moe_layers");
  if (value->is_string() && value->get<std::string>() == "all") return moe;
  if (value->is_object()) {
    ObjectReader o(*value, where);
    int dense = o.integer("first_dense", 0, layers - 1);
    o.finish();
    for (int i = 0; i < dense; ++i) moe[static_cast<std::size_t>(i)] = false;
    return moe;
  }
  if (!value->is_array())
    fail(where, "expected \"all\", {\"first_dense\": N} or a list of 0-based layer indices, got " + describe(*value));
  std::fill(moe.begin(), moe.end(), false);
  for (std::size_t i = 0; i < value->size(); ++i) {
    const Json& index = (*value)[i];
    if (!index.is_number_integer() || index.get<long long>() < 0 || index.get<long long>() >= layers)
      fail(where.at(i), "a layer index in 0-" + std::to_string(layers - 1) + ", got " + describe(index));
    if (moe[index.get<std::size_t>()]) fail(where.at(i), "layer " + std::to_string(index.get<int>()) + " is listed twice");
    moe[index.get<std::size_t>()] = true;
  }
  if (value->empty()) fail(where, "an MoE model needs at least one MoE layer");
  return moe;
}

MoeSpec read_moe(const Json& value, const SourceRef& where, int layers) {
  ObjectReader r(value, where);
  MoeSpec moe;
  moe.experts = r.integer("experts", 1, kMaxExperts);
  moe.top_k = r.integer("top_k", 1, kMaxExperts);
  if (moe.top_k > moe.experts)
    fail(r.at("top_k"), "top_k " + std::to_string(moe.top_k) + " is more than the " + std::to_string(moe.experts) + " experts");
  moe.expert_ffn_hidden = r.integer("expert_ffn_hidden", 1, kMaxDimension);
  moe.shared_experts = r.optional_integer("shared_experts", 0, kMaxExperts).value_or(0);
  moe.moe_layer = read_moe_layers(r, layers);
  r.finish();
  return moe;
}

// The body every transformer object shares; `name` comes from the section key or the file.
// In a user's file (SourceRef::user_notes) "description" and "source" are optional; a missing
// source is a note. Bundled models cite where every shape comes from.
void read_body(ObjectReader& r, TransformerSpec& m) {
  const auto& notes = r.where().user_notes;
  m.description = notes ? r.optional_string("description").value_or("") : r.string("description");
  m.layers = r.integer("layers", 1, kMaxLayers);
  m.hidden = r.integer("hidden", 1, kMaxDimension);
  m.heads = r.integer("heads", 1, kMaxDimension);
  m.kv_heads = r.optional_integer("kv_heads", 1, kMaxDimension).value_or(m.heads);
  if (m.heads % m.kv_heads != 0)
    fail(r.at("kv_heads"), "heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads (" +
                               std::to_string(m.kv_heads) + "): each KV head serves a whole group of query heads");
  if (auto head_dim = r.optional_integer("head_dim", 1, kMaxDimension)) {
    m.head_dim = *head_dim;
  } else {
    if (m.hidden % m.heads != 0)
      fail(r.at("heads"), "hidden (" + std::to_string(m.hidden) + ") is not a multiple of heads (" +
                              std::to_string(m.heads) + "); give head_dim when heads are not hidden / heads wide");
    m.head_dim = m.hidden / m.heads;
  }
  m.ffn_hidden = r.integer("ffn_hidden", 1, kMaxDimension);
  m.ffn = read_enum<TransformerSpec::Ffn>(r, "ffn_type", {{"gelu", TransformerSpec::Ffn::gelu}, {"swiglu", TransformerSpec::Ffn::swiglu}});
  m.vocab = r.integer("vocab", 1, kMaxDimension);
  m.seq_len = r.integer("seq_len", 1, kMaxDimension);
  if (r.has("tied_embeddings")) m.tied_embeddings = r.boolean("tied_embeddings");
  if (r.has("encoder")) m.encoder = r.boolean("encoder");
  if (const Json* moe = r.optional("moe")) m.moe = read_moe(*moe, r.at("moe"), m.layers);
  if (notes && !r.has("source")) {
    notes->push_back(where_text(r.where()) + ": no \"source\"; the shape is used as given, uncited");
    return;
  }
  m.source = r.string("source");
  if (m.source.empty()) fail(r.at("source"), "every model cites where its shape comes from");
}

}  // namespace

TransformerSpec read_transformer(const std::string& name, const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  TransformerSpec m;
  m.name = name;
  m.where = where;
  read_body(r, m);
  r.finish();
  return m;
}

LlmLayout read_llm_layout(const Json& value, const SourceRef& where, const LlmLayout& base) {
  ObjectReader r(value, where);
  LlmLayout L = base;
  constexpr int kMax = 1 << 20;
  for (auto [key, field] : {std::pair{"tp", &L.tp}, {"pp", &L.pp}, {"vp", &L.vp}, {"cp", &L.cp}, {"ep", &L.ep}, {"dp", &L.dp},
                            {"micro_batch", &L.micro_batch}, {"global_batch", &L.global_batch}, {"seq_len", &L.seq_len}})
    if (auto v = r.optional_integer(key, 1, kMax)) *field = *v;
  // Uneven pipelines (docs/llm.md): layers on the first / last virtual stage, >= 1 when given.
  for (auto [key, field] : {std::pair{"first_stage_layers", &L.first_stage_layers}, {"last_stage_layers", &L.last_stage_layers}})
    if (auto v = r.optional_integer(key, 1, kMax)) *field = *v;
  if (auto zero = r.optional_integer("zero", 0, 3)) L.zero = *zero;
  if (auto etp = r.optional_integer("etp", 1, kMax)) L.etp = *etp;
  if (auto bucket = r.optional_integer("ddp_bucket_params", 1, std::numeric_limits<int>::max())) L.ddp_bucket_params = double(*bucket);
  if (r.has("fp8_recipe")) {
    L.fp8_recipe = r.string("fp8_recipe");
    if (L.fp8_recipe != "delayed" && L.fp8_recipe != "tensorwise" && L.fp8_recipe != "blockwise" && L.fp8_recipe != "mxfp8")
      fail(r.at("fp8_recipe"), unknown_name_message("fp8_recipe", L.fp8_recipe, {"delayed", "tensorwise", "blockwise", "mxfp8"}));
  }
  for (auto [key, field] : {std::pair{"sp", &L.sp}, {"fsdp", &L.fsdp}, {"overlap_grad_reduce", &L.overlap_grad_reduce},
                            {"overlap_param_gather", &L.overlap_param_gather}, {"tp_comm_overlap", &L.tp_comm_overlap},
                            {"allow_cross_server_tp", &L.allow_cross_server_tp},
                            {"grad_reduce_in_fp32", &L.grad_reduce_in_fp32},
                            {"grad_reduce_in_bf16", &L.grad_reduce_in_bf16}, {"align_grad_reduce", &L.align_grad_reduce},
                            {"align_param_gather", &L.align_param_gather},
                            {"account_for_embedding", &L.account_for_embedding}, {"account_for_loss", &L.account_for_loss}})
    if (r.has(key)) *field = r.boolean(key);
  if (r.has("recompute"))
    L.recompute = read_enum<Recompute>(r, "recompute", {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}});
  if (r.has("attention")) L.attention = read_enum<Attention>(r, "attention", {{"flash", Attention::flash}, {"unfused", Attention::unfused}});
  if (r.has("precision")) {
    L.precision = r.string("precision");
    if (L.precision != "bf16" && L.precision != "fp16" && L.precision != "fp8")
      fail(r.at("precision"), unknown_name_message("precision", L.precision, {"bf16", "fp16", "fp8"}));
  }
  r.finish();
  return L;
}

TransformerSpec parse_transformer(const std::string& text, const std::string& path,
                                  std::shared_ptr<std::vector<std::string>> user_notes) {
  Json document = parse_json_text(text, path);
  SourceRef where{path, "", std::move(user_notes)};
  ObjectReader r(document, where);
  TransformerSpec m;
  m.name = r.string("name");
  if (m.name.empty()) fail(r.at("name"), "a model needs a name");
  m.where = where;
  read_body(r, m);
  r.finish();
  return m;
}

TransformerSpec load_transformer(const std::string& path, std::shared_ptr<std::vector<std::string>> user_notes) {
  return parse_transformer(read_text_file(path), path, std::move(user_notes));
}

SequenceLengths parse_sequence_lengths(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  SourceRef where{path, ""};
  ObjectReader r(document, where);
  SequenceLengths d;
  d.where = where;
  d.description = r.string("description");
  d.source = r.string("source");
  if (d.source.empty()) fail(r.at("source"), "say where the lengths come from (a count of the data set, or how they were derived)");
  d.lengths = read_array(r, "lengths", [](const Json& v, const SourceRef& at) {
    if (!v.is_array() || v.size() != 2)
      fail(at, "expected [tokens, samples]: a length of at least 1 token and how many samples have it, got " + describe(v));
    if (!v[0].is_number_integer() || v[0].get<long long>() < 1 || v[0].get<long long>() > (1 << 20))
      fail(at.at(std::size_t{0}), "expected a length in tokens, an integer from 1 to 1048576, got " + describe(v[0]));
    if (!v[1].is_number() || !(v[1].get<double>() > 0))
      fail(at.at(std::size_t{1}), "expected a sample count greater than 0, got " + describe(v[1]));
    return std::make_pair(static_cast<int>(v[0].get<long long>()), v[1].get<double>());
  });
  if (d.lengths.empty()) fail(r.at("lengths"), "expected at least one [tokens, samples] pair");
  for (std::size_t i = 0; i < d.lengths.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (d.lengths[j].first == d.lengths[i].first)
        fail(r.at("lengths").at(i), "length " + std::to_string(d.lengths[i].first) + " already appears at /lengths/" +
                                        std::to_string(j) + ": give each length once, with its total count");
  r.finish();
  return d;
}

SequenceLengths load_sequence_lengths(const std::string& path) {
  return parse_sequence_lengths(read_text_file(path), path);
}

LlmScenarioSpec parse_llm_scenario(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  SourceRef where{path, ""};
  ObjectReader r(document, where);
  LlmScenarioSpec s;
  s.where = where;
  s.description = r.string("description");
  s.model = r.string("model");
  s.topology = r.string("topology");
  s.nodes = read_rising_counts(r, "nodes");
  LlmLayout base = read_llm_layout(r.required("layout"), r.at("layout"));
  s.sources = r.string("sources");
  if (const Json* variants = r.optional("variants")) {
    SourceRef at = r.at("variants");
    if (!variants->is_array() || variants->empty()) fail(at, "expected a non-empty array of variants");
    for (std::size_t i = 0; i < variants->size(); ++i) {
      ObjectReader v((*variants)[i], at.at(i));
      LlmVariant variant;
      variant.name = v.string("name");
      for (const LlmVariant& earlier : s.variants)
        if (earlier.name == variant.name) fail(v.at("name"), "duplicate variant name '" + variant.name + "'");
      variant.topology = v.optional_string("topology").value_or("");
      variant.gpu = v.optional_string("gpu").value_or("");
      variant.nic = v.optional_string("nic").value_or("");
      variant.nics_per_node = v.optional_integer("nics_per_node", 1, 64).value_or(0);
      variant.layout = v.has("layout") ? read_llm_layout(v.required("layout"), v.at("layout"), base) : base;
      v.finish();
      s.variants.push_back(variant);
    }
  } else {
    s.variants.push_back(LlmVariant{"", "", "", "", 0, base});
  }
  r.finish();
  return s;
}

bool is_llm_scenario_file(const std::string& path) { return file_has_top_key(path, "model"); }

LlmScenarioSpec load_llm_scenario(const std::string& path) { return parse_llm_scenario(read_text_file(path), path); }

}  // namespace topsim
