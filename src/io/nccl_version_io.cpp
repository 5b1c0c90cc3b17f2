// models/nccl_versions.json: NCCL release lines as data (see model/nccl_version.hpp).
#include <algorithm>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

const std::vector<std::string>& known_protocols() {
  static const std::vector<std::string> names = {"ll", "ll128", "simple"};
  return names;
}
const std::vector<std::string>& known_algorithms() {
  static const std::vector<std::string> names = {"ring", "tree", "collnet", "nvls", "nvls_tree", "pat"};
  return names;
}
const std::vector<std::string>& tuned_ops() {
  static const std::vector<std::string> names = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce"};
  return names;
}
const std::vector<std::string>& known_transports() {
  static const std::vector<std::string> names = {"nvlink", "pcie", "network"};
  return names;
}
// ncclTopoTuneModel's busBw refinements, each a named number in the file.
const std::vector<std::string>& known_factors() {
  static const std::vector<std::string> names = {
      "ring_ll",   "ring_ll_gather", "ring_ll128",          "ring_ll128_one_rank_per_node",
      "tree",      "tree_ll",        "tree_ll128_one_node", "tree_ll128",
      "tree_algbw", "nvls_algbw",    "net_overhead"};
  return names;
}

std::string name_in(const std::string& text, const std::vector<std::string>& valid, const std::string& what,
                    const SourceRef& where) {
  if (std::find(valid.begin(), valid.end(), text) == valid.end()) fail(where, unknown_name_message(what, text, valid));
  return text;
}

// Every key of the object under `key`, checked against `valid`, read by `read_one`.
template <typename ReadOne>
auto read_keyed(const Json& object, const SourceRef& where, const std::vector<std::string>& valid, const std::string& what,
                ReadOne read_one) {
  expect_object(object, where);
  std::map<std::string, decltype(read_one(object, where))> out;
  for (const auto& item : object.items()) {
    std::string key = name_in(item.key(), valid, what, where.at(item.key()));
    out[key] = read_one(item.value(), where.at(item.key()));
  }
  return out;
}

std::vector<std::string> read_names(const Json& array, const SourceRef& where, const std::vector<std::string>& valid,
                                    const std::string& what) {
  if (!array.is_array()) fail(where, "expected an array of " + what + " names, got " + describe(array));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < array.size(); ++i) names.push_back(name_in(read_string(array[i], where.at(i)), valid, what, where.at(i)));
  return names;
}

int read_count(const Json& value, const SourceRef& where) {
  if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > (1 << 24))
    fail(where, "expected a positive integer, got " + describe(value));
  return value.get<int>();
}

std::map<std::string, NcclPerNodes> read_per_nodes(ObjectReader& r, const std::string& key, bool required) {
  const Json* value = required ? &r.required(key) : r.optional(key);
  if (value == nullptr) return {};
  SourceRef where = r.at(key);
  expect_object(*value, where);
  std::map<std::string, NcclPerNodes> out;
  for (const auto& item : value->items()) {
    SourceRef at = where.at(item.key());
    if (!item.value().is_array() || item.value().size() != 3)
      fail(at, "expected three bandwidths (one node, two nodes, more), got " + describe(item.value()));
    NcclPerNodes v{};
    for (std::size_t i = 0; i < 3; ++i) v[i] = read_quantity(item.value()[i], at.at(i), Quantity::bandwidth);
    out[item.key()] = v;
  }
  return out;
}

}  // namespace

