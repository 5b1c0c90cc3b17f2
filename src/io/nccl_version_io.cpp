// models/nccl_versions.json: NCCL release lines as data (see model/nccl_version.hpp).
#include <algorithm>
#include <regex>
#include <utility>

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
// ncclTopoTuneModel's busBw refinements, each a named number in the file: those every line has,
// then those only some lines have (NVLS from 2.18, PAT from 2.26, the network overhead from 2.18).
const std::vector<std::string>& required_factors() {
  static const std::vector<std::string> names = {
      "ring_ll", "ring_ll_gather", "ring_ll128", "ring_ll128_one_rank_per_node", "tree",
      "tree_ll", "tree_ll128_one_node", "tree_ll128", "tree_algbw"};
  return names;
}
const std::vector<std::string>& known_factors() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = required_factors();
    for (const char* f : {"nvls_algbw", "nvls_ring_algbw", "nvls_tree_algbw", "net_overhead", "net_flush_below_cc", "pat", "pat_inter_divisor", "pat_per_rank_latency_us"})
      all.push_back(f);
    return all;
  }();
  return names;
}

// A citation: path:line@tag or path:first-last@tag, the path relative to the tag's tree.
bool is_citation(const std::string& text, const std::string& tag) {
  static const std::regex form(R"(^[A-Za-z0-9_./-]+:([0-9]+)(-([0-9]+))?@(v[0-9]+\.[0-9]+\.[0-9]+-[0-9]+)$)");
  std::smatch m;
  if (!std::regex_match(text, m, form) || m[4] != tag) return false;
  return !m[3].matched || std::stol(m[3]) >= std::stol(m[1]);
}

// Every leaf of a line (a number, a name, an array: one table row) as a dotted path, so that the
// "sources" must cite each one by its path or a parent's.
void leaf_paths(const Json& value, const std::string& path, std::vector<std::string>& out) {
  if (!value.is_object()) {
    out.push_back(path);
    return;
  }
  for (const auto& item : value.items()) leaf_paths(item.value(), path.empty() ? item.key() : path + "." + item.key(), out);
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

double read_positive(const Json& n, const SourceRef& at) {
  if (!n.is_number() || n.get<double>() <= 0) fail(at, "expected a positive number, got " + describe(n));
  return n.get<double>();
}

}  // namespace

