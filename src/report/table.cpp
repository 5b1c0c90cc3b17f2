#include "report/table.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

Format parse_format(const std::string& text) {
  if (text == "table") return Format::table;
  if (text == "csv") return Format::csv;
  if (text == "json") return Format::json;
  throw UsageError("unknown format '" + text + "'; valid: table, csv, json");
}

double round_to(double value, int digits) {
  // One figure simulated after different earlier runs (a sharded sweep) can differ in its last
  // bits; when it sits on a rounding half the two would print apart. Settle it to 12 significant
  // digits first, far above that noise and far below any printed digit.
  if (value != 0 && std::isfinite(value)) {
    double settle = std::pow(10.0, 11 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
    value = std::round(value * settle) / settle;
  }
  double scale = std::pow(10.0, digits);
  double rounded = std::round(value * scale) / scale;
  return rounded == 0 ? 0.0 : rounded;  // no "-0"
}

void Table::add_row(std::vector<Cell> cells) {
  if (cells.size() != columns_.size()) throw std::logic_error("Table: row width differs from the header");
  rows_.push_back(std::move(cells));
}

std::string Table::cell_text(const Cell& cell, const Column& column) const {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* d = std::get_if<double>(&cell)) return std::isfinite(*d) ? fixed(*d, column.digits) : "n/a";
  if (const auto* i = std::get_if<long long>(&cell)) return std::to_string(*i);
  return std::get<bool>(cell) ? "true" : "false";
}

std::string Table::to_text() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].name.size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], cell_text(row[c], columns_[c]).size());
  auto line = [&](const std::vector<std::string>& cells, const std::vector<bool>& right) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      std::string cell = right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
      out += (c > 0 ? "  " : "") + cell;
    }
    return out + "\n";
  };
  std::vector<bool> right(columns_.size(), false);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c)
      if (!std::holds_alternative<std::string>(row[c])) right[c] = true;
  std::vector<std::string> header;
  for (const auto& column : columns_) header.push_back(column.name);
  std::string out = line(header, right);
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < row.size(); ++c) cells.push_back(cell_text(row[c], columns_[c]));
    out += line(cells, right);
  }
  return out;
}

std::string Table::to_csv() const {
  auto quote = [](const std::string& field) {
    if (field.find_first_of(",\"\n") == std::string::npos) return field;
    std::string out = "\"";
    for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out;
  for (std::size_t c = 0; c < columns_.size(); ++c) out += (c > 0 ? "," : "") + quote(columns_[c].name);
  out += "\n";
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c > 0 ? "," : "") + quote(cell_text(row[c], columns_[c]));
    out += "\n";
  }
  return out;
}

namespace {

nlohmann::ordered_json row_json(const std::vector<Column>& columns, const std::vector<Cell>& row) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t c = 0; c < row.size(); ++c) {
    const std::string& key = columns[c].name;
    const Cell& cell = row[c];
    if (const auto* s = std::get_if<std::string>(&cell)) object[key] = *s;
    else if (const auto* d = std::get_if<double>(&cell))
      // Full precision (the shortest text that reads back as the same double); text and CSV
      // round to the column's decimals, JSON is data. No "-0".
      object[key] = std::isfinite(*d) ? nlohmann::ordered_json(*d == 0 ? 0.0 : *d) : nlohmann::ordered_json();
    else if (const auto* i = std::get_if<long long>(&cell)) object[key] = *i;
    else object[key] = std::get<bool>(cell);
  }
  return object;
}

nlohmann::ordered_json table_json(const std::vector<Column>& columns, const std::vector<std::vector<Cell>>& rows) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const auto& row : rows) array.push_back(row_json(columns, row));
  return array;
}

}  // namespace

std::string Table::to_json() const { return table_json(columns_, rows_).dump(2) + "\n"; }

std::string Table::to_json_object(std::size_t row,
                                  const std::vector<std::pair<std::string, const Table*>>& nested) const {
  nlohmann::ordered_json object = row_json(columns_, rows_.at(row));
  for (const auto& [key, table] : nested) object[key] = table_json(table->columns_, table->rows_);
  return object.dump(2) + "\n";
}

std::string Table::to_markdown() const {
  auto escape = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = "|";
  std::string rule = "|";
  for (const auto& column : columns_) {
    out += " " + escape(column.name) + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (std::size_t c = 0; c < row.size(); ++c) out += " " + escape(cell_text(row[c], columns_[c])) + " |";
    out += "\n";
  }
  return out;
}

std::string Table::render(Format format) const {
  switch (format) {
    case Format::table: return to_text();
    case Format::csv: return to_csv();
    case Format::json: return to_json();
  }
  return {};
}

}  // namespace topsim
