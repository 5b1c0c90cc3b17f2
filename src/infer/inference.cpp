#include "infer/inference.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/text.hpp"

namespace topsim {

namespace {

/// Tokens a decoder generates when the request does not say.
constexpr int kDefaultOutputTokens = 128;
/// Largest batch infer tries when it picks one (powers of two up to it).
constexpr double kLargestBatch = 4096;

const std::vector<std::pair<std::string, ServingScenario>>& scenario_names() {
  static const std::vector<std::pair<std::string, ServingScenario>> names = {
      {"offline", ServingScenario::offline}, {"server", ServingScenario::server},
      {"single-stream", ServingScenario::single_stream}};
  return names;
}

/// The model a request names, as one of the two kinds infer serves.
struct ServedModel {
  const Network* network = nullptr;
  const TransformerSpec* transformer = nullptr;
  bool decoder() const { return transformer != nullptr && !transformer->encoder; }
};

ServedModel find_model(const Catalog& catalog, const std::string& name) {
  ServedModel m;
  auto n = catalog.networks().find(name);
  if (n != catalog.networks().end()) m.network = &n->second;
  auto t = catalog.transformers().find(name);
  if (t != catalog.transformers().end()) m.transformer = &t->second;
  if (m.network == nullptr && m.transformer == nullptr) {
    std::vector<std::string> names;
    for (const auto& entry : catalog.networks()) names.push_back(entry.first);
    for (const auto& entry : catalog.transformers()) names.push_back(entry.first);
    throw std::invalid_argument(unknown_name_message("model", name, names));
  }
  // A name both files define would be ambiguous; the catalog's unique names rule it out.
  return m;
}

/// Why `gpu` cannot run the shape's math (its precision, or 2:4 sparse math), or "".
std::string math_unavailable(const GpuModel& gpu, const InferenceShape& shape) {
  Kernel probe;
  probe.dtype = math_dtype(shape.precision);
  probe.sparse = shape.sparse;
  return kernel_unavailable(gpu, probe);
}

/// One copy at one batch, before scaling by copies and instances.
InferenceResult serve_batch(const Catalog& catalog, const GpuModel& gpu, const ServedModel& model,
                            const InferenceRequest& request, double batch, const AllReduceTime& allreduce) {
  const ComputeModel& compute = catalog.compute(gpu.architecture, gpu.where);
  const InferenceFrameworkModel& framework = catalog.inference_framework(request.framework, {});
  InferenceShape shape = request.shape;
  shape.batch = batch;
  InferenceResult r;
  r.gpu = gpu.name;
  r.batch = batch;
  r.seq = shape.seq;
  double activations_B = 0;
  if (!model.decoder()) {
    // A CNN or an encoder: one forward pass of the batch.
    InferencePass pass = model.network != nullptr ? network_forward(*model.network, framework, shape)
                                                  : transformer_forward(*model.transformer, framework, shape);
    apply_precision_defaults(pass, framework, gpu, request.allow_tf32);
    r.parts = time_pass(gpu, compute, framework, pass, allreduce);
    r.latency_s = r.parts.total_s();
    r.throughput = batch / r.latency_s;
    r.unit = "samples/s";
    r.weights_B = model.network != nullptr ? network_weights_B(*model.network, shape)
                                           : transformer_weights_B(*model.transformer, shape);
    activations_B = 2 * pass_activation_B(pass);
  } else {
    const TransformerSpec& t = *model.transformer;
    const double out = request.output_tokens > 0 ? request.output_tokens : kDefaultOutputTokens;
    InferencePass prefill = transformer_forward(t, framework, shape);
    // Attention grows linearly with the context, so one step at the average context times the
    // step count is the sum over steps.
    InferencePass step = transformer_decode_step(t, framework, shape, shape.seq + out / 2);
    apply_precision_defaults(prefill, framework, gpu, request.allow_tf32);
    apply_precision_defaults(step, framework, gpu, request.allow_tf32);
    PassTime prefill_time = time_pass(gpu, compute, framework, prefill, allreduce);
    PassTime step_time = time_pass(gpu, compute, framework, step, allreduce);
    r.prefill_s = prefill_time.total_s();
    r.decode_step_s = step_time.total_s();
    r.parts = prefill_time;
    r.parts.math_s += out * step_time.math_s;
    r.parts.memory_s += out * step_time.memory_s;
    r.parts.launch_s += out * step_time.launch_s;
    r.parts.comm_s += out * step_time.comm_s;
    r.parts.kernels += static_cast<int>(out) * step_time.kernels;
    r.parts.flops += out * step_time.flops;
    r.parts.floor_s += out * step_time.floor_s;
    r.latency_s = r.parts.total_s();
    r.throughput = batch * out / r.latency_s;
    r.unit = "tokens/s";
    r.weights_B = transformer_weights_B(t, shape);
    r.kv_cache_B = batch * kv_cache_B(t, shape, shape.seq + out);
    activations_B = 2 * std::max(pass_activation_B(prefill), pass_activation_B(step));
  }
  r.memory_B = r.weights_B + r.kv_cache_B + activations_B;
  r.fits = r.memory_B <= gpu.memory_B;
  const std::pair<double, const char*> parts[] = {{r.parts.math_s, "math"},
                                                  {r.parts.memory_s, "memory"},
                                                  {r.parts.launch_s, "launch"},
                                                  {r.parts.comm_s, "communication"}};
  r.bound = std::max_element(std::begin(parts), std::end(parts))->second;
#ifdef TOPSIM_INVARIANTS
  // Latency at or above the kernels' floor: FLOPs at the datasheet peak and bytes at the
  // datasheet HBM bandwidth, one kernel after another.
  if (!(r.latency_s >= r.parts.floor_s * (1 - 1e-9)))
    throw std::logic_error("serve: invariant violated: latency " + std::to_string(r.latency_s) + " s of " + gpu.name +
                           " below its kernels' floor " + std::to_string(r.parts.floor_s) + " s");
  if (!(r.memory_B >= r.weights_B + r.kv_cache_B))
    throw std::logic_error("serve: invariant violated: memory below weights and KV cache on " + gpu.name);
#endif
  return r;
}

}  // namespace

ServingScenario parse_serving_scenario(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& [text, scenario] : scenario_names()) {
    if (text == name) return scenario;
    names.push_back(text);
  }
  throw std::invalid_argument(unknown_name_message("scenario", name, names));
}

