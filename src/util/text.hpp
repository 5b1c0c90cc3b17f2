#pragma once
// Small text helpers shared by every module: fixed-precision numbers, joins, "did you mean".
#include <string>
#include <string_view>
#include <vector>

namespace topsim {

/// Fixed-point text with `digits` decimals; "-0.00" is printed as "0.00" so outputs stay stable.
std::string fixed(double value, int digits);

/// Shortest round-trip text of a double ("25", "0.9067", "1e-06"), for echoing input values.
std::string shortest(double value);

std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// Parts of `text` between separators, empty parts kept ("a,,b" gives "a", "", "b").
std::vector<std::string> split(std::string_view text, char separator);

/// Levenshtein distance, used to suggest the closest known name for a typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a plausible typo, else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "unknown X 'y' (did you mean 'z'?); known: a, b, c", the one wording for failed lookups.
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known);

/// "0,1,2" or "0-3,8-11" (ascending ranges, inclusive) for --devices and --nodes; throws
/// ParseError naming the bad element, or the range that takes the list past 2^20 values.
std::vector<int> parse_int_list(std::string_view text);

/// The inverse: runs of consecutive ascending values as ranges, "0-7" or "0,2,4-6".
std::string int_ranges(const std::vector<int>& values);

}  // namespace topsim
