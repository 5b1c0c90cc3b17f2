// models/nccl_versions.json, "graph_search" of a release line: the constants of NCCL's
// topology search (model/nccl_graph_data.hpp). Their citations are the line's own sources
// (nccl_version_io.cpp checks that every value has one, path:line@tag).
#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

constexpr double kGBps = 1e9;  // NCCL's topo.h figures are GB/s

double positive_number(const Json& n, const SourceRef& at) {
  if (!n.is_number() || n.get<double>() <= 0) fail(at, "expected a positive number, got " + describe(n));
  return n.get<double>();
}

std::vector<double> descending_speeds(const Json& a, const SourceRef& at) {
  if (!a.is_array() || a.empty()) fail(at, "expected a non-empty array of speeds in GB/s, got " + describe(a));
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(positive_number(a[i], at.at(i)) * kGBps);
    if (i > 0 && out[i] >= out[i - 1]) fail(at.at(i), "speeds must decrease, as NCCL tries them in order");
  }
  return out;
}

template <typename ReadOne>
auto keyed_values(const Json& o, const SourceRef& at, ReadOne read_one) {
  expect_object(o, at);
  std::map<std::string, decltype(read_one(o, at))> out;
  for (const auto& item : o.items()) out[item.key()] = read_one(item.value(), at.at(item.key()));
  return out;
}

std::string p2p_level_name(const Json& s, const SourceRef& at) {
  if (!s.is_string() || (s != "PXB" && s != "SYS")) fail(at, "expected \"PXB\" or \"SYS\", got " + describe(s));
  return s.get<std::string>();
}

long bounded_integer(ObjectReader& r, const std::string& k, long min, long max) {
  const Json& n = r.required(k);
  if (!n.is_number_integer() || n.get<long>() < min || n.get<long>() > max)
    fail(r.at(k), "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + describe(n));
  return n.get<long>();
}

}  // namespace

NcclGraphData read_nccl_graph_data(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  NcclGraphData g;
  // Every line has NCCL's link bandwidths; only lines with a speed array can be searched.
  {
    const Json& links = r.required("link_bandwidth_GBps");
    SourceRef at = r.at("link_bandwidth_GBps");
    expect_object(links, at);
    for (const auto& item : links.items())
      if (item.key() != "nvlink") g.link_Bps[item.key()] = positive_number(item.value(), at.at(item.key())) * kGBps;
      else keyed_values(item.value(), at.at("nvlink"), [](const Json& n, const SourceRef& place) { return positive_number(n, place); });  // per compute capability; the tuner's nvlink_bandwidth is used
    if (!g.link_Bps.count("loc")) fail(at, "no \"loc\" (LOC_BW): links NCCL does not limit need it");
  }
  auto speeds = [&](const std::string& k) {
    auto out = keyed_values(r.required(k), r.at(k), descending_speeds);
    if (!out.count("default")) fail(r.at(k), "no \"default\" speed array (the one rows without their own use)");
    return out;
  };
  if (r.has("speed_inter_GBps")) g.speed_inter_Bps = speeds("speed_inter_GBps");
  if (!r.has("speed_intra_GBps")) {
    r.finish();
    return g;
  }
  g.searchable = true;
  g.speed_intra_Bps = speeds("speed_intra_GBps");
  {
    ObjectReader p(r.required("pcie_from_width"), r.at("pcie_from_width"));
    g.pci_lane_rate = keyed_values(p.required("lane_speed_by_gts"), p.at("lane_speed_by_gts"), [](const Json& n, const SourceRef& at) { return positive_number(n, at); });
    g.pci_lane_divisor = p.number("divisor", 0, 1e6, true);
    p.integer("default_width", 1, 32);
    p.finish();
  }
  g.intel_first_model = keyed_values(r.required("intel_first_model"), r.at("intel_first_model"), [](const Json& s, const SourceRef& at) {
    // As NCCL writes them (0x55): hex text.
    if (!s.is_string() || s.get<std::string>().rfind("0x", 0) != 0 || s.get<std::string>().size() < 3 ||
        s.get<std::string>().find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos)
      fail(at, "expected a CPUID model as NCCL writes it, e.g. \"0x55\", got " + describe(s));
    return std::stoi(s.get<std::string>().substr(2), nullptr, 16);
  });
  for (const auto& [family, model] : g.intel_first_model) {
    std::string link = intel_qpi_link(family);
    if (link.empty()) fail(r.at("intel_first_model").at(family), "unknown Intel family '" + family + "'; known: skylake, sapphire_rapids, emerald_rapids");
    if (!g.link_Bps.count(link)) fail(r.at("intel_first_model").at(family), "link_bandwidth_GBps has no '" + link + "' for this family");
  }
  g.intel_p2p_overhead = positive_number(r.required("intel_p2p_overhead"), r.at("intel_p2p_overhead"));
  g.nvlink_bounce = r.boolean("nvlink_bounce");
  g.p2p_level = keyed_values(r.required("p2p_level"), r.at("p2p_level"), p2p_level_name);
  if (!g.p2p_level.count("other")) fail(r.at("p2p_level"), "no \"other\" entry (CPU families without their own)");
  if (r.has("p2p_level_two_gpus")) g.p2p_level_two_gpus = keyed_values(r.required("p2p_level_two_gpus"), r.at("p2p_level_two_gpus"), p2p_level_name);
  g.search_channels_divisor = static_cast<int>(bounded_integer(r, "search_channels_divisor", 1, 64));
  g.search_timeout = bounded_integer(r, "search_timeout", 1, 1L << 30);
  g.search_timeout_same_channels = bounded_integer(r, "search_timeout_same_channels", 1, 1L << 30);
  g.search_global_timeout = bounded_integer(r, "search_global_timeout", 1, 1L << 40);
  g.lower_speed_ratio = positive_number(r.required("lower_speed_ratio"), r.at("lower_speed_ratio"));
  g.duplicate_min_Bps = positive_number(r.required("duplicate_min_GBps"), r.at("duplicate_min_GBps")) * kGBps;
  if (r.has("duplicate_cap")) {  // absent (NCCL 2.12): every fast enough graph is duplicated
    ObjectReader d(r.required("duplicate_cap"), r.at("duplicate_cap"));
    const Json& archs = d.required("architectures");
    if (!archs.is_array()) fail(d.at("architectures"), "expected an array of architecture names, got " + describe(archs));
    for (std::size_t i = 0; i < archs.size(); ++i) g.duplicate_cap_architectures.push_back(read_string(archs[i], d.at("architectures").at(i)));
    g.duplicate_cap_Bps = d.number("below_GBps", 0, 1e6, false) * kGBps;
    g.duplicate_cap_channels = d.integer("over_channels", 0, 64);
    d.finish();
  }
  // Absent on lines before NCCL 2.19 (neighbours) and 2.21 (MNNVL): neither behaviour.
  if (r.has("nvswitch_neighbours_first")) g.nvswitch_neighbours_first = r.boolean("nvswitch_neighbours_first");
  if (r.has("mnnvl")) g.mnnvl = r.boolean("mnnvl");
  if (r.has("topo_max_nodes")) g.topo_max_nodes = static_cast<int>(bounded_integer(r, "topo_max_nodes", 2, 1 << 16));
  r.finish();
  return g;
}

}  // namespace topsim
