#include "io/json_reader.hpp"

#include <cmath>
#include <vector>

#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// First pass over the text with nlohmann's SAX interface: finds duplicate keys, with the JSON
// pointer of the object that holds them. The DOM parser would keep the last value silently.
class DuplicateKeyFinder : public nlohmann::json_sax<Json> {
 public:
  std::string duplicate_pointer;
  std::string duplicate_key;
  std::size_t error_position = 0;
  std::string error_message;

  bool null() override { return element(); }
  bool boolean(bool) override { return element(); }
  bool number_integer(number_integer_t) override { return element(); }
  bool number_unsigned(number_unsigned_t) override { return element(); }
  bool number_float(number_float_t, const string_t&) override { return element(); }
  bool string(string_t&) override { return element(); }
  bool binary(binary_t&) override { return element(); }
  bool start_object(std::size_t) override {
    element();
    stack_.push_back(Frame{true, {}, "", -1});
    return true;
  }
  bool key(string_t& key) override {
    Frame& frame = stack_.back();
    if (!frame.keys.insert(key).second) {
      duplicate_pointer = pointer_of_parent();
      duplicate_key = key;
      return false;
    }
    frame.key = key;
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    element();
    stack_.push_back(Frame{false, {}, "", -1});
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error_position = position;
    error_message = ex.what();
    return false;
  }

 private:
  struct Frame {
    bool is_object;
    std::set<std::string> keys;
    std::string key;
    long index;
  };

  bool element() {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
    return true;
  }

  // Pointer of the innermost object: every enclosing frame contributes its current member.
  std::string pointer_of_parent() const {
    SourceRef ref;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i)
      ref = stack_[i].is_object ? ref.at(stack_[i].key) : ref.at(static_cast<std::size_t>(stack_[i].index));
    return ref.pointer;
  }

  std::vector<Frame> stack_;
};

// nlohmann's messages read "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error while parsing object - unexpected '}'; expected string literal"; keep the part
// after the position, which says what was expected.
std::string syntax_reason(const std::string& what) {
  std::size_t colon = what.find(": ", what.find("column"));
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  const std::string prefix = "syntax error while parsing ";
  if (reason.rfind(prefix, 0) == 0) reason = "syntax error in " + reason.substr(prefix.size());
  return reason;
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file) {
  DuplicateKeyFinder finder;
  bool ok = Json::sax_parse(text, &finder);
  if (!ok && !finder.duplicate_key.empty())
    throw InputError(file, finder.duplicate_pointer,
                     "duplicate key '" + finder.duplicate_key + "' (each key may appear once per object)");
  if (!ok) {
    std::size_t line = 1, column = 1;
    std::size_t end = std::min(finder.error_position == 0 ? 0 : finder.error_position - 1, text.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw InputError(file, std::to_string(line) + ":" + std::to_string(column),
                     "invalid JSON: " + syntax_reason(finder.error_message));
  }
  return Json::parse(text);
}

std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return std::string("the boolean ") + (value.get<bool>() ? "true" : "false");
    case Json::value_t::string: return "the string " + value.dump();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "the number " + value.dump();
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    default: return "an unsupported value";
  }
}


void expect_object(const Json& value, const SourceRef& where) {
  if (!value.is_object()) fail(where, "expected an object, got " + describe(value));
}

void expect_array(const Json& value, const SourceRef& where) {
  if (!value.is_array()) fail(where, "expected an array, got " + describe(value));
}

std::string read_string(const Json& value, const SourceRef& where) {
  if (!value.is_string()) fail(where, "expected a string, got " + describe(value));
  std::string text = value.get<std::string>();
  if (text.empty()) fail(where, "expected a non-empty string");
  return text;
}

double read_quantity(const Json& value, const SourceRef& where, Quantity kind) {
  if (value.is_number())
    fail(where, "expected a string with a unit (e.g. \"" +
                    std::string(kind == Quantity::bandwidth ? "25GBps"
                                : kind == Quantity::time    ? "1.9us"
                                : kind == Quantity::size    ? "80GiB"
                                                            : "312TFLOPS") +
                    "\"), got " + describe(value));
  std::string text = read_string(value, where);
  try {
    return parse_quantity(text, kind);
  } catch (const ParseError& error) {
    fail(where, error.what());
  }
}

ObjectReader::ObjectReader(const Json& object, SourceRef where) : object_(object), where_(std::move(where)) {
  expect_object(object_, where_);
}

