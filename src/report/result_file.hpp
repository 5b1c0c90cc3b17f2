#pragma once
// Sweep results as JSON: the one writer of what `topsim sweep` and `topsim merge` produce, so
// that merged shards and a single run give the same bytes.
#include <string>

#include "model/result_spec.hpp"

namespace topsim {

/// {"source", "grid", "points", "shard" (only for a share of the grid), "rows": [...]}, rows in
/// the order given, fields in their order, indented by two spaces, a final newline.
std::string result_file_text(const ResultFile& file);

/// A row's field as text, for titles and labels: strings as they are, integers plainly, other
/// numbers at their shortest, booleans as true/false; "" when the row has no such field.
std::string field_text(const ResultRow& row, const std::string& name);

}  // namespace topsim
