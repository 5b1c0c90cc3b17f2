#include "interop/nccl_tests_rows.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// The binaries nccl-tests builds (src/*.cu, one test each) against topsim's operation names.
// alltoallv, gather, scatter and hypercube have no topsim model.
const std::vector<std::pair<std::string, std::string>>& nccl_tests_programs() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"all_reduce_perf", "allreduce"}, {"all_gather_perf", "allgather"}, {"reduce_scatter_perf", "reducescatter"},
      {"broadcast_perf", "broadcast"},  {"reduce_perf", "reduce"},        {"alltoall_perf", "alltoall"},
      {"sendrecv_perf", "sendrecv"}};
  return table;
}

// Results from 64 MiB are compared as busbw and below as time, as the bundled nccl-tests rows are
// (scenarios/validation/nccl-public.json's description).
constexpr double kBusbwFrom_B = 64.0 * 1024 * 1024;

std::string log_source_id(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string(), id;
  for (char c : stem) {
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool kept = std::isalnum(static_cast<unsigned char>(lower)) != 0;
    if (kept) id += lower;
    else if (!id.empty() && id.back() != '-') id += '-';
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  return "nccl-tests-" + (id.empty() ? std::string("log") : id);
}

std::string row_size_text(double size_B) { return fixed(size_B, 0) + "B"; }

}  // namespace

std::string operation_of(const NcclTestsRun& run, const std::string& file, const std::string& op) {
  if (run.program.empty()) {
    if (!op.empty()) return op;
    throw InputError(file, std::to_string(run.header_line),
                     "this run does not name its program (no '# Collective test starting:' line, util.cu:624, or "
                     "-J args): give --op");
  }
  std::vector<std::string> known;
  for (const auto& [program, name] : nccl_tests_programs()) {
    if (run.program == program) return name;
    known.push_back(program);
  }
  throw InputError(file, std::to_string(run.program_line),
                   "operation '" + run.program + "' is not one topsim models; it models " + join(known, ", "));
}

std::string machine_of(const NcclTestsRun& run) {
  std::vector<std::string> names;
  for (const NcclTestsRank& r : run.ranks)
    if (std::find(names.begin(), names.end(), r.gpu_name) == names.end()) names.push_back(r.gpu_name);
  std::vector<std::string> hosts = run.hosts();
  std::string text = std::to_string(run.gpu_count()) + " GPUs";
  if (!names.empty()) text += " (" + join(names, ", ") + ")";
  if (!hosts.empty())
    text += " on " + std::to_string(hosts.size()) + (hosts.size() == 1 ? " host (" : " hosts (") + join(hosts, ", ") + ")";
  text += ", NCCL " + (run.nccl_version.empty() ? std::string("version not printed") : run.nccl_version);
  if (!run.tests_version.empty()) text += ", nccl-tests " + run.tests_version;
  return text;
}

