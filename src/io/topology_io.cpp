#include <algorithm>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

DeviceType read_device_type(ObjectReader& reader) {
  static const std::vector<std::pair<std::string, DeviceType>> types = {
      {"gpu", DeviceType::gpu}, {"nvswitch", DeviceType::nvswitch}, {"pcie_switch", DeviceType::pcie_switch},
      {"cpu", DeviceType::cpu}, {"nic", DeviceType::nic}};
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

LinkSpec read_link(const Json& value, const SourceRef& where) {
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

}  // namespace

TopologySpec load_topology_spec(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  TopologySpec spec;
  spec.file = path;
  SourceRef root{path, ""};
  ObjectReader r(document, root);
  spec.name = r.string("name");
  spec.description = r.string("description");
  if (r.has("sources")) spec.sources = read_array(r, "sources", read_string);
  spec.devices = read_array(r, "devices", read_device);
  spec.links = read_array(r, "links", read_link);
  r.finish();
  return spec;
}

}  // namespace topsim