bool ObjectReader::has(const std::string& key) const { return object_.contains(key); }

const Json& ObjectReader::required(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end()) {
    // A misspelt key is the likeliest cause: name it rather than only the missing one.
    std::vector<std::string> present;
    for (auto item = object_.begin(); item != object_.end(); ++item) present.push_back(item.key());
    std::string near = closest_match(key, present);
    fail(where_, "missing required key '" + key + "'" + (near.empty() ? "" : " (is '" + near + "' a misspelling?)"));
  }
  return *it;
}

const Json* ObjectReader::optional(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

std::string ObjectReader::string(const std::string& key) { return read_string(required(key), at(key)); }

std::optional<std::string> ObjectReader::optional_string(const std::string& key) {
  const Json* value = optional(key);
  if (value == nullptr) return std::nullopt;
  return read_string(*value, at(key));
}

double ObjectReader::quantity(const std::string& key, Quantity kind) {
  return read_quantity(required(key), at(key), kind);
}

std::optional<double> ObjectReader::optional_quantity(const std::string& key, Quantity kind) {
  const Json* value = optional(key);
  if (value == nullptr) return std::nullopt;
  return read_quantity(*value, at(key), kind);
}

namespace {
double checked_number(const Json& value, const SourceRef& where, double min, double max, bool min_open) {
  if (!value.is_number()) fail(where, "expected a number, got " + describe(value));
  double number = value.get<double>();
  bool low = min_open ? !(number > min) : !(number >= min);
  if (low || !(number <= max) || !std::isfinite(number))
    fail(where, "must be in " + std::string(min_open ? "(" : "[") + shortest(min) + ", " + shortest(max) +
                    "], got " + value.dump());
  return number;
}
}  // namespace

double ObjectReader::number(const std::string& key, double min, double max, bool min_open) {
  return checked_number(required(key), at(key), min, max, min_open);
}

std::optional<double> ObjectReader::optional_number(const std::string& key, double min, double max,
                                                    bool min_open) {
  const Json* value = optional(key);
  if (value == nullptr) return std::nullopt;
  return checked_number(*value, at(key), min, max, min_open);
}

namespace {
int checked_integer(const Json& value, const SourceRef& where, int min, int max) {
  if (!value.is_number_integer()) fail(where, "expected an integer, got " + describe(value));
  long long number = value.get<long long>();
  if (number < min || number > max)
    fail(where, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                    value.dump());
  return static_cast<int>(number);
}
}  // namespace

int ObjectReader::integer(const std::string& key, int min, int max) {
  return checked_integer(required(key), at(key), min, max);
}

std::optional<int> ObjectReader::optional_integer(const std::string& key, int min, int max) {
  const Json* value = optional(key);
  if (value == nullptr) return std::nullopt;
  return checked_integer(*value, at(key), min, max);
}

bool ObjectReader::boolean(const std::string& key) {
  const Json& value = required(key);
  if (!value.is_boolean()) fail(at(key), "expected true or false, got " + describe(value));
  return value.get<bool>();
}

void ObjectReader::finish() const {
  std::vector<std::string> valid(known_.begin(), known_.end());
  for (const auto& item : object_.items()) {
    if (known_.count(item.key()) != 0) continue;
    std::string message = "unknown key '" + item.key() + "'";
    std::string guess = closest_match(item.key(), valid);
    if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
    fail(at(item.key()), message + "; valid keys here: " + join(valid, ", "));
  }
}

bool file_has_top_key(const std::string& path, const std::string& key) {
  Json document = parse_json_text(read_text_file(path), path);
  return document.is_object() && document.contains(key);
}

std::vector<int> read_rising_counts(ObjectReader& reader, const std::string& key) {
  std::vector<int> counts = read_array(reader, key, [](const Json& v, const SourceRef& at) {
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1 << 20))
      fail(at, "expected a count (1 or more), got " + describe(v));
    return static_cast<int>(v.get<long long>());
  });
  if (counts.empty()) fail(reader.at(key), "expected at least one count");
  for (std::size_t i = 1; i < counts.size(); ++i)
    if (counts[i] <= counts[i - 1])
      fail(reader.at(key).at(i),
           "counts must rise (" + std::to_string(counts[i - 1]) + " then " + std::to_string(counts[i]) + ")");
  return counts;
}

}  // namespace topsim
