#include <algorithm>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

DeviceType read_device_type(ObjectReader& reader) {
  static const std::vector<std::pair<std::string, DeviceType>> types = {
      {"gpu", DeviceType::gpu}, {"nvswitch", DeviceType::nvswitch}, {"pcie_switch", DeviceType::pcie_switch},
      {"cpu", DeviceType::cpu}, {"nic", DeviceType::nic}, {"network_switch", DeviceType::network_switch}};
  std::string text = reader.string("type");
  std::vector<std::string> valid;
  for (const auto& [name, type] : types) {
    if (name == text) return type;
    valid.push_back(name);
  }
  fail(reader.at("type"), unknown_name_message("device type", text, valid));
}

void check_id(const std::string& id, const SourceRef& where) {
  bool ok = std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!ok) fail(where, "device id '" + id + "' may use only letters, digits, '_', '-' and '.'");
}

DeviceSpec read_device(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  DeviceSpec d;
  d.where = where;
  d.id = r.string("id");
  check_id(d.id, r.at("id"));
  d.type = read_device_type(r);
  d.model = r.string("model");
  if (d.type == DeviceType::cpu) {
    if (auto cores = r.optional_string("cores")) d.cores = *cores;
    d.numa_node = r.optional_integer("numa_node", 0, 4095);
  }
  r.finish();
  return d;
}

LinkSpec read_link_spec(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  LinkSpec l;
  l.where = where;
  l.a = r.string("a");
  l.b = r.string("b");
  l.model = r.string("model");
  if (auto count = r.optional_integer("count", 1, 4096)) l.count = *count;
  l.bandwidth_Bps = r.optional_quantity("bandwidth", Quantity::bandwidth);
  l.latency_s = r.optional_quantity("latency", Quantity::time);
  l.efficiency = r.optional_number("efficiency", 0, 1, true);
  r.finish();
  return l;
}

FabricSpec read_fabric(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  FabricSpec f;
  f.where = where;
  f.kind = r.string("kind");
  const std::vector<std::string> kinds = {"fat-tree", "rail", "rail-only", "nvlink"};
  if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end())
    fail(r.at("kind"), unknown_name_message("fabric kind", f.kind, kinds));
  if (auto model = r.optional_string("switch")) f.switch_model = *model;
  if (f.kind != "nvlink") {
    if (auto o = r.optional_number("oversubscription", 1, 64, false)) f.oversubscription = *o;
    if (auto tiers = r.optional_integer("tiers", 2, 3)) f.tiers = *tiers;
    if (f.kind != "rail-only")
      if (auto planes = r.optional_integer("planes", 1, 64)) f.planes = *planes;
    if (f.tiers == 3) {
      if (auto o = r.optional_number("spine_oversubscription", 1, 64, false)) f.spine_oversubscription = *o;
      if (auto s = r.optional_integer("spines_per_pod", 1, 4096)) f.spines_per_pod = *s;
      if (auto l = r.optional_integer("leaves_per_pod", 1, 4096)) f.leaves_per_pod = *l;
    }
  } else {
    if (auto ratio = r.optional_number("external_ratio", 0, 1, true)) f.external_ratio = *ratio;
    if (auto planes = r.optional_integer("planes", 1, 1024)) f.planes = *planes;
  }
  r.finish();
  return f;
}

std::vector<std::string> read_sources(ObjectReader& r) {
  if (!r.has("sources")) return {};
  return read_array(r, "sources", read_string);
}

}  // namespace

TopologySpec load_topology_spec(const std::string& path) { return parse_topology_spec(read_text_file(path), path); }

TopologySpec parse_topology_spec(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  TopologySpec spec;
  spec.file = path;
  SourceRef root{path, ""};
  ObjectReader r(document, root);
  spec.name = r.string("name");
  spec.description = r.string("description");
  spec.sources = read_sources(r);
  spec.devices = read_array(r, "devices", read_device);
  spec.links = read_array(r, "links", read_link_spec);
  if (const Json* fabric = r.optional("scale_out")) spec.scale_out = read_fabric(*fabric, r.at("scale_out"));
  r.finish();
  return spec;
}

}  // namespace topsim

namespace topsim {

ClusterSpec load_cluster_spec(const std::string& path) { return parse_cluster_spec(read_text_file(path), path); }

ClusterSpec parse_cluster_spec(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  ClusterSpec spec;
  spec.file = path;
  spec.where = SourceRef{path, ""};
  ObjectReader r(document, spec.where);
  spec.name = r.string("name");
  spec.description = r.string("description");
  spec.sources = read_sources(r);
  spec.node = r.string("node");
  spec.nodes = r.integer("nodes", 1, 1 << 20);
  if (auto nic = r.optional_string("nic")) spec.nic = *nic;
  if (auto k = r.optional_integer("nics_per_node", 1, 64)) spec.nics_per_node = *k;
  spec.fabric = read_fabric(r.required("fabric"), r.at("fabric"));
  r.finish();
  return spec;
}

bool is_cluster_file(const std::string& path) { return is_cluster_text(read_text_file(path), path); }

bool is_cluster_text(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  return document.is_object() && document.contains("node") && !document.contains("devices");
}

}  // namespace topsim