NcclVersion read_nccl_version(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<NcclVersion>(name, value, where, [](ObjectReader& r, NcclVersion& v, SourcedParameters& params) {
    auto key = [&](const std::string& k) -> const Json& {
      params.add(k);
      return r.required(k);
    };
    const Json& covers = key("covers");
    if (!covers.is_array() || covers.size() != 2)
      fail(r.at("covers"), "expected [first, last] release, e.g. [\"2.18\", \"2.20\"], got " + describe(covers));
    v.first = read_string(covers[0], r.at("covers").at(0));
    v.last = read_string(covers[1], r.at("covers").at(1));
    if (compare_versions(v.first, v.last) > 0) fail(r.at("covers"), "the first release comes after the last");
    v.tag = params.string(r, "tag");
    v.algorithms = read_keyed(key("algorithms"), r.at("algorithms"), tuned_ops(), "operation",
                              [](const Json& a, const SourceRef& at) { return read_names(a, at, known_algorithms(), "algorithm"); });
    v.protocols = read_names(key("protocols"), r.at("protocols"), known_protocols(), "protocol");
    v.ll128_architectures = read_names(key("ll128_architectures"), r.at("ll128_architectures"), known_architectures(), "architecture");
    v.architecture_rows = read_keyed(key("architecture_rows"), r.at("architecture_rows"), known_architectures(),
                                     "architecture", [](const Json& s, const SourceRef& at) { return read_string(s, at); });
    for (const std::string& arch : known_architectures())
      if (!v.architecture_rows.count(arch))
        fail(r.at("architecture_rows"), "no tuner row for architecture '" + arch + "'; every architecture needs one");
    v.max_channels = params.integer(r, "max_channels", 1, 64);
    v.nvls_channels = params.integer(r, "nvls_channels", 1, 64);
    v.max_threads = read_keyed(key("max_threads"), r.at("max_threads"), known_protocols(), "protocol", read_count);
    v.thread_threshold = read_keyed(key("thread_threshold"), r.at("thread_threshold"), known_protocols(), "protocol", read_count);
    for (const std::string& p : known_protocols())
      for (const auto* table : {&v.max_threads, &v.thread_threshold})
        if (!table->count(p))
          fail(r.at(table == &v.max_threads ? "max_threads" : "thread_threshold"),
               "no entry for protocol '" + p + "'; needed: ll, ll128, simple");
    {
      ObjectReader p(key("p2p"), r.at("p2p"));
      v.p2p_channels_per_peer = p.integer("channels_per_peer", 1, 64);
      v.p2p_chunk_nvlink_B = p.quantity("chunk_nvlink", Quantity::size);
      v.p2p_chunk_B = p.quantity("chunk", Quantity::size);
      v.p2p_ll_threshold_B = p.optional_quantity("ll_threshold", Quantity::size).value_or(0);  // absent: p2p runs Simple only
      p.finish();
    }
    v.nvlink_Bps = read_keyed(key("nvlink_bandwidth"), r.at("nvlink_bandwidth"), known_architectures(), "architecture",
                              [](const Json& q, const SourceRef& at) { return read_quantity(q, at, Quantity::bandwidth); });
    auto per_proto = [](const Json& o, const SourceRef& at) {
      return read_keyed(o, at, known_protocols(), "protocol",
                        [](const Json& q, const SourceRef& a) { return read_quantity(q, a, Quantity::time); });
    };
    auto per_algo = [&](const Json& o, const SourceRef& at) { return read_keyed(o, at, known_algorithms(), "algorithm", per_proto); };
    v.base_latency_s = per_algo(key("base_latency"), r.at("base_latency"));
    v.hw_latency_s = read_keyed(key("hw_latency"), r.at("hw_latency"), known_transports(), "transport", per_algo);
    for (const std::string& t : known_transports())
      if (!v.hw_latency_s.count(t)) fail(r.at("hw_latency"), "no hop latencies for transport '" + t + "'");
    params.add("ll_max_bandwidth");
    v.ll_max_Bps = read_per_nodes(r, "ll_max_bandwidth", true);
    for (const char* k : {"ring_ll128_channel_bandwidth", "tree_channel_bandwidth", "tree_ll128_channel_bandwidth"})
      if (r.has(k)) params.add(k);
    v.ring_ll128_channel_Bps = read_per_nodes(r, "ring_ll128_channel_bandwidth", false);
    v.tree_channel_Bps = read_per_nodes(r, "tree_channel_bandwidth", false);
    v.tree_ll128_channel_Bps = read_per_nodes(r, "tree_ll128_channel_bandwidth", false);
    // Every table row an architecture maps to must have its LL ceiling (the others are optional).
    for (const auto& [arch, row] : v.architecture_rows)
      if (!v.ll_max_Bps.count(row))
        fail(r.at("architecture_rows").at(arch), "tuner row '" + row + "' has no ll_max_bandwidth entry");
    v.factors = read_keyed(key("factors"), r.at("factors"), known_factors(), "factor",
                           [](const Json& n, const SourceRef& at) {
                             if (!n.is_number() || n.get<double>() <= 0) fail(at, "expected a positive number, got " + describe(n));
                             return n.get<double>();
                           });
    for (const std::string& f : known_factors())
      if (!v.factors.count(f)) fail(r.at("factors"), "no factor '" + f + "'; needed: " + join(known_factors(), ", "));
    if (r.has("tree_correction")) {
      v.tree_correction = read_keyed(key("tree_correction"), r.at("tree_correction"), known_protocols(), "protocol",
                                     [](const Json& a, const SourceRef& at) {
                                       if (!a.is_array() || a.size() != 23)
                                         fail(at, "expected 23 factors (log2(bytes / 64) = 0..22), got " + describe(a));
                                       std::vector<double> out;
                                       for (const auto& x : a) {
                                         if (!x.is_number()) fail(at, "expected numbers, got " + describe(x));
                                         out.push_back(x.get<double>());
                                       }
                                       return out;
                                     });
    }
    if (r.has("ring_plateau"))
      v.ring_plateau = read_keyed(key("ring_plateau"), r.at("ring_plateau"), {"volta", "ampere", "hopper", "blackwell"},
                                  "tuner row", [](const Json& n, const SourceRef& at) {
                                    if (!n.is_number()) fail(at, "expected a number, got " + describe(n));
                                    return n.get<double>();
                                  });
    if (r.has("graph_search")) v.graph = read_nccl_graph_data(key("graph_search"), r.at("graph_search"));
    v.chain_simple_hop = name_in(params.string(r, "chain_simple_hop"), {"ring", "tree"}, "chain_simple_hop",
                                 r.at("chain_simple_hop"));
  });
}

}  // namespace topsim
