#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

ValidationRow read_row(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  ValidationRow row;
  row.where = where;
  row.id = r.string("id");
  row.topology = r.string("topology");
  row.metric = r.string("metric");
  const std::vector<std::string> metrics = {"uni_GBps", "bi_GBps", "latency_us"};
  if (std::find(metrics.begin(), metrics.end(), row.metric) == metrics.end())
    fail(r.at("metric"), unknown_name_message("metric", row.metric, metrics));
  row.src = r.integer("src", 0, 1 << 20);
  row.dst = r.integer("dst", 0, 1 << 20);
  if (row.src == row.dst) fail(r.at("dst"), "src and dst must differ");
  row.size_B = r.quantity("size", Quantity::size);
  row.method = r.string("method");
  if (row.method != "write" && row.method != "memcpy")
    fail(r.at("method"), unknown_name_message("copy method", row.method, {"write", "memcpy"}));
  row.peer_access = r.boolean("peer_access");
  const Json& measured = r.required("measured");
  if (measured.is_number()) {
    row.measured_low = row.measured_high = measured.get<double>();
  } else if (measured.is_array() && measured.size() == 2 && measured[0].is_number() && measured[1].is_number()) {
    row.measured_low = measured[0].get<double>();
    row.measured_high = measured[1].get<double>();
  } else {
    fail(r.at("measured"), "expected a number or a [low, high] pair of numbers, got " + describe(measured));
  }
  if (!(row.measured_low > 0) || row.measured_high < row.measured_low)
    fail(r.at("measured"), "measured figures must be positive with low <= high");
  row.role = r.string("role");
  if (row.role != "calibration" && row.role != "check")
    fail(r.at("role"), unknown_name_message("role", row.role, {"calibration", "check"}));
  row.tolerance = r.optional_number("tolerance", 0, 10, true);
  row.source = r.string("source");
  r.finish();
  return row;
}

}  // namespace

std::vector<ValidationRow> load_validation_rows(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  ObjectReader r(document, SourceRef{path, ""});
  r.string("description");
  std::vector<ValidationRow> out = read_array(r, "rows", read_row);
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[j].id == out[i].id) fail(out[i].where.at("id"), "duplicate row id '" + out[i].id + "'");
  r.finish();
  return out;
}

}  // namespace topsim
