#include <filesystem>
#include <map>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "io/model_reader.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

void one_of(ObjectReader& r, const std::string& key, const std::string& value, const std::vector<std::string>& valid) {
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) fail(r.at(key), unknown_name_message(key, value, valid));
}

void read_coll_keys(ObjectReader& r, ValidationRow& row) {
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
  if (auto nccl = r.optional_string("nccl")) row.nccl = *nccl;
  row.gpus_per_thread = r.optional_integer("gpus_per_thread", 1, static_cast<int>(row.gpus.size())).value_or(1);
  if (auto gpu = r.optional_string("gpu")) row.gpu = *gpu;  // the model it ran on, replacing the topology's
}

void read_kernel_keys(ObjectReader& r, ValidationRow& row) {
  row.gpu = r.string("gpu");
  std::vector<double> shape = read_array(r, "gemm", [](const Json& v, const SourceRef& at) {
    if (!v.is_number_integer() || v.get<long long>() < 1) fail(at, "expected a positive integer, got " + describe(v));
    return static_cast<double>(v.get<long long>());
  });
  if (shape.size() != 3) fail(r.at("gemm"), "expected [M, N, K], three positive integers");
  row.gemm_m = shape[0];
  row.gemm_n = shape[1];
  row.gemm_k = shape[2];
  row.dtype = r.string("dtype");
  one_of(r, "dtype", row.dtype, math_dtypes());
  std::string sparsity = r.string("sparsity");
  one_of(r, "sparsity", sparsity, {"dense", "2:4"});
  row.sparse = sparsity == "2:4";
}

