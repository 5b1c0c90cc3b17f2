// models/frameworks.json: training frameworks, optimizers and parameter sharding.
#include "io/model_reader.hpp"

namespace topsim {

namespace {
// NCCL type names a framework may all-reduce gradients in.
const std::vector<std::string>& gradient_dtypes() {
  static const std::vector<std::string> names = {"float", "half", "bfloat16"};
  return names;
}
}  // namespace

FrameworkModel read_framework(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<FrameworkModel>(name, value, where, [](ObjectReader& r, FrameworkModel& m, SourcedParameters& params) {
    m.bucket_B = params.quantity(r, "bucket", Quantity::size);
    if (m.bucket_B <= 0) fail(r.at("bucket"), "a gradient bucket holds at least one byte");
    m.first_bucket_B = params.optional_quantity(r, "first_bucket", Quantity::size).value_or(0);
    m.gradient_dtype = params.string(r, "gradient_dtype");
    const auto& valid = gradient_dtypes();
    if (std::find(valid.begin(), valid.end(), m.gradient_dtype) == valid.end())
      fail(r.at("gradient_dtype"), unknown_name_message("gradient_dtype", m.gradient_dtype, valid));
    m.step_overhead_s = params.quantity(r, "step_overhead", Quantity::time);
    m.elementwise_traffic = r.number("elementwise_traffic", 0, 1, true);
    params.add("elementwise_traffic");
  });
}

InferenceFrameworkModel read_inference_framework(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<InferenceFrameworkModel>(
      name, value, where, [](ObjectReader& r, InferenceFrameworkModel& m, SourcedParameters& params) {
        m.fuses_epilogues = r.boolean("fuses_epilogues");
        params.add("fuses_epilogues");
        m.fused_attention = r.boolean("fused_attention");
        params.add("fused_attention");
        m.dispatch_s = params.quantity(r, "dispatch", Quantity::time);
        m.sparse_transposes = r.number("sparse_transposes", 0, 16, false);
        params.add("sparse_transposes");
        m.query_s = params.quantity(r, "query", Quantity::time);
        m.tf32_convolutions = r.boolean("tf32_convolutions");
        params.add("tf32_convolutions");
        m.tf32_matmuls = r.boolean("tf32_matmuls");
        params.add("tf32_matmuls");
        m.packs_sequences = r.boolean("packs_sequences");
        params.add("packs_sequences");
      });
}

LatencyBound read_latency_bound(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<LatencyBound>(name, value, where, [](ObjectReader& r, LatencyBound& m, SourcedParameters& params) {
    m.model = r.string("model");  // a name, not a number: needs no source
    m.server_s = params.quantity(r, "server", Quantity::time);
    if (!(m.server_s > 0)) fail(r.at("server"), "a latency bound must be positive");
  });
}

OptimizerModel read_optimizer(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<OptimizerModel>(name, value, where, [](ObjectReader& r, OptimizerModel& m, SourcedParameters& params) {
    m.bytes_per_param = r.number("bytes_per_param", 0, 1024, true);
    params.add("bytes_per_param");
    m.state_bytes_per_param = r.number("state_bytes_per_param", 0, 1024, false);
    params.add("state_bytes_per_param");
  });
}

ShardingModel read_sharding(const std::string& name, const Json& value, const SourceRef& where) {
  return read_model<ShardingModel>(name, value, where, [](ObjectReader& r, ShardingModel& m, SourcedParameters& params) {
    m.gather_bucket_params = r.number("gather_bucket_params", 1, 1e15, false);
    params.add("gather_bucket_params");
    m.reduce_bucket_params = r.number("reduce_bucket_params", 1, 1e15, false);
    params.add("reduce_bucket_params");
    if (auto per_rank = r.optional_number("reduce_bucket_params_per_rank", 0, 1e15, true)) {
      m.reduce_bucket_params_per_rank = *per_rank;
      params.add("reduce_bucket_params_per_rank");
    }
  });
}

}  // namespace topsim
