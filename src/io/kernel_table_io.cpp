// Kernel tables (CSV): NVIDIA's aiconfigurator GEMM and attention latency tables, as written in
// shared/reference/kernels, or the same columns without the provenance or the latency.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// The columns a file may lead with (where a row was measured) and end with (the measurement).
const std::vector<std::string>& provenance_columns() {
  static const std::vector<std::string> columns = {"gpu", "device", "framework", "version", "kernel_source"};
  return columns;
}
const std::vector<std::string>& gemm_columns() {
  static const std::vector<std::string> columns = {"gemm_dtype", "m", "n", "k"};
  return columns;
}
const std::vector<std::string>& attention_columns() {
  static const std::vector<std::string> columns = {"attn_dtype", "kv_cache_dtype", "batch_size", "isl", "step",
                                                   "num_heads", "num_key_value_heads", "head_dim"};
  return columns;
}
constexpr const char* kLatencyColumn = "latency_us";
constexpr double kUsPerS = 1e6;

// One CSV line split into fields; RFC 4180 quotes ("a,b", "say ""x""") are undone.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

struct Layout {
  KernelFamily family = KernelFamily::gemm;  ///< gemm, or prefill for attention (decode by row)
  bool provenance = false;
  bool latency = false;
};

std::string header_help() {
  return "expected a GEMM header " + join(provenance_columns(), ",") + "," + join(gemm_columns(), ",") + "," +
         kLatencyColumn + " or an attention header " + join(provenance_columns(), ",") + "," +
         join(attention_columns(), ",") + "," + kLatencyColumn + " (the leading " + join(provenance_columns(), ",") +
         " and the trailing " + kLatencyColumn + " may be left out)";
}

Layout layout_of(const std::vector<std::string>& header, const std::string& file) {
  for (bool provenance : {true, false})
    for (bool latency : {true, false})
      for (KernelFamily family : {KernelFamily::gemm, KernelFamily::prefill}) {
        std::vector<std::string> expected = provenance ? provenance_columns() : std::vector<std::string>{};
        const auto& core = family == KernelFamily::gemm ? gemm_columns() : attention_columns();
        expected.insert(expected.end(), core.begin(), core.end());
        if (latency) expected.emplace_back(kLatencyColumn);
        if (header == expected) return {family, provenance, latency};
      }
  throw InputError(file, "1", "unknown header '" + join(header, ",") + "'; " + header_help());
}

class RowReader {
 public:
  RowReader(const std::string& file, int line, const std::vector<std::string>& header, const std::vector<std::string>& cells)
      : file_(file), line_(line), header_(header), cells_(cells) {}

  bool has(const std::string& column) const {
    return std::find(header_.begin(), header_.end(), column) != header_.end();
  }
  const std::string& cell(const std::string& column) const {
    return cells_[std::find(header_.begin(), header_.end(), column) - header_.begin()];
  }
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    throw InputError(file_, std::to_string(line_), "column " + column + ": " + message);
  }
  /// A whole number >= minimum (1 for sizes, 0 for a decode step).
  double integer(const std::string& column, long long minimum) const {
    const std::string& text = cell(column);
    char* end = nullptr;
    long long value = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || text.size() > 12)
      fail(column, "'" + text + "' is not a whole number");
    if (value < minimum)
      fail(column, "'" + text + "' must be " + (minimum == 0 ? "0 or more" : "a positive whole number"));
    return static_cast<double>(value);
  }
  double positive(const std::string& column) const {
    const std::string& text = cell(column);
    char* end = nullptr;
    double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value)) fail(column, "'" + text + "' is not a number");
    if (!(value > 0)) fail(column, "'" + text + "' must be positive");
    return value;
  }
  /// A dtype as the tables write it, in topsim's name; `valid` lists what the column takes.
  std::string dtype(const std::string& column, const std::vector<std::string>& valid) const {
    const std::string& text = cell(column);
    std::string name = dtype_from_table(text);
    if (name.empty() || (!valid.empty() && std::find(valid.begin(), valid.end(), name) == valid.end()))
      fail(column, "unknown dtype '" + text + "'; valid: " + join(valid, ", ") +
                       " (the tables' bfloat16 and float16 read as bf16 and fp16)");
    return name;
  }

 private:
  const std::string& file_;
  int line_;
  const std::vector<std::string>& header_;
  const std::vector<std::string>& cells_;
};

