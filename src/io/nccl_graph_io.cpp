// models/nccl_versions.json, "graph_search" of a release line: the constants of NCCL's
// topology search (model/nccl_graph_data.hpp). Every key cites the NCCL source line it was
// read from, as path:line@tag (or path:first-last@tag), in the object's own "sources".
#include <regex>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

constexpr double kGBps = 1e9;  // NCCL's topo.h figures are GB/s

double positive(const Json& n, const SourceRef& at) {
  if (!n.is_number() || n.get<double>() <= 0) fail(at, "expected a positive number, got " + describe(n));
  return n.get<double>();
}

std::vector<double> descending_speeds(const Json& a, const SourceRef& at) {
  if (!a.is_array() || a.empty()) fail(at, "expected a non-empty array of speeds in GB/s, got " + describe(a));
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(positive(a[i], at.at(i)) * kGBps);
    if (i > 0 && out[i] >= out[i - 1]) fail(at.at(i), "speeds must decrease, as NCCL tries them in order");
  }
  return out;
}

template <typename ReadOne>
auto keyed(const Json& o, const SourceRef& at, ReadOne read_one) {
  expect_object(o, at);
  std::map<std::string, decltype(read_one(o, at))> out;
  for (const auto& item : o.items()) out[item.key()] = read_one(item.value(), at.at(item.key()));
  return out;
}

const std::regex& citation_pattern() {
  static const std::regex pattern(R"(^([A-Za-z0-9_./-]+:[0-9]+(-[0-9]+)?@v[0-9]+\.[0-9]+\.[0-9]+-[0-9]+)(, [A-Za-z0-9_./-]+:[0-9]+(-[0-9]+)?@v[0-9]+\.[0-9]+\.[0-9]+-[0-9]+)*(;.*)?$)");
  return pattern;
}

}  // namespace

