#include "io/model_set.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/provenance_io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

using Ordered = nlohmann::ordered_json;

struct Document {
  std::string path;
  std::string stem;      ///< "nccl" for models/nccl.json: the first part of constant ids
  std::string original;  ///< text as read
  Ordered json;          ///< as edited; key order kept so that writing it back changes only values
  bool changed = false;
};

std::string dump(const Ordered& json) { return json.dump(2) + "\n"; }

// "/a/b.c" for parameter "b.c" under pointer "/a": dotted parameter paths name nested keys.
std::string parameter_pointer(const std::string& model_pointer, const std::string& dotted) {
  std::string pointer = model_pointer;
  for (const std::string& part : split(dotted, '.')) pointer = SourceRef{"", pointer}.at(part).pointer;
  return pointer;
}

// A number as written, or a quantity string split into its number and unit ("9.56us").
bool read_value(const Ordered& value, double& number, std::string& unit) {
  if (value.is_number()) {
    number = value.get<double>();
    unit.clear();
    return true;
  }
  if (!value.is_string()) return false;
  std::string text = value.get<std::string>();
  char* end = nullptr;
  number = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  unit = std::string(end);
  return true;
}

}  // namespace

std::string significant_text(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return "0";
  int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  int decimals = std::max(0, digits - 1 - magnitude);
  double scale = std::pow(10.0, magnitude - digits + 1);
  double rounded = std::round(value / scale) * scale;
  // Rounding may carry into a new digit (9.9996 -> 10.00): one decimal fewer then.
  if (std::abs(rounded) >= std::pow(10.0, magnitude + 1)) decimals = std::max(0, decimals - 1);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, rounded);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

struct ModelSet::Impl {
  std::vector<Document> documents;
  std::vector<ModelConstant> constants;
  std::map<std::string, std::size_t> by_id;
  std::map<std::string, std::size_t> document_of;  ///< constant id -> index into documents

  void scan(std::size_t index) {
    Document& doc = documents[index];
    // Provenance is read from the strict (sorted) form so that it is checked as the loader checks it.
    Json strict = parse_json_text(doc.original, doc.path);
    for (const auto& section : strict.items()) {
      if (!section.value().is_object()) continue;
      SourceRef section_at = SourceRef{doc.path, ""}.at(section.key());
      for (const auto& model : section.value().items()) {
        if (!model.value().is_object() || !model.value().contains("sources")) continue;
        SourceRef model_at = section_at.at(model.key());
        const Json& sources = model.value()["sources"];
        if (!sources.is_object()) continue;
        for (const auto& entry : sources.items()) {
          SourceRef provenance_at = model_at.at("sources").at(entry.key());
          Provenance provenance = read_provenance(entry.value(), provenance_at);
          if (provenance.kind == Provenance::Kind::cited) continue;
          ModelConstant c;
          c.thing = doc.stem + ":" + model.key();
          c.id = c.thing + "." + entry.key();
          c.value_at = SourceRef{doc.path, parameter_pointer(model_at.pointer, entry.key())};
          c.provenance_at = provenance_at;
          c.provenance = provenance;
          Ordered::json_pointer pointer(c.value_at.pointer);
          if (doc.json.contains(pointer)) c.has_value = read_value(doc.json.at(pointer), c.value, c.unit);
          if (!c.has_value && provenance.kind != Provenance::Kind::assumed)
            fail(provenance_at, std::string("a ") + to_string(provenance.kind) +
                                    " constant must be one number (or one quantity such as \"3.4us\"); '" + entry.key() +
                                    "' is not");
          by_id[c.id] = constants.size();
          document_of[c.id] = index;
          constants.push_back(c);
        }
      }
    }
  }
};