std::string to_string(ServingScenario scenario) {
  for (const auto& [text, value] : scenario_names())
    if (value == scenario) return text;
  return "offline";
}

PassTime time_pass(const GpuModel& gpu, const ComputeModel& compute, const InferenceFrameworkModel& framework,
                   const InferencePass& pass, const AllReduceTime& allreduce) {
  PassTime t;
  for (const InferenceKernel& k : pass.kernels) {
    const KernelCost cost = kernel_cost(gpu, compute, k.kernel);
    t.kernels += static_cast<int>(k.count);
    t.flops += k.count * cost.flops;
    t.floor_s += k.count * cost.floor_s;
    // The GPU waits for a kernel the host has not issued yet: that wait counts as launch.
    if (framework.dispatch_s > cost.time_s) {
      t.launch_s += k.count * framework.dispatch_s;
      continue;
    }
    double& part = cost.bound == "math" ? t.math_s : cost.bound == "memory" ? t.memory_s : t.launch_s;
    part += k.count * cost.time_s;
  }
  if (pass.allreduces > 0) {
    if (!allreduce) throw std::logic_error("time_pass: tensor-parallel all-reduces need a fabric");
    t.comm_s = pass.allreduces * allreduce(pass.allreduce_B);
  }
  return t;
}

InferenceResult serve(const Catalog& catalog, const GpuModel& whole_gpu, const InferenceRequest& request,
                      const AllReduceTime& allreduce) {
  if (request.gpus < 1) throw std::invalid_argument("at least one GPU serves");
  const bool mig = !request.mig.profile.empty();
  if (mig && request.shape.tp > 1)
    throw std::invalid_argument("MIG instances have no NVLink and no peer-to-peer access (NVIDIA MIG User Guide), so "
                                "a tensor-parallel all-reduce between them cannot run: use --tp 1 with --mig, or "
                                "whole GPUs for --tp " + std::to_string(request.shape.tp));
  const GpuModel gpu = mig ? mig_instance(whole_gpu, request.mig) : whole_gpu;
  const ServedModel model = find_model(catalog, request.model);
  catalog.inference_framework(request.framework, {});  // an unknown framework fails before any work
  std::string why = math_unavailable(gpu, request.shape);
  if (!why.empty()) throw std::invalid_argument(why);
  if (model.network != nullptr && request.shape.seq > 0)
    throw std::invalid_argument(request.model + " is a layer-list network of fixed input size: --seq applies to "
                                                "transformers only");

  if (!request.shape.lengths.empty() && (model.network != nullptr || model.decoder()))
    throw std::invalid_argument(request.model + " is not an encoder: a sequence-length distribution (" +
                                request.shape.lengths.where.file + ") applies to encoders (BERT) only");

  InferenceRequest asked = request;
  if (model.transformer != nullptr && asked.shape.seq <= 0) asked.shape.seq = model.transformer->seq_len;
  // An encoder's learned positions end at its published sequence length.
  if (model.transformer != nullptr && model.transformer->encoder && asked.shape.seq > model.transformer->seq_len)
    throw std::invalid_argument(asked.model + " has " + std::to_string(model.transformer->seq_len) +
                                " learned positions: --seq " + std::to_string(asked.shape.seq) + " is longer");

  // The batches worth trying: the one asked, or powers of two (as many as fit).
  std::vector<double> batches;
  if (asked.scenario == ServingScenario::single_stream) {
    if (asked.shape.batch > 1)
      throw std::invalid_argument("single-stream serves one sample at a time: leave --batch out or give 1");
    batches = {1};
  } else if (asked.shape.batch >= 1) {
    batches = {asked.shape.batch};
  } else {
    for (double b = 1; b <= kLargestBatch; b *= 2) batches.push_back(b);
  }
  double bound_s = 0;
  if (asked.scenario == ServingScenario::server) {
    bound_s = asked.latency_bound_s;
    if (!(bound_s > 0)) {
      const LatencyBound* published = catalog.latency_bound(asked.model);
      if (published == nullptr)
        throw std::invalid_argument("server needs a latency bound for " + asked.model +
                                    ": give --latency-bound (MLPerf publishes one for resnet50 and bert-large)");
      bound_s = published->server_s;
    }
  }

  InferenceResult best;
  bool chosen = false;
  for (double b : batches) {
    InferenceResult r = serve_batch(catalog, gpu, model, asked, b, allreduce);
    // Server: queries arrive one by one; a batch fills while the previous one runs, so the
    // first query of a batch waits up to one batch time before its own batch time.
    const bool within = bound_s <= 0 || 2 * r.latency_s <= bound_s;
    const bool usable = batches.size() == 1 || (r.fits && within);
    if (usable && (!chosen || r.throughput > best.throughput)) {
      best = r;
      chosen = true;
    }
  }
  if (!chosen) best = serve_batch(catalog, gpu, model, asked, batches.front(), allreduce);
  best.latency_bound_s = bound_s;
  best.within_bound = bound_s <= 0 || 2 * best.latency_s <= bound_s;
  // A single-stream query waits for the host's round trip too: the next one is issued only when
  // this one completes.
  if (asked.scenario == ServingScenario::single_stream) {
    const double query_s = catalog.inference_framework(request.framework, {}).query_s;
    best.latency_s += query_s;
    best.parts.launch_s += query_s;
    best.throughput = best.batch / best.latency_s;
  }
  const double instances = mig ? request.mig.instances : 1;
  best.throughput *= instances * request.gpus;
  return best;
}

}  // namespace topsim