NcclGraphData read_nccl_graph_data(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  NcclGraphData g;
  g.present = true;
  std::vector<std::string> keys;
  auto key = [&](const std::string& k) -> const Json& {
    keys.push_back(k);
    return r.required(k);
  };
  if (r.has("speed_intra_GBps")) {
    const Json& arrays = key("speed_intra_GBps");
    SourceRef at = r.at("speed_intra_GBps");
    expect_object(arrays, at);
    for (const auto& item : arrays.items()) {
      const std::string& k = item.key();
      int cc = 0;
      if (k != "default") {
        if (k.size() < 3 || k.compare(0, 2, "sm") != 0 || k.find_first_not_of("0123456789", 2) != std::string::npos)
          fail(at.at(k), "expected \"default\" or \"sm<compute capability x10>\" (sm90: for ccMin >= 90), got '" + k + "'");
        cc = std::stoi(k.substr(2));
      }
      g.speed_intra_Bps[cc] = descending_speeds(item.value(), at.at(k));
    }
    if (!g.speed_intra_Bps.count(0)) fail(at, "no \"default\" speed array (the one GPUs below every threshold use)");
  } else {
    g.speed_step_Bps = positive(key("speed_step_GBps"), r.at("speed_step_GBps")) * kGBps;
  }
  g.pci_lane_rate = keyed(key("pci_lane_rate"), r.at("pci_lane_rate"), [](const Json& n, const SourceRef& at) { return positive(n, at); });
  g.pci_lane_divisor = positive(key("pci_lane_divisor"), r.at("pci_lane_divisor"));
  g.inter_cpu_Bps = keyed(key("inter_cpu_GBps"), r.at("inter_cpu_GBps"),
                          [](const Json& n, const SourceRef& at) { return positive(n, at) * kGBps; });
  for (const char* family : {"intel", "intel_skylake", "amd", "arm", "other"})
    if (!g.inter_cpu_Bps.count(family))
      fail(r.at("inter_cpu_GBps"), std::string("no entry for CPU family '") + family +
                                       "'; needed: intel, intel_skylake, amd, arm, other");
  g.intel_first_model = keyed(key("intel_first_model"), r.at("intel_first_model"), [](const Json& n, const SourceRef& at) {
    if (!n.is_number_integer() || n.get<int>() < 1) fail(at, "expected a CPUID model number, got " + describe(n));
    return n.get<int>();
  });
  for (const auto& [family, model] : g.intel_first_model)
    if (!g.inter_cpu_Bps.count("intel_" + family))
      fail(r.at("intel_first_model").at(family), "no inter_cpu_GBps entry 'intel_" + family + "' for this family");
  g.local_Bps = positive(key("local_GBps"), r.at("local_GBps")) * kGBps;
  g.intel_p2p_overhead = positive(key("intel_p2p_overhead"), r.at("intel_p2p_overhead"));
  keys.push_back("nvlink_bounce");
  g.nvlink_bounce = r.boolean("nvlink_bounce");
  auto level = [](const Json& s, const SourceRef& at) {
    if (!s.is_string() || (s != "PXB" && s != "SYS")) fail(at, "expected \"PXB\" or \"SYS\", got " + describe(s));
    return s.get<std::string>();
  };
  g.p2p_level = keyed(key("p2p_level"), r.at("p2p_level"), level);
  if (r.has("p2p_level_two_gpus")) g.p2p_level_two_gpus = keyed(key("p2p_level_two_gpus"), r.at("p2p_level_two_gpus"), level);
  if (!g.p2p_level.count("other")) fail(r.at("p2p_level"), "no \"other\" entry (CPU families without their own)");
  auto integer = [&](const std::string& k, long min, long max) {
    keys.push_back(k);
    const Json& n = r.required(k);
    if (!n.is_number_integer() || n.get<long>() < min || n.get<long>() > max)
      fail(r.at(k), "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + describe(n));
    return n.get<long>();
  };
  g.max_search_channels = static_cast<int>(integer("max_search_channels", 1, 64));
  g.search_timeout = integer("search_timeout", 1, 1L << 30);
  g.search_timeout_same_channels = integer("search_timeout_same_channels", 1, 1L << 30);
  g.search_global_timeout = integer("search_global_timeout", 1, 1L << 40);
  g.lower_speed_ratio = positive(key("lower_speed_ratio"), r.at("lower_speed_ratio"));
  g.duplicate_min_Bps = positive(key("duplicate_min_GBps"), r.at("duplicate_min_GBps")) * kGBps;
  if (r.has("duplicate_cap")) {  // absent (NCCL 2.12): every fast enough graph is duplicated
    ObjectReader d(key("duplicate_cap"), r.at("duplicate_cap"));
    g.duplicate_cap_above_cc = d.integer("above_compute_capability", 0, 1000);
    g.duplicate_cap_Bps = d.number("below_GBps", 0, 1e6, false) * kGBps;
    g.duplicate_cap_channels = d.integer("over_channels", 0, 64);
    d.finish();
  }
  g.compute_capability = keyed(key("compute_capability"), r.at("compute_capability"), [](const Json& n, const SourceRef& at) {
    if (!n.is_number_integer() || n.get<int>() < 10) fail(at, "expected a compute capability x10 (80 for SM80), got " + describe(n));
    return n.get<int>();
  });
  // Every key cites where NCCL states it: path:line@tag as the nccl-src trees name them.
  ObjectReader s(r.required("sources"), r.at("sources"));
  for (const std::string& k : keys) {
    std::string citation = s.string(k);
    if (!std::regex_match(citation, citation_pattern()))
      fail(s.at(k), "'" + citation + "' is no citation of NCCL's source; expected path:line@tag, e.g. " +
                        "src/graph/search.cc:789@v2.18.3-1 (several joined by \", \", then \"; \" and a note)");
  }
  s.finish();
  r.finish();
  return g;
}

}  // namespace topsim