ModelSet::ModelSet() : impl_(std::make_unique<Impl>()) {}
ModelSet::ModelSet(const ModelSet& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
ModelSet& ModelSet::operator=(const ModelSet& other) {
  *impl_ = *other.impl_;
  return *this;
}
ModelSet::~ModelSet() = default;

ModelSet ModelSet::load(const std::string& models_dir) {
  ModelSet set;
  for (const std::string& path : model_files(models_dir)) {
    Document doc;
    doc.path = path;
    doc.stem = std::filesystem::path(path).stem().string();
    doc.original = read_text_file(path);
    set.impl_->documents.push_back(std::move(doc));
  }
  set.catalog();  // every check of the loader, with its messages, before anything else parses the text
  for (std::size_t i = 0; i < set.impl_->documents.size(); ++i) {
    set.impl_->documents[i].json = Ordered::parse(set.impl_->documents[i].original);
    set.impl_->scan(i);
  }
  return set;
}

const std::vector<ModelConstant>& ModelSet::constants() const { return impl_->constants; }

const ModelConstant* ModelSet::find(const std::string& id) const {
  auto it = impl_->by_id.find(id);
  return it == impl_->by_id.end() ? nullptr : &impl_->constants[it->second];
}

void ModelSet::set_value(const std::string& id, double value) {
  ModelConstant& c = impl_->constants.at(impl_->by_id.at(id));
  Document& doc = impl_->documents[impl_->document_of.at(id)];
  std::string text = significant_text(value, kSignificantDigits);
  c.value = std::stod(text);
  Ordered& slot = doc.json.at(Ordered::json_pointer(c.value_at.pointer));
  // An integer parameter (a tile size) stays an integer while its value is whole.
  if (!c.unit.empty()) slot = text + c.unit;
  else if (slot.is_number_integer() && c.value == std::floor(c.value)) slot = static_cast<long long>(c.value);
  else slot = c.value;
  doc.changed = true;
}

void ModelSet::set_solution(const std::string& id, const std::vector<std::string>& rows, const std::string& method,
                            double residual) {
  ModelConstant& c = impl_->constants.at(impl_->by_id.at(id));
  Document& doc = impl_->documents[impl_->document_of.at(id)];
  Ordered& entry = doc.json.at(Ordered::json_pointer(c.provenance_at.pointer));
  entry["solved_from"] = rows;
  entry["method"] = method;
  double rounded = std::round(residual * 1e6) / 1e6;
  entry["residual"] = rounded;
  c.provenance.solved_from = rows;
  c.provenance.method = method;
  c.provenance.residual = rounded;
  doc.changed = true;
}

void ModelSet::set_kernel_group(const std::string& architecture, const std::string& group,
                                const std::vector<std::pair<std::string, double>>& values,
                                const KernelConstantSources& sources) {
  for (Document& doc : impl_->documents) {
    if (!doc.json.contains("compute_models") || !doc.json["compute_models"].contains(architecture)) continue;
    Ordered& model = doc.json["compute_models"][architecture];
    if (!model.contains("kernels")) {
      Ordered reordered = Ordered::object();
      for (auto item = model.begin(); item != model.end(); ++item) {
        if (item.key() == "sources") reordered["kernels"] = Ordered::object();
        reordered[item.key()] = item.value();
      }
      if (!reordered.contains("kernels")) reordered["kernels"] = Ordered::object();
      model = reordered;
    }
    Ordered entry = Ordered::object();
    for (const auto& [name, value] : values) entry[name] = std::stod(significant_text(value, kSignificantDigits));
    Ordered provenance = Ordered::object();
    provenance["fitted"] = sources.fitted;
    provenance["files"] = sources.files;
    provenance["rows"] = sources.rows;
    provenance["residual"] = std::stod(significant_text(sources.residual, kSignificantDigits));
    entry["sources"] = provenance;
    model["kernels"][group] = entry;
    doc.changed = true;
    return;
  }
  throw InputError("", "", "no models file has a compute model for architecture '" + architecture + "'");
}

Catalog ModelSet::catalog() const {
  Catalog catalog;
  for (const Document& doc : impl_->documents)
    add_catalog_text(catalog, doc.changed ? dump(doc.json) : doc.original, doc.path);
  catalog.link_kernel_constants();
  catalog.check_references();
  return catalog;
}

std::vector<std::pair<std::string, std::string>> ModelSet::changed_files() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Document& doc : impl_->documents) {
    if (!doc.changed) continue;
    std::string text = dump(doc.json);
    if (text != doc.original) out.emplace_back(doc.path, text);
  }
  return out;
}

}  // namespace topsim
