#pragma once
// Internal to io: strict reading of JSON objects with the place of every value in hand.
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/source_ref.hpp"
#include "util/units.hpp"

namespace topsim {

using Json = nlohmann::json;

/// Parses text, reporting syntax errors as file:line:col and rejecting duplicate keys (which
/// nlohmann would silently collapse to the last one).
Json parse_json_text(const std::string& text, const std::string& file);

/// Human name of a JSON value's type for error messages: "a string", "the number 3".
std::string describe(const Json& value);

/// Reads the members of one JSON object. Every key read is marked as known; finish() then
/// rejects the rest with a "did you mean" hint, so a typo never becomes a silent default.
class ObjectReader {
 public:
  ObjectReader(const Json& object, SourceRef where);

  bool has(const std::string& key) const;
  const Json& required(const std::string& key);
  const Json* optional(const std::string& key);

  std::string string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  double quantity(const std::string& key, Quantity kind);
  std::optional<double> optional_quantity(const std::string& key, Quantity kind);
  /// A plain number within [min, max]; `min_open` excludes min itself.
  double number(const std::string& key, double min, double max, bool min_open);
  std::optional<double> optional_number(const std::string& key, double min, double max, bool min_open);
  int integer(const std::string& key, int min, int max);
  std::optional<int> optional_integer(const std::string& key, int min, int max);
  bool boolean(const std::string& key);

  const SourceRef& where() const { return where_; }
  SourceRef at(const std::string& key) const { return where_.at(key); }

  /// Throws on the first key that was never read, listing the valid ones.
  void finish() const;

 private:
  const Json& object_;
  SourceRef where_;
  std::set<std::string> known_;
};

/// Every element of the array under `key`, each read by `read_one(value, where)`.
template <typename ReadOne>
auto read_array(ObjectReader& reader, const std::string& key, ReadOne read_one) {
  const Json& array = reader.required(key);
  SourceRef where = reader.at(key);
  if (!array.is_array()) fail(where, "expected an array, got " + describe(array));
  std::vector<decltype(read_one(array, where))> out;
  for (std::size_t i = 0; i < array.size(); ++i) out.push_back(read_one(array[i], where.at(i)));
  return out;
}

/// A non-empty array of rising integers >= 1 under `key` (GPU or server counts).
std::vector<int> read_rising_counts(ObjectReader& reader, const std::string& key);

/// Whether a JSON file's top-level object has `key` (what kind of input file it is).
bool file_has_top_key(const std::string& path, const std::string& key);

/// Math types a kernel may name (trace compute ops, kernel validation rows); compute's kernel model
/// knows each one.
const std::vector<std::string>& math_dtypes();

/// Attention math and KV-cache dtypes of kernel tables and of "prefill/..." and "decode/..."
/// groups in models/compute.json: bf16, fp16, fp8 (io/kernel_table_io.cpp).
const std::vector<std::string>& attention_dtypes();

/// Value readers usable on any JSON value (array elements, map entries).
std::string read_string(const Json& value, const SourceRef& where);
double read_quantity(const Json& value, const SourceRef& where, Quantity kind);
void expect_object(const Json& value, const SourceRef& where);
void expect_array(const Json& value, const SourceRef& where);

}  // namespace topsim
