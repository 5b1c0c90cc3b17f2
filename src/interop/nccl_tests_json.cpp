// The JSON file nccl-tests writes with -J FILE (common.cu:1189, 1294; util.cu:317-379 top level,
// 642-665 config, 702-731 devices, 454-523 results, 782-793 trailer; JSON_FILE_VERSION 3 at
// util.cu:52). Read with io's JSON reader (io is where nlohmann/json is parsed).
#include "interop/nccl_tests_log.hpp"
#include "io/json_reader.hpp"

#include <cmath>

namespace topsim {

namespace {

const Json& json_key(const Json& object, const std::string& key, const SourceRef& where) {
  expect_object(object, where);
  auto it = object.find(key);
  if (it == object.end()) fail(where, "missing key '" + key + "' (nccl-tests -J writes it; util.cu:317-794)");
  return *it;
}

double json_number_at(const Json& object, const std::string& key, const SourceRef& where) {
  const Json& v = json_key(object, key, where);
  if (!v.is_number() || v.get<double>() < 0) fail(where.at(key), "expected a non-negative number, got " + describe(v));
  return v.get<double>();
}

// A count that must fit an int (ranks, devices, threads).
int json_count(const Json& object, const std::string& key, const SourceRef& where) {
  double v = json_number_at(object, key, where);
  if (v != std::floor(v) || v > (1 << 20)) fail(where.at(key), "expected a whole number up to 1048576, got " + describe(object[key]));
  return static_cast<int>(v);
}

NcclTestsTiming json_timing(const Json& object, const SourceRef& where, bool cputime) {
  NcclTestsTiming t;
  t.time_us = json_number_at(object, cputime ? "cpu_time" : "time", where);
  t.algbw_GBps = json_number_at(object, "alg_bw", where);
  t.busbw_GBps = json_number_at(object, "bus_bw", where);
  const Json& wrong = json_key(object, "nwrong", where);
  if (wrong.is_number()) t.wrong = wrong.get<double>();
  else if (!wrong.is_null()) fail(where.at("nwrong"), "expected a number or null, got " + describe(wrong));
  return t;
}

NcclTestsPoint json_point(const Json& v, const SourceRef& at) {
  NcclTestsPoint p;
  p.size_B = json_number_at(v, "size", at);
  double count = json_number_at(v, "count", at);
  if (p.size_B > 4.5e15 || count > 4.5e15) fail(at, "size or count beyond 2^52");
  p.count = static_cast<long long>(count);
  p.type = read_string(json_key(v, "type", at), at.at("type"));
  p.redop = read_string(json_key(v, "redop", at), at.at("redop"));
  // util.cu:456 writes the root as the "%6i" text the table prints.
  std::string root = read_string(json_key(v, "root", at), at.at("root"));
  try {
    p.root = std::stoi(root);
  } catch (const std::exception&) {
    fail(at.at("root"), "expected a rank as text (\"    -1\"), got \"" + root + "\"");
  }
  const Json& out = json_key(v, "out_of_place", at);
  bool cputime = !out.is_null() && out.is_object() && out.contains("cpu_time");
  p.out_of_place = json_timing(out, at.at("out_of_place"), cputime);
  p.in_place = json_timing(json_key(v, "in_place", at), at.at("in_place"), cputime);
  return p;
}

NcclTestsRank json_rank(const Json& v, const SourceRef& at) {
  NcclTestsRank r;
  r.rank = json_count(v, "rank", at);
  r.group = json_count(v, "group", at);
  r.pid = json_count(v, "pid", at);
  r.host = read_string(json_key(v, "hostname", at), at.at("hostname"));
  r.device = json_count(v, "device", at);
  r.bus_id = read_string(json_key(v, "device_hex", at), at.at("device_hex"));
  r.gpu_name = read_string(json_key(v, "device_info", at), at.at("device_info"));
  return r;
}

}  // namespace

NcclTestsLog parse_nccl_tests_json(const std::string& text, const std::string& file) {
  Json document = parse_json_text(text, file);
  SourceRef top{file, ""};
  NcclTestsLog log;
  log.file = file;
  NcclTestsRun run;
  double version = json_number_at(document, "version", top);
  if (version != 3) fail(top.at("version"), "JSON file version " + describe(document["version"]) + "; topsim reads version 3 (util.cu:52)");
  run.nccl_version = nccl_version_of_code(json_count(document, "nccl_version", top));
  const Json& args = json_key(document, "args", top);
  expect_array(args, top.at("args"));
  if (!args.empty()) {
    std::string argv0 = read_string(args[0], top.at("args").at(std::size_t{0}));
    run.program = argv0.substr(argv0.find_last_of('/') == std::string::npos ? 0 : argv0.find_last_of('/') + 1);
  }
  SourceRef config_at = top.at("config");
  const Json& config = json_key(document, "config", top);
  run.threads = json_count(config, "nthreads", config_at);
  run.gpus_per_thread = json_count(config, "ngpus", config_at);
  if (static_cast<long long>(run.threads) * run.gpus_per_thread > (1 << 20))
    fail(config_at, "nthreads x ngpus above 1048576 ranks");
  run.min_B = json_number_at(config, "minimum_bytes", config_at);
  run.max_B = json_number_at(config, "maximum_bytes", config_at);
  const Json& devices = json_key(config, "devices", config_at);
  expect_array(devices, config_at.at("devices"));
  for (std::size_t i = 0; i < devices.size(); ++i) run.ranks.push_back(json_rank(devices[i], config_at.at("devices").at(i)));
  const Json& results = json_key(document, "results", top);
  expect_array(results, top.at("results"));
  for (std::size_t i = 0; i < results.size(); ++i) {
    run.points.push_back(json_point(results[i], top.at("results").at(i)));
    run.cputime = run.cputime || results[i]["out_of_place"].contains("cpu_time");
  }
  if (document.contains("out_of_bounds"))
    run.out_of_bounds = json_count(document["out_of_bounds"], "count", top.at("out_of_bounds"));
  if (document.contains("average_bus_bandwidth")) {
    const Json& avg = document["average_bus_bandwidth"];
    const Json& bw = json_key(avg, "bandwidth", top.at("average_bus_bandwidth"));
    if (bw.is_number()) run.avg_busbw_GBps = bw.get<double>();  // "nan" (util.cu:293) when no result line ran
  }
  log.runs.push_back(std::move(run));
  return log;
}

}  // namespace topsim
