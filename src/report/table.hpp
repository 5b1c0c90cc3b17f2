#pragma once
// Rows of results rendered as aligned text, CSV or JSON. Output is deterministic: fixed
// precision per column, rows in the order given, no timestamps.
#include <cmath>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace topsim {

enum class Format { table, csv, json };

/// "table", "csv", "json"; UsageError otherwise.
Format parse_format(const std::string& text);

struct Column {
  std::string name;
  int digits = 2;  ///< decimals for double cells
};

using Cell = std::variant<std::string, double, long long, bool>;
/// A figure that may not exist (a GPU without a TDP, a GPU without a price): "-" when absent.
inline Cell cell_or_dash(const std::optional<double>& value) { return value ? Cell(*value) : Cell(std::string("-")); }

/// A byte size or a count held as a double: an integer cell, so JSON writes it as an integer.
inline Cell whole(double value) { return static_cast<long long>(std::llround(value)); }

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add_row(std::vector<Cell> cells);

  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }

  /// Columns padded to their widest cell, numbers right-aligned, two spaces between columns.
  std::string to_text() const;
  /// RFC 4180: a header line, then one line per row; fields with commas or quotes are quoted.
  std::string to_csv() const;
  /// An array of objects keyed by column name; doubles at full precision (they read back as the
  /// same double), integers as integers, non-finite numbers as null.
  std::string to_json() const;
  /// A GitHub-flavoured Markdown table ('|' inside cells escaped).
  std::string to_markdown() const;

  std::string render(Format format) const;

  /// One row as a JSON object, with other tables nested under the given keys as arrays.
  std::string to_json_object(std::size_t row, const std::vector<std::pair<std::string, const Table*>>& nested) const;

 private:
  std::string cell_text(const Cell& cell, const Column& column) const;

  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

/// Rounds to `digits` decimals, settling the last bits first (sweep result files carry it, so
/// that shards agree with a whole run).
double round_to(double value, int digits);

}  // namespace topsim