/// The collector version (A100's tables) whose GEMM replays rotated a fixed 5 weight copies
/// (collect_gemm.py at e46d9089f:61-118) and whose attention allocated a K-only cache
/// (collect_attn.py at e46d9089f:101), as the README of shared/reference/kernels reads them.
constexpr const char* kFiveCopiesVersion = "1.0.0";

KernelRow gemm_row(const RowReader& r) {
  KernelRow row;
  row.family = KernelFamily::gemm;
  row.gemm.dtype = r.dtype("gemm_dtype", gemm_dtypes());
  row.gemm.m = r.integer("m", 1);
  row.gemm.n = r.integer("n", 1);
  row.gemm.k = r.integer("k", 1);
  // Every row is timed as the collector replays it (shared/reference/kernels/README.md,
  // "Measurement"): the 1.0.0 collector (A100) rotated 5 weight copies, later ones
  // min(5, ceil(L2 / weight)); a row without its version is taken as the later rule.
  row.gemm.weight_copies = r.has("version") && r.cell("version") == kFiveCopiesVersion ? 5 : kReplayWeightCopies;
  return row;
}

KernelRow attention_row(const RowReader& r) {
  KernelRow row;
  AttentionShape& a = row.attention;
  a.dtype = r.dtype("attn_dtype", attention_dtypes());
  a.kv_dtype = r.dtype("kv_cache_dtype", attention_dtypes());
  a.batch = r.integer("batch_size", 1);
  double isl = r.integer("isl", 1);
  double step = r.integer("step", 0);
  a.heads = r.integer("num_heads", 1);
  a.kv_heads = r.integer("num_key_value_heads", 1);
  a.head_dim = r.integer("head_dim", 1);
  if (std::fmod(a.heads, a.kv_heads) != 0)
    r.fail("num_key_value_heads", "num_heads " + r.cell("num_heads") + " is not a multiple of num_key_value_heads " +
                                      r.cell("num_key_value_heads") + " (GQA/MQA share each KV head among whole groups)");
  // The tables' convention: step 0 is a context (prefill) call over isl tokens, nothing cached;
  // step > 0 is one generated token per sequence against step cached tokens.
  a.phase = step == 0 ? KernelFamily::prefill : KernelFamily::decode;
  a.q_len = step == 0 ? isl : 1;
  a.kv_len = step == 0 ? isl : step;
  // The 1.0.0 attention collector allocated a K-only cache (README of shared/reference/kernels).
  a.k_only_cache = r.has("version") && r.cell("version") == kFiveCopiesVersion;
  row.family = a.phase;
  return row;
}

}  // namespace

// What the tables hold (bf16 everywhere, fp8 context FMHA and fp8 KV caches) and fp16; names
// outside it are refused before the model sees them.
const std::vector<std::string>& attention_dtypes() {
  static const std::vector<std::string> dtypes = {"bf16", "fp16", "fp8"};
  return dtypes;
}

KernelTable parse_kernel_table(const std::string& text, const std::string& path) {
  KernelTable table;
  table.file = path;
  std::vector<std::string> lines = split(text, '\n');
  for (std::string& line : lines)
    if (!line.empty() && line.back() == '\r') line.pop_back();
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) throw InputError(path, "1", "empty file; " + header_help());
  table.header = csv_fields(lines[0]);
  Layout layout = layout_of(table.header, path);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    int line = static_cast<int>(i + 1);
    if (lines[i].empty()) throw InputError(path, std::to_string(line), "empty line inside the table");
    KernelTable::Row row;
    row.line = line;
    row.cells = csv_fields(lines[i]);
    if (row.cells.size() != table.header.size())
      throw InputError(path, std::to_string(line),
                       std::to_string(row.cells.size()) + " columns; the header has " + std::to_string(table.header.size()) +
                           " (" + join(table.header, ",") + ")");
    RowReader reader(path, line, table.header, row.cells);
    row.row = layout.family == KernelFamily::gemm ? gemm_row(reader) : attention_row(reader);
    if (layout.latency) row.row.measured_s = reader.positive(kLatencyColumn) / kUsPerS;
    if (layout.provenance) {
      row.gpu = reader.cell("gpu");
      row.device = reader.cell("device");
      row.kernel_source = reader.cell("kernel_source");
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

KernelTable load_kernel_table(const std::string& path) { return parse_kernel_table(read_text_file(path), path); }

}  // namespace topsim
