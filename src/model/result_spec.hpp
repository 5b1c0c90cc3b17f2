#pragma once
// Results of a sweep as plain data: one row per point of a grid, in point order, as written by
// `topsim sweep`, joined by `topsim merge` and compared by `topsim regress`. Values are already
// rounded to what the file carries, so reading a file and writing it back gives the same bytes.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace topsim {

using ResultValue = std::variant<std::string, double, long long, bool>;

struct ResultRow {
  std::vector<std::pair<std::string, ResultValue>> fields;  ///< in output order; "point" and "id" first

  const ResultValue* get(const std::string& name) const {
    for (const auto& [key, value] : fields)
      if (key == name) return &value;
    return nullptr;
  }
  /// A numeric field (integer or not); nullopt when absent or not a number.
  std::optional<double> number(const std::string& name) const {
    const ResultValue* v = get(name);
    if (v == nullptr) return std::nullopt;
    if (const double* d = std::get_if<double>(v)) return *d;
    if (const long long* i = std::get_if<long long>(v)) return static_cast<double>(*i);
    return std::nullopt;
  }
  /// The "status" field: "ok", "skipped: why"; rows without one (run, compare) are "ok".
  std::string status() const {
    const ResultValue* s = get("status");
    return s != nullptr && std::holds_alternative<std::string>(*s) ? std::get<std::string>(*s) : "ok";
  }
};

struct ResultFile {
  std::string source;      ///< the scenario or sweep file the grid came from
  std::string grid;        ///< fingerprint of the grid's point ids: equal grids, comparable files
  long long points = 0;    ///< points in the whole grid
  int shard_index = 1;     ///< 1-based; with shard_count 1 the file holds the whole grid
  int shard_count = 1;
  std::vector<ResultRow> rows;
};

}  // namespace topsim
