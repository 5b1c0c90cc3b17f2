#include "report/result_file.hpp"

#include <nlohmann/json.hpp>

#include "util/text.hpp"

namespace topsim {

std::string result_file_text(const ResultFile& file) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["source"] = file.source;
  out["grid"] = file.grid;
  out["points"] = file.points;
  if (file.shard_count > 1) out["shard"] = std::to_string(file.shard_index) + "/" + std::to_string(file.shard_count);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ResultRow& row : file.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const auto& [key, value] : row.fields)
      std::visit([&, k = key](const auto& v) { object[k] = v; }, value);
    rows.push_back(object);
  }
  out["rows"] = rows;
  return out.dump(2) + "\n";
}

std::string field_text(const ResultRow& row, const std::string& name) {
  const ResultValue* v = row.get(name);
  if (v == nullptr) return "";
  if (const std::string* s = std::get_if<std::string>(v)) return *s;
  if (const long long* i = std::get_if<long long>(v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(v)) return shortest(*d);
  return std::get<bool>(*v) ? "true" : "false";
}

}  // namespace topsim
