#include "report/result_file.hpp"

#include <nlohmann/json.hpp>

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

}  // namespace topsim
