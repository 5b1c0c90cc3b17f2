// The JSON file nccl-tests writes with -J FILE (common.cu:1189, 1294; util.cu:317-379 top level,
// 642-665 config, 702-731 devices, 454-523 results, 782-793 trailer; JSON_FILE_VERSION 3 at
// util.cu:52). Read with io's JSON reader (io is where nlohmann/json is parsed).
#include "interop/nccl_tests_log.hpp"
#include "io/json_reader.hpp"

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
  p.count = static_cast<long long>(json_number_at(v, "count", at));
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
  r.rank = static_cast<int>(json_number_at(v, "rank", at));
  r.group = static_cast<int>(json_number_at(v, "group", at));
  r.pid = static_cast<int>(json_number_at(v, "pid", at));
  r.host = read_string(json_key(v, "hostname", at), at.at("hostname"));
  r.device = static_cast<int>(json_number_at(v, "device", at));
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
  run.nccl_version = nccl_version_of_code(static_cast<long long>(json_number_at(document, "nccl_version", top)));
  const Json& args = json_key(document, "args", top);
  expect_array(args, top.at("args"));
  if (!args.empty()) {
    std::string argv0 = read_string(args[0], top.at("args").at(std::size_t{0}));
    run.program = argv0.substr(argv0.find_last_of('/') == std::string::npos ? 0 : argv0.find_last_of('/') + 1);
  }
  SourceRef config_at = top.at("config");
  const Json& config = json_key(document, "config", top);
  run.threads = static_cast<int>(json_number_at(config, "nthreads", config_at));
  run.gpus_per_thread = static_cast<int>(json_number_at(config, "ngpus", config_at));
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
    run.out_of_bounds = static_cast<int>(json_number_at(document["out_of_bounds"], "count", top.at("out_of_bounds")));
  if (document.contains("average_bus_bandwidth")) {
    const Json& avg = document["average_bus_bandwidth"];
    const Json& bw = json_key(avg, "bandwidth", top.at("average_bus_bandwidth"));
    if (bw.is_number()) run.avg_busbw_GBps = bw.get<double>();  // "nan" (util.cu:293) when no result line ran
  }
  log.runs.push_back(std::move(run));
  return log;
}

}  // namespace topsim