MeasuredRows measured_rows(const std::vector<NcclTestsLog>& logs, const std::string& topology, int nodes,
                           const std::string& op, const std::string& gpu) {
  MeasuredRows out;
  std::vector<std::string> parts;
  std::map<std::string, int> ids;  // -N (common.cu:934) prints each size once per cycle: later ones get "/cycleK"
  for (const NcclTestsLog& log : logs) {
    std::string source = log_source_id(log.file);
    for (int k = 2; out.sources.count(source); ++k) source = log_source_id(log.file) + "-" + std::to_string(k);
    std::vector<std::string> runs_text;
    for (std::size_t k = 0; k < log.runs.size(); ++k) {
      const NcclTestsRun& run = log.runs[k];
      std::string name = operation_of(run, log.file, op);
      runs_text.push_back((run.program.empty() ? name : run.program) + " -b " + fixed(run.min_B, 0) + " -e " +
                          fixed(run.max_B, 0) + ": " + machine_of(run));
      int hosts = static_cast<int>(run.hosts().size());
      for (std::size_t i = 0; i < run.points.size(); ++i) {
        const NcclTestsPoint& p = run.points[i];
        ValidationRow row;
        row.id = source + (log.runs.size() > 1 ? "/run" + std::to_string(k + 1) : "") + "/" + name + "/" +
                 std::to_string(run.gpu_count()) + "gpu/" + row_size_text(p.size_B);
        int seen = ++ids[row.id];
        if (seen > 1) row.id += "/cycle" + std::to_string(seen);
        row.kind = "coll";
        row.topology = topology;
        row.gpu = gpu;
        row.op = name;
        for (int g = 0; g < run.gpu_count(); ++g) row.gpus.push_back(g);
        row.size_B = p.size_B;
        row.dtype = p.type;
        row.scale.nodes = nodes > 0 ? nodes : hosts > 1 ? hosts : 0;
        row.nccl = run.nccl_version;
        row.gpus_per_thread = std::max(1, std::min(run.gpus_per_thread, run.gpu_count()));
        bool busbw = p.size_B >= kBusbwFrom_B;
        row.metric = busbw ? "busbw_GBps" : "time_us";
        row.measured_low = row.measured_high = busbw ? p.out_of_place.busbw_GBps : p.out_of_place.time_us;
        row.role = "check";
        row.source = source;
        row.note = log.file + ":" + place_of(p, i) + ": out-of-place " + fixed(p.out_of_place.time_us, 2) +
                   " us, busbw " + fixed(p.out_of_place.busbw_GBps, 2) + " GB/s; in-place " + fixed(p.in_place.time_us, 2) +
                   " us, busbw " + fixed(p.in_place.busbw_GBps, 2) + " GB/s" +
                   (p.root >= 0 ? "; root " + std::to_string(p.root) : "");
        if (row.measured_low > 0) out.rows.push_back(row);
      }
    }
    out.sources[source] = "nccl-tests output " + log.file + ": " + join(runs_text, "; ");
    parts.push_back(log.file);
  }
  if (out.rows.empty())
    throw InputError(logs.empty() ? "" : logs.front().file, "",
                     "no result lines with a positive figure (nccl-tests prints them under '#  size  count  type ...', util.cu:757)");
  out.description = "nccl-tests results of " + join(parts, ", ") + " (topsim import nccl-tests): one row per result line, " +
                    "out-of-place, busbw_GBps from 64 MiB and time_us below; what each log says of its machine is in its source.";
  return out;
}

std::string write_validation_json(const MeasuredRows& rows) {
  using Ordered = nlohmann::ordered_json;
  auto dump = [](const Ordered& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  std::string out = "{\n  \"description\": " + dump(Ordered(rows.description)) + ",\n  \"sources\": {\n";
  std::size_t i = 0;
  for (const auto& [id, text] : rows.sources)
    out += "    " + dump(Ordered(id)) + ": " + dump(Ordered(text)) + (++i < rows.sources.size() ? ",\n" : "\n");
  out += "  },\n  \"rows\": [\n";
  for (std::size_t r = 0; r < rows.rows.size(); ++r) {
    const ValidationRow& v = rows.rows[r];
    Ordered j;
    j["id"] = v.id;
    j["kind"] = v.kind;
    j["topology"] = v.topology;
    if (!v.gpu.empty()) j["gpu"] = v.gpu;
    j["op"] = v.op;
    j["gpus"] = static_cast<int>(v.gpus.size());
    if (v.scale.nodes > 0) j["nodes"] = v.scale.nodes;
    j["size"] = row_size_text(v.size_B);
    j["dtype"] = v.dtype;
    j["peer_access"] = true;
    if (v.gpus_per_thread > 1) j["gpus_per_thread"] = v.gpus_per_thread;
    if (!v.nccl.empty()) j["nccl"] = v.nccl;
    j["metric"] = v.metric;
    j["measured"] = v.measured_low;
    j["role"] = v.role;
    j["source"] = v.source;
    j["note"] = v.note;
    out += "    " + dump(j) + (r + 1 < rows.rows.size() ? ",\n" : "\n");
  }
  return out + "  ]\n}\n";
}

}  // namespace topsim
