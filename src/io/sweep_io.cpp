// Sweep definitions (scenarios/sweep-*.json) and sweep results (what `topsim sweep` writes).
#include <algorithm>
#include <set>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Largest grid a sweep file may describe. Every shard lays out every point's id (about 100
// bytes each) to fingerprint the grid, and one point runs in milliseconds to seconds: a million
// points is ~100 MB per shard and hours of work even split 100 ways. A grid of 10^7 points used
// 2.5 GB and ran past a minute before its first point (docs/limits.md).
constexpr long long kMaxSweepPoints = 1000000;

std::vector<std::string> read_names(ObjectReader& r, const std::string& key) {
  auto names = read_array(r, key, [](const Json& v, const SourceRef& at) { return read_string(v, at); });
  if (names.empty()) fail(r.at(key), "expected at least one name");
  return names;
}

SweepOverride read_override(const Json& value, const SourceRef& where) {
  ObjectReader r(value, where);
  SweepOverride o;
  o.where = where;
  o.name = r.string("name");
  if (o.name.empty() || o.name.find('/') != std::string::npos) fail(r.at("name"), "an override needs a name without '/'");
  o.algo = r.optional_string("algo").value_or("");
  o.proto = r.optional_string("proto").value_or("");
  o.channels = r.optional_integer("channels", 1, 64);
  if (r.has("peer_access")) o.peer_access = r.boolean("peer_access");
  if (r.has("gpu_direct")) o.gpu_direct = r.boolean("gpu_direct");
  r.finish();
  return o;
}

ResultValue read_value(const Json& v, const SourceRef& at) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return static_cast<long long>(v.get<long long>());
  if (v.is_number()) return v.get<double>();
  fail(at, "expected a string, number or boolean, got " + describe(v));
}

}  // namespace

bool is_sweep_file(const std::string& path) { return file_has_top_key(path, "sweep"); }

SweepSpec load_sweep(const std::string& path) { return parse_sweep(read_text_file(path), path); }

SweepSpec parse_sweep(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  ObjectReader file(document, SourceRef{path, ""});
  SweepSpec s;
  s.where = file.where();
  s.description = file.string("description");
  ObjectReader r(file.required("sweep"), file.at("sweep"));
  s.topologies = read_names(r, "topologies");
  if (r.has("gpus") == r.has("nodes"))
    fail(r.where(), "a sweep gives either \"gpus\" (GPU counts in one server) or \"nodes\" (server counts)");
  if (r.has("gpus")) s.gpus = read_rising_counts(r, "gpus");
  else s.nodes = read_rising_counts(r, "nodes");
  s.ops = read_names(r, "ops");
  s.sizes = read_names(r, "sizes");
  for (std::size_t i = 0; i < s.sizes.size(); ++i) s.sizes_B.push_back(read_quantity(Json(s.sizes[i]), r.at("sizes").at(i), Quantity::size));
  s.dtype = r.optional_string("dtype").value_or("float");
  s.nccl = r.optional_string("nccl").value_or("");
  if (r.has("overrides")) {
    s.overrides = read_array(r, "overrides", read_override);
    std::set<std::string> names;
    for (const auto& o : s.overrides)
      if (!names.insert(o.name).second) fail(o.where.at("name"), "override name '" + o.name + "' is used twice");
  } else {
    SweepOverride none;
    none.name = "default";
    s.overrides.push_back(none);
  }
  r.finish();
  // Counted in double: five factors of up to 10^6 entries each would overflow a long long.
  double points = double(s.topologies.size()) * double(s.gpus.size() + s.nodes.size()) * double(s.ops.size()) *
                  double(s.sizes.size()) * double(s.overrides.size());
  if (points > kMaxSweepPoints)
    fail(file.at("sweep"), "the grid has " + std::to_string(static_cast<long long>(points)) + " points (topologies x " +
                               (s.gpus.empty() ? "nodes" : "gpus") + " x ops x sizes x overrides), more than the " +
                               std::to_string(kMaxSweepPoints) +
                               " a sweep may have: split it into several sweep files (docs/limits.md)");
  const Json& sources = file.required("sources");
  expect_object(sources, file.at("sources"));
  if (sources.empty()) fail(file.at("sources"), "a sweep cites where its grid comes from (at least one source)");
  file.finish();
  return s;
}

namespace {

// Rows of a results array, keys in file order (the checked parse sorts them), so that a file
// read and written back keeps its bytes.
std::vector<ResultRow> read_rows(const Json& rows, const nlohmann::ordered_json& ordered_rows, const SourceRef& where,
                                 bool need_ids) {
  expect_array(rows, where);
  std::vector<ResultRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SourceRef at = where.at(i);
    expect_object(rows[i], at);
    ResultRow row;
    for (const auto& item : ordered_rows[i].items()) {
      Json value = Json::parse(item.value().dump());
      row.fields.emplace_back(item.key(), read_value(value, at.at(item.key())));
    }
    if (need_ids) {
      const ResultValue* point = row.get("point");
      const ResultValue* id = row.get("id");
      if (point == nullptr || !std::holds_alternative<long long>(*point)) fail(at, "a row needs an integer \"point\"");
      if (id == nullptr || !std::holds_alternative<std::string>(*id)) fail(at, "a row needs a string \"id\"");
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

ResultFile load_result_file(const std::string& path) { return parse_result_file(read_text_file(path), path); }

ResultFile parse_result_file(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  ObjectReader r(document, SourceRef{path, ""});
  ResultFile f;
  f.source = r.string("source");
  f.grid = r.string("grid");
  const Json& points = r.required("points");
  if (!points.is_number_integer() || points.get<long long>() < 0) fail(r.at("points"), "expected a point count");
  f.points = points.get<long long>();
  if (auto shard = r.optional_string("shard")) {
    auto slash = shard->find('/');
    try {
      if (slash == std::string::npos) throw ParseError("no '/'");
      f.shard_index = parse_int_list(shard->substr(0, slash)).at(0);
      f.shard_count = parse_int_list(shard->substr(slash + 1)).at(0);
    } catch (const std::exception&) {
      fail(r.at("shard"), "expected i/n, got '" + *shard + "'");
    }
  }
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
  f.rows = read_rows(r.required("rows"), ordered.at("rows"), r.at("rows"), true);
  r.finish();
  return f;
}

ResultFile load_result_rows(const std::string& path) { return parse_result_rows(read_text_file(path), path); }

ResultFile parse_result_rows(const std::string& text, const std::string& path) {
  Json document = parse_json_text(text, path);
  if (document.is_object()) return parse_result_file(text, path);
  ResultFile f;
  f.source = path;
  f.rows = read_rows(document, nlohmann::ordered_json::parse(text), SourceRef{path, ""}, false);
  f.points = static_cast<long long>(f.rows.size());
  return f;
}

}  // namespace topsim
