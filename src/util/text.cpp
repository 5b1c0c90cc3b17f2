#include "util/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "util/error.hpp"

namespace topsim {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  std::string text = buffer;
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string shortest(double value) {
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

namespace {
std::size_t distance(std::string_view a, std::string_view b, bool fold_case) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      char x = a[i - 1], y = b[j - 1];
      bool same = fold_case ? std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y))
                            : x == y;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) { return distance(a, b, true); }

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // Closest ignoring case; among equals, the one that also matches the case as typed ("Gbs" is
  // nearer to "Gbps" than to "GBps": bits, not bytes).
  std::string best;
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3) + 1;
  std::pair<std::size_t, std::size_t> best_score{limit, 0};
  for (const auto& candidate : candidates) {
    std::pair<std::size_t, std::size_t> score{distance(word, candidate, true), distance(word, candidate, false)};
    if (score < best_score) {
      best_score = score;
      best = candidate;
    }
  }
  return best;
}

std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known) {
  std::string message = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  std::string guess = closest_match(name, known);
  if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
  std::vector<std::string> sorted = known;
  std::sort(sorted.begin(), sorted.end());
  message += "; known: " + (sorted.empty() ? std::string("none") : join(sorted, ", "));
  return message;
}

std::vector<int> parse_int_list(std::string_view text) {
  std::vector<int> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    auto integer = [&](std::string_view digits) {
      int value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size())
        throw ParseError("'" + std::string(item) + "' is not an integer or a range (expected a list like 0,1,2 or 0-3)");
      return value;
    };
    std::size_t dash = item.find('-', 1);
    if (dash == std::string_view::npos) {
      values.push_back(integer(item));
    } else {
      int first = integer(item.substr(0, dash)), last = integer(item.substr(dash + 1));
      if (last < first) throw ParseError("'" + std::string(item) + "' is an empty range (write low-high)");
      // 2^20 values in all, not per range: "0-999999," repeated would otherwise take gigabytes.
      if (static_cast<long long>(values.size()) + last - first >= (1 << 20))
        throw ParseError("'" + std::string(item) + "' makes the list longer than 1048576 values");
      for (int v = first; v <= last; ++v) values.push_back(v);
    }
    start = end + 1;
  }
  return values;
}

std::string int_ranges(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(values[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = text.find(separator, begin);
    parts.emplace_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

}  // namespace topsim
