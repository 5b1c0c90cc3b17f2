#include "io/model_overlay.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

using Ordered = nlohmann::ordered_json;

const char* kProvenanceHelp =
    "every overlay constant says where it came from: \"provenance\": {\"command\": \"topsim calibrate ...\", \"logs\": "
    "[FILE...], \"rows\": [ROW ID...], \"lines\": [\"FILE:LINE\"...], \"method\": \"exact\"|\"least_squares\", "
    "\"residual\": NUMBER} (topsim calibrate --measured writes it)";

// A non-empty array of strings at `key` of `object`; InputError at its pointer otherwise.
std::vector<std::string> strings_at(const Json& object, const std::string& key, const SourceRef& at) {
  if (!object.contains(key) || !object[key].is_array() || object[key].empty())
    throw InputError(at.file, at.pointer + "/" + key, "missing or empty '" + key + "'; " + kProvenanceHelp);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < object[key].size(); ++i) {
    const Json& v = object[key][i];
    if (!v.is_string() || v.get<std::string>().empty())
      throw InputError(at.file, at.pointer + "/" + key + "/" + std::to_string(i), "expected a non-empty string, got " + describe(v));
    out.push_back(v.get<std::string>());
  }
  return out;
}

OverlayProvenance read_provenance_of(const Json& entry, const SourceRef& at, const std::string& id) {
  if (!entry.contains("provenance"))
    throw InputError(at.file, at.pointer, "overlay constant " + id + " has no provenance; " + kProvenanceHelp);
  const Json& p = entry["provenance"];
  SourceRef pat = at.at("provenance");
  if (!p.is_object()) throw InputError(pat.file, pat.pointer, "expected an object, got " + describe(p) + "; " + kProvenanceHelp);
  OverlayProvenance out;
  if (!p.contains("command") || !p["command"].is_string() || p["command"].get<std::string>().empty())
    throw InputError(pat.file, pat.pointer + "/command", "missing or empty 'command'; " + std::string(kProvenanceHelp));
  out.command = p["command"].get<std::string>();
  out.logs = strings_at(p, "logs", pat);
  out.rows = strings_at(p, "rows", pat);
  out.lines = strings_at(p, "lines", pat);
  if (p.contains("method") && p["method"].is_string()) out.method = p["method"].get<std::string>();
  if (p.contains("residual") && p["residual"].is_number()) out.residual = p["residual"].get<double>();
  return out;
}

}  // namespace

bool is_overlay_dir(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::is_regular_file(std::filesystem::path(dir) / kOverlayFile, ec);
}

std::vector<OverlayConstant> apply_overlay(ModelSet& base, const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kOverlayFile).string();
  Json doc = parse_json_text(read_text_file(path), path);
  if (!doc.is_object() || !doc.contains("constants") || !doc["constants"].is_object())
    throw InputError(path, "/constants", "an overlay is {\"description\": ..., \"constants\": {ID: {\"value\": ..., "
                                         "\"provenance\": ...}}}");
  std::vector<OverlayConstant> out;
  for (const auto& item : doc["constants"].items()) {
    SourceRef at = SourceRef{path, "/constants"}.at(item.key());
    // The constants of the same models file ("nccl:..."), or every one when the file is unknown.
    const std::string stem = item.key().substr(0, item.key().find(':') + 1);
    std::vector<std::string> known, all;
    for (const ModelConstant& c : base.constants()) {
      all.push_back(c.id);
      if (c.id.compare(0, stem.size(), stem) == 0) known.push_back(c.id);
    }
    if (known.empty()) known = all;
    const Json& entry = item.value();
    const ModelConstant* c = base.find(item.key());
    if (c == nullptr) throw InputError(at.file, at.pointer, unknown_name_message("constant of the bundled models", item.key(), known));
    if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_number())
      throw InputError(at.file, at.pointer + "/value", "expected {\"value\": NUMBER (in " +
                                                           (c->unit.empty() ? std::string("no unit") : c->unit) + "), ...}");
    OverlayConstant o;
    o.id = item.key();
    o.value = entry["value"].get<double>();
    o.unit = entry.contains("unit") && entry["unit"].is_string() ? entry["unit"].get<std::string>() : "";
    if (o.unit != c->unit)
      throw InputError(at.file, at.pointer + "/unit", "'" + o.unit + "' is not the unit " + o.id + " is written in ('" +
                                                          c->unit + "')");
    if (!(o.value > 0))
      throw InputError(at.file, at.pointer + "/value", "a solved constant is positive, got " + shortest(o.value));
    o.bundled = c->value;
    o.provenance = read_provenance_of(entry, at, o.id);
    base.set_value(o.id, o.value);
    out.push_back(o);
  }
  return out;
}

std::string overlay_json(const std::string& description, const std::vector<OverlayConstant>& constants) {
  Ordered doc;
  doc["description"] = description;
  doc["constants"] = Ordered::object();
  for (const OverlayConstant& o : constants) {
    Ordered e;
    e["value"] = o.value;
    if (!o.unit.empty()) e["unit"] = o.unit;
    e["bundled"] = o.bundled;
    Ordered p;
    p["command"] = o.provenance.command;
    p["logs"] = o.provenance.logs;
    p["rows"] = o.provenance.rows;
    p["lines"] = o.provenance.lines;
    p["method"] = o.provenance.method;
    p["residual"] = o.provenance.residual;
    e["provenance"] = p;
    doc["constants"][o.id] = e;
  }
  return doc.dump(2) + "\n";
}

}  // namespace topsim
