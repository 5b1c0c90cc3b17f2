#include "interop/topology_writer.hpp"

#include <nlohmann/json.hpp>

#include "util/text.hpp"

namespace topsim {

namespace {

// Invalid UTF-8 (from an imported file) becomes U+FFFD rather than an exception; the loader then
// rejects the id or name that carries it with an InputError.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string member(const std::string& key, const std::string& value) { return quoted(key) + ": " + quoted(value); }

std::string device_line(const DeviceSpec& d) {
  std::string line = "{" + member("id", d.id) + ", " + member("type", to_string(d.type)) + ", " + member("model", d.model);
  if (d.type == DeviceType::cpu) {
    if (!d.cores.empty()) line += ", " + member("cores", d.cores);
    if (d.numa_node) line += ", \"numa_node\": " + std::to_string(*d.numa_node);
  }
  return line + "}";
}

bool is_nvlink_end(const TopologySpec& spec, const std::string& id) {
  for (const DeviceSpec& d : spec.devices)
    if (d.id == id) return d.type == DeviceType::gpu || d.type == DeviceType::nvswitch;
  return false;
}

std::string link_line(const TopologySpec& spec, const LinkSpec& l) {
  std::string line = "{" + member("a", l.a) + ", " + member("b", l.b) + ", " + member("model", l.model);
  // NVLinks always say how many, as the bundled files do; other links only when bonded.
  if (l.count != 1 || (is_nvlink_end(spec, l.a) && is_nvlink_end(spec, l.b)))
    line += ", \"count\": " + std::to_string(l.count);
  return line + "}";
}

std::string fabric_text(const FabricSpec& f) {
  std::string text = "{" + member("kind", f.kind);
  if (!f.switch_model.empty()) text += ", " + member("switch", f.switch_model);
  if (f.kind != "nvlink" && f.oversubscription != 1) text += ", \"oversubscription\": " + shortest(f.oversubscription);
  if (f.kind == "nvlink" && f.external_ratio != 0.5) text += ", \"external_ratio\": " + shortest(f.external_ratio);
  if (f.kind == "nvlink" && f.planes > 0) text += ", \"planes\": " + std::to_string(f.planes);
  return text + "}";
}

template <typename Item, typename Line>
std::string array(const std::vector<Item>& items, Line line) {
  std::string text = "[\n";
  for (std::size_t i = 0; i < items.size(); ++i) text += "    " + line(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return text + "  ]";
}

}  // namespace

std::string write_topology_json(const TopologySpec& spec) {
  std::string text = "{\n  " + member("name", spec.name) + ",\n  " + member("description", spec.description) + ",\n";
  if (!spec.sources.empty()) text += "  \"sources\": " + array(spec.sources, quoted) + ",\n";
  text += "  \"devices\": " + array(spec.devices, device_line) + ",\n";
  text += "  \"links\": " + array(spec.links, [&](const LinkSpec& l) { return link_line(spec, l); });
  if (spec.scale_out) text += ",\n  \"scale_out\": " + fabric_text(*spec.scale_out);
  return text + "\n}\n";
}

}  // namespace topsim
