#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

void one_of(ObjectReader& r, const std::string& key, const std::string& value, const std::vector<std::string>& valid) {
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) fail(r.at(key), unknown_name_message(key, value, valid));
}

ValidationRow read_row(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  ValidationRow row;
  row.where = where;
  row.id = r.string("id");
  row.kind = r.string("kind");
  one_of(r, "kind", row.kind, {"p2p", "coll", "training"});
  if (row.kind == "training") {
    row.scenario = r.string("scenario");
    row.variant = r.optional_string("variant").value_or("");
    row.count = r.integer("count", 1, 1 << 20);
    row.metric = r.string("metric");
    one_of(r, "metric", row.metric, {"throughput", "speedup"});
  } else {
    row.topology = r.string("topology");
    row.metric = r.string("metric");
    row.size_B = r.quantity("size", Quantity::size);
    row.peer_access = r.boolean("peer_access");
    if (row.kind == "p2p") {
      one_of(r, "metric", row.metric, {"uni_GBps", "bi_GBps", "latency_us"});
      row.src = r.integer("src", 0, 1 << 20);
      row.dst = r.integer("dst", 0, 1 << 20);
      if (row.src == row.dst) fail(r.at("dst"), "src and dst must differ");
      row.method = r.string("method");
      one_of(r, "method", row.method, {"write", "memcpy"});
    } else {
      one_of(r, "metric", row.metric, {"busbw_GBps", "time_us"});
      row.op = r.string("op");
      const Json& gpus = r.required("gpus");
      if (gpus.is_number_integer()) {
        int n = r.integer("gpus", 1, 1 << 20);
        for (int g = 0; g < n; ++g) row.gpus.push_back(g);
      } else {
        row.gpus = read_array(r, "gpus", [](const Json& v, const SourceRef& at) {
          if (!v.is_number_integer() || v.get<long long>() < 0) fail(at, "expected a GPU ordinal, got " + describe(v));
          return static_cast<int>(v.get<long long>());
        });
      }
      row.dtype = r.string("dtype");
      if (auto algo = r.optional_string("algo")) row.algo = *algo;
      if (auto proto = r.optional_string("proto")) row.proto = *proto;
      row.scale.nodes = r.optional_integer("nodes", 1, 1 << 20).value_or(0);
      if (auto nic = r.optional_string("nic")) row.scale.nic = *nic;
      row.scale.nics_per_node = r.optional_integer("nics_per_node", 1, 64).value_or(0);
      if (r.optional("gpu_direct")) row.gpu_direct = r.boolean("gpu_direct");
    }
  }
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
  one_of(r, "role", row.role, {"calibration", "check"});
  row.tolerance = r.optional_number("tolerance", 0, 10, true);
  row.source = r.string("source");
  r.finish();
  return row;
}

ValidationTarget read_target(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  ValidationTarget target;
  target.where = where;
  target.metric = r.string("metric");
  one_of(r, "metric", target.metric,
         {"uni_GBps", "bi_GBps", "latency_us", "busbw_GBps", "time_us", "throughput", "speedup"});
  target.geomean = r.optional_number("geomean", 0, 10, true);
  target.worst = r.optional_number("worst", 0, 10, true);
  if (!target.geomean && !target.worst) fail(where, "a target needs \"geomean\", \"worst\" or both");
  r.finish();
  return target;
}

}  // namespace

ValidationFile load_validation_file(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  ObjectReader r(document, SourceRef{path, ""});
  r.string("description");
  ValidationFile file;
  file.rows = read_array(r, "rows", read_row);
  for (std::size_t i = 0; i < file.rows.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (file.rows[j].id == file.rows[i].id)
        fail(file.rows[i].where.at("id"), "duplicate row id '" + file.rows[i].id + "'");
  if (r.has("targets")) file.targets = read_array(r, "targets", read_target);
  r.finish();
  return file;
}

}  // namespace topsim