// Metrics as the sources print them: time_ms of one batch (TensorRT demo, PyTorch tutorial),
// throughput in samples/s (MLPerf Offline, Server), latency_ms of one sample (MLPerf
// SingleStream's 90th percentile), speedup of the 2:4 sparse model over the dense one.
void read_inference_keys(ObjectReader& r, ValidationRow& row) {
  one_of(r, "metric", row.metric, {"time_ms", "throughput", "latency_ms", "speedup"});
  row.model = r.string("model");
  row.gpu = r.string("gpu");
  if (auto mig = r.optional_string("mig")) row.mig = *mig;
  row.count = r.optional_integer("count", 1, 1 << 20).value_or(1);
  row.batch = r.optional_integer("batch", 1, 1 << 20).value_or(0);
  row.seq = r.optional_integer("seq", 1, 1 << 20).value_or(0);
  if (auto seq_dist = r.optional_string("seq_dist")) {
    if (seq_dist->empty()) fail(r.at("seq_dist"), "expected a sequence-length file, relative to this file's directory");
    const std::filesystem::path path = std::filesystem::path(row.where.file).parent_path() / *seq_dist;
    row.seq_lengths = load_sequence_lengths(path.lexically_normal().string());
  }
  row.precision = r.string("precision");
  one_of(r, "precision", row.precision, {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"});
  if (auto sparsity = r.optional_string("sparsity")) {
    one_of(r, "sparsity", *sparsity, {"dense", "2:4"});
    row.sparse = *sparsity == "2:4";
  }
  if (row.metric == "speedup" && !row.sparse) fail(r.at("metric"), "a speedup row compares a 2:4 sparse model with its dense twin: give \"sparsity\": \"2:4\"");
  row.framework = r.string("framework");
  if (auto serving = r.optional_string("scenario")) {
    row.serving = *serving;
    one_of(r, "scenario", row.serving, {"offline", "server", "single-stream"});
  }
  const bool per_batch = row.metric == "time_ms" || row.metric == "speedup";
  if (per_batch && row.batch <= 0) fail(r.at("metric"), row.metric + " is a batch's time: the row needs \"batch\"");
  if (row.metric == "throughput" && row.serving.empty()) fail(r.at("metric"), "throughput needs a \"scenario\": offline or server");
  if (row.metric == "latency_ms" && row.serving != "single-stream") fail(r.at("metric"), "latency_ms is MLPerf SingleStream's: give \"scenario\": \"single-stream\"");
}

void read_role(ObjectReader& r, ValidationRow& row) {
  row.role = r.string("role");
  one_of(r, "role", row.role, {"calibration", "check", "repeat", "informational", "pending"});
  // Each role but check and informational has one key of its own, required there and nowhere else.
  struct RoleKey {
    const char* key;
    const char* role;
    std::string* value;
    const char* what;  ///< completes "a <role> row ..."
  };
  for (const RoleKey& k :
       {RoleKey{"pins", "calibration", &row.pins, "pins a constant: add \"pins\" with the id of the fitted constant it pins"},
        RoleKey{"repeats", "repeat", &row.repeats, "repeats a row: add \"repeats\" with the id of the row whose figure it repeats"},
        RoleKey{"missing", "pending", &row.missing, "names what topsim lacks: add \"missing\" saying what it lacks to predict it"}}) {
    if (row.role == k.role) {
      if (!r.has(k.key) || (*k.value = r.string(k.key)).empty())
        fail(r.has(k.key) ? r.at(k.key) : r.where(), std::string("a ") + k.role + " row " + k.what);
    } else if (r.has(k.key)) {
      fail(r.at(k.key), std::string("\"") + k.key + "\" belongs to " + k.role + " rows only; this row's role is " + row.role);
    }
  }
}

ValidationRow read_row(const Json& value, const SourceRef& where, const std::map<std::string, std::string>& sources) {
  ObjectReader r(value, where);
  ValidationRow row;
  row.where = where;
  row.id = r.string("id");
  read_role(r, row);
  bool pending = row.role == "pending";
  row.kind = r.string("kind");
  row.metric = r.string("metric");
  // A pending row may be of a kind topsim does not predict at all yet (inference, LLM layouts):
  // its keys are then kept as they are, shown, never read into a simulation.
  if (pending) {
    for (const auto& item : value.items()) r.optional(item.key());
    if (r.has("size") && r.required("size").is_string()) row.size_B = r.quantity("size", Quantity::size);
    if (r.has("nodes")) row.scale.nodes = r.integer("nodes", 1, 1 << 20);
    if (auto topology = r.optional("topology"); topology != nullptr && topology->is_string()) row.topology = r.string("topology");
  } else if (row.kind == "training") {
    row.scenario = r.string("scenario");
    row.variant = r.optional_string("variant").value_or("");
    row.count = r.integer("count", 1, 1 << 20);
    one_of(r, "metric", row.metric, {"throughput", "speedup"});
  } else if (row.kind == "llm") {
    // Metrics as each source prints them (docs/llm.md): hw_tflops_per_gpu counts recomputation.
    one_of(r, "metric", row.metric, {"iteration_s", "tflops_per_gpu", "hw_tflops_per_gpu", "mfu", "tokens_per_s_per_gpu"});
    row.model = r.string("model");
    row.topology = r.string("topology");
    row.count = r.integer("gpus", 1, 1 << 20);
    if (auto gpu = r.optional_string("gpu")) row.gpu = *gpu;
    if (auto nic = r.optional_string("nic")) row.scale.nic = *nic;
    if (auto nccl = r.optional_string("nccl")) row.nccl = *nccl;
    row.layout = read_llm_layout(r.required("layout"), r.at("layout"));
  } else if (row.kind == "kernel") {
    one_of(r, "metric", row.metric, {"time_us"});
    read_kernel_keys(r, row);
  } else if (row.kind == "inference") {
    read_inference_keys(r, row);
  } else {
    one_of(r, "kind", row.kind, {"p2p", "coll", "training", "llm", "kernel", "inference"});
    row.topology = r.string("topology");
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
      read_coll_keys(r, row);
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
  row.tolerance = r.optional_number("tolerance", 0, 10, true);
  row.note = r.optional_string("note").value_or("");
  row.source = r.string("source");
  auto cited = sources.find(row.source);
  if (cited == sources.end()) {
    std::vector<std::string> ids;
    for (const auto& [id, text] : sources) ids.push_back(id);
    fail(r.at("source"), unknown_name_message("source", row.source, ids) + " (declare it in the file's \"sources\")");
  }
  row.citation = cited->second;
  r.finish();
  return row;
}

}  // namespace

ValidationFile load_validation_file(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  ObjectReader r(document, SourceRef{path, ""});
  r.string("description");
  ValidationFile file;
  std::map<std::string, std::string> sources;
  const Json& declared = r.required("sources");
  expect_object(declared, r.at("sources"));
  for (const auto& item : declared.items()) {
    SourceRef at = r.at("sources").at(item.key());
    if (item.key().empty() || item.key().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      fail(at, "a source id is lowercase letters, digits and '-' (it is what --leave-out takes)");
    sources[item.key()] = read_string(item.value(), at);
  }
  file.rows = read_array(r, "rows", [&](const Json& v, const SourceRef& at) { return read_row(v, at, sources); });
  for (std::size_t i = 0; i < file.rows.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (file.rows[j].id == file.rows[i].id)
        fail(file.rows[i].where.at("id"), "duplicate row id '" + file.rows[i].id + "'");
  r.finish();
  return file;
}

}  // namespace topsim