NcclVersion read_nccl_version(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<NcclVersion>(name, value, where, [&](ObjectReader& r, NcclVersion& v, SourcedParameters& params) {
    v.tag = r.string("tag");
    // The citation rule: every leaf below is cited path:line@tag (docs/nccl.md), by its own
    // dotted path or a parent's; SourcedParameters checks the coverage, this the form.
    {
      std::vector<std::string> leaves;
      for (const auto& item : value.items())
        if (item.key() != "description" && item.key() != "tag" && item.key() != "sources") leaf_paths(item.value(), item.key(), leaves);
      for (const std::string& leaf : leaves) params.add(leaf);
      const Json& sources = r.required("sources");
      expect_object(sources, r.at("sources"));
      for (const auto& item : sources.items())
        if (!item.value().is_string() || !is_citation(item.value().get<std::string>(), v.tag))
          fail(r.at("sources").at(item.key()),
               "expected a citation of NCCL's source, path:line@" + v.tag + " or path:first-last@" + v.tag +
                   " (e.g. \"src/graph/tuning.cc:88@" + v.tag + "\"), got " + describe(item.value()));
    }
    v.algorithms = read_keyed(r.required("algorithms"), r.at("algorithms"), tuned_ops(), "operation",
                              [](const Json& a, const SourceRef& at) { return read_names(a, at, known_algorithms(), "algorithm"); });
    v.protocols = read_names(r.required("protocols"), r.at("protocols"), known_protocols(), "protocol");
    v.ll128_architectures = read_names(r.required("ll128_architectures"), r.at("ll128_architectures"), known_architectures(), "architecture");
    v.architecture_rows = read_keyed(r.required("architecture_rows"), r.at("architecture_rows"), known_architectures(),
                                     "architecture", [](const Json& s, const SourceRef& at) { return read_string(s, at); });
    for (const std::string& arch : known_architectures())
      if (!v.architecture_rows.count(arch))
        fail(r.at("architecture_rows"), "no tuner row for architecture '" + arch + "'; every architecture needs one");
    v.max_channels = r.integer("max_channels", 1, 64);
    if (r.has("nvls_channels")) {
      std::vector<std::string> keys = {"default"};
      for (const std::string& a : known_architectures()) {
        keys.push_back(a);
        keys.push_back(a + "_one_node");
      }
      v.nvls_channels = read_keyed(r.required("nvls_channels"), r.at("nvls_channels"), keys, "architecture", read_count);
    }
    v.max_threads = read_keyed(r.required("max_threads"), r.at("max_threads"), known_protocols(), "protocol", read_count);
    v.thread_threshold = read_keyed(r.required("thread_threshold"), r.at("thread_threshold"), known_protocols(), "protocol", read_count);
    for (const std::string& p : known_protocols())
      for (const auto* table : {&v.max_threads, &v.thread_threshold})
        if (!table->count(p))
          fail(r.at(table == &v.max_threads ? "max_threads" : "thread_threshold"),
               "no entry for protocol '" + p + "'; needed: ll, ll128, simple");
    if (const Json* p2p = r.optional("p2p")) {  // absent: the line has no send/receive of its own (NCCL 2.5)
      ObjectReader p(*p2p, r.at("p2p"));
      v.p2p_channels_per_peer = p.integer("channels_per_peer", 1, 64);
      v.p2p_chunk_nvlink_B = p.optional_quantity("chunk_nvlink", Quantity::size).value_or(0);
      v.p2p_chunk_B = p.optional_quantity("chunk", Quantity::size).value_or(0);
      v.p2p_ll_threshold_B = p.optional_quantity("ll_threshold", Quantity::size).value_or(0);  // absent: p2p runs Simple only
      v.p2p_chunk_net_B = p.optional_quantity("chunk_net", Quantity::size).value_or(0);
      // absent: the line's split of an operation over channels is not transcribed (NCCL 2.12)
      for (auto [key, out] : {std::pair{"part_min_divisor", &v.p2p_part_min_divisor}, std::pair{"part_max_steps", &v.p2p_part_max_steps}})
        if (const Json* split = p.optional(key)) {
          ObjectReader s(*split, p.at(key));
          (*out)[0] = s.number("one_node", 0, 1024, true);
          (*out)[1] = s.number("nodes", 0, 1024, true);
          s.finish();
        }
      if (auto scale = p.optional_string("ll_threshold_scale")) {
        if (*scale != "none" && *scale != "peer_channels" && *scale != "op_channels")
          fail(p.at("ll_threshold_scale"), "'" + *scale + "' is not a threshold scale; valid: none, peer_channels, op_channels");
        v.p2p_ll_threshold_scale = *scale;
      }
      if (p.has("ll_over_network")) v.p2p_ll_over_network = p.boolean("ll_over_network");
      p.finish();
    }
    v.nvlink_Bps = read_keyed(r.required("nvlink_bandwidth"), r.at("nvlink_bandwidth"), known_architectures(), "architecture",
                              [](const Json& q, const SourceRef& at) { return read_quantity(q, at, Quantity::bandwidth); });
    auto per_proto = [](const Json& o, const SourceRef& at) {
      return read_keyed(o, at, known_protocols(), "protocol",
                        [](const Json& q, const SourceRef& a) { return read_quantity(q, a, Quantity::time); });
    };
    auto per_algo = [&](const Json& o, const SourceRef& at) { return read_keyed(o, at, known_algorithms(), "algorithm", per_proto); };
    v.base_latency_s = per_algo(r.required("base_latency"), r.at("base_latency"));
    v.hw_latency_s = read_keyed(r.required("hw_latency"), r.at("hw_latency"), known_transports(), "transport", per_algo);
    for (const std::string& t : known_transports())
      if (!v.hw_latency_s.count(t)) fail(r.at("hw_latency"), "no hop latencies for transport '" + t + "'");
    v.ll_max_Bps = read_per_nodes(r, "ll_max_bandwidth", false);  // absent: no LL ceiling (NCCL 2.5)
    v.ring_ll128_channel_Bps = read_per_nodes(r, "ring_ll128_channel_bandwidth", false);
    v.tree_channel_Bps = read_per_nodes(r, "tree_channel_bandwidth", false);
    v.tree_ll128_channel_Bps = read_per_nodes(r, "tree_ll128_channel_bandwidth", false);
    // Every table row an architecture maps to must have its LL ceiling when the line has one.
    if (!v.ll_max_Bps.empty())
      for (const auto& [arch, row] : v.architecture_rows)
        if (!v.ll_max_Bps.count(row))
          fail(r.at("architecture_rows").at(arch), "tuner row '" + row + "' has no ll_max_bandwidth entry");
    v.factors = read_keyed(r.required("factors"), r.at("factors"), known_factors(), "factor", read_positive);
    for (const std::string& f : required_factors())
      if (!v.factors.count(f)) fail(r.at("factors"), "no factor '" + f + "'; needed: " + join(required_factors(), ", "));
    for (const auto& [op, algos] : v.algorithms)
      for (const auto& [algo, factor] : {std::pair<std::string, std::string>{"nvls", "nvls_algbw"}, {"pat", "pat"}})
        if (std::find(algos.begin(), algos.end(), algo) != algos.end() && !v.factors.count(factor) &&
            !(algo == "nvls" && v.factors.count("nvls_ring_algbw")))
          fail(r.at("factors"), "no factor '" + factor + "', needed because " + op + " offers " + algo);
    if (r.has("tree_correction")) {
      v.tree_correction = read_keyed(r.required("tree_correction"), r.at("tree_correction"), known_protocols(), "protocol",
                                     [](const Json& a, const SourceRef& at) {
                                       // 23 sizes, 64 B .. 256 MiB; NCCL 2.30 has 24
                                       if (!a.is_array() || a.size() < 23 || a.size() > 24)
                                         fail(at, "expected 23 or 24 factors (log2(bytes / 64) = 0..), got " + describe(a));
                                       std::vector<double> out;
                                       for (const auto& x : a) {
                                         if (!x.is_number()) fail(at, "expected numbers, got " + describe(x));
                                         out.push_back(x.get<double>());
                                       }
                                       return out;
                                     });
    }
    if (r.has("ring_plateau"))
      v.ring_plateau = read_keyed(r.required("ring_plateau"), r.at("ring_plateau"), {"volta", "ampere", "hopper", "blackwell"},
                                  "tuner row", read_positive);
    v.chain_simple_hop = name_in(r.string("chain_simple_hop"), {"ring", "tree"}, "chain_simple_hop", r.at("chain_simple_hop"));
    v.ring_step_latency = name_in(r.string("ring_step_latency"), {"hw", "intra_inter"}, "ring_step_latency", r.at("ring_step_latency"));
    if (r.has("net_latency_inter"))
      v.net_latency_inter = name_in(r.string("net_latency_inter"), {"none", "replaces", "adds"}, "net_latency_inter",
                                    r.at("net_latency_inter"));
    if (r.has("ring_allreduce_inter_steps"))
      v.ring_allreduce_inter_steps = name_in(r.string("ring_allreduce_inter_steps"), {"2*nodes", "2*(nodes-1)"},
                                             "ring_allreduce_inter_steps", r.at("ring_allreduce_inter_steps"));
    v.graph = read_nccl_graph_data(r.required("graph_search"), r.at("graph_search"));
  });
}

}  // namespace topsim
