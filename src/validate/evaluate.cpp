#include <map>
#include <memory>

#include "collectives/communicator.hpp"
#include "compute/kernel.hpp"
#include "engine/simulator.hpp"
#include "infer/inference.hpp"
#include "llm/domains.hpp"
#include "llm/iteration.hpp"
#include "p2p/p2p.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "validate/validation.hpp"
#include "workload/scenario.hpp"

namespace topsim {

namespace {

void check_gpu(const ValidationRow& row, const Topology& t, int gpu, const std::string& key) {
  if (gpu >= t.gpu_count())
    throw InputError(row.where.file, row.where.pointer + "/" + key,
                     "GPU " + std::to_string(gpu) + " does not exist: " + t.name() + " has " +
                         std::to_string(t.gpu_count()) + " GPUs");
}

CollRequest request_of(const ValidationRow& row) {
  CollRequest request;
  try {
    request.op = parse_op(row.op);
    request.dtype = parse_dtype(row.dtype);
    if (!row.algo.empty()) request.algo = parse_algo(row.algo);
    if (!row.proto.empty()) request.proto = parse_proto(row.proto);
  } catch (const UsageError& e) {
    throw InputError(row.where.file, row.where.pointer, e.what());
  }
  request.size_B = row.size_B;
  request.gpus_per_thread = row.gpus_per_thread;
  return request;
}

// The models a topology's devices and links name, as constant things.
void add_things(const Topology& t, std::set<std::string>& things) {
  for (std::size_t v = 0; v < t.device_count(); ++v) {
    const Device& d = t.device(v);
    if (std::holds_alternative<GpuModel>(*d.model)) {
      things.insert("gpus:" + d.model_name);
      things.insert("nccl:" + d.gpu().architecture);
    } else if (std::holds_alternative<SwitchModel>(*d.model)) {
      things.insert("switches:" + d.model_name);
    } else if (std::holds_alternative<CpuModel>(*d.model)) {
      things.insert("cpus:" + d.model_name);
    } else {
      things.insert("nics:" + d.model_name);
    }
  }
  for (const Link& link : t.links()) things.insert("links:" + link.model_name);
}

// How NCCL's P2P transport reaches a GPU's peers inside its server: through NVSwitches, over
// direct NVLink, or over PCIe (and host memory).
std::string server_kind(const Topology& t, int gpu) {
  bool nvswitch = false, nvlink = false;
  const Vertex v = t.gpu(gpu);
  for (Edge e : boost::make_iterator_range(boost::out_edges(v, t.graph()))) {
    if (t.link(e).kind != LinkKind::nvlink) continue;
    const DeviceType other = t.device(t.other_end(e, v)).type;
    nvswitch = nvswitch || other == DeviceType::nvswitch;
    nvlink = nvlink || other == DeviceType::gpu;
  }
  return nvswitch ? "nvswitch" : nvlink ? "nvlink" : "pcie";
}

// The network between servers, by the NICs' port family ("ib", "eth", "efa"); "none" on one server.
std::string network_kind(const Topology& t, int servers) {
  if (servers <= 1 || t.nics().empty()) return "none";
  const std::string& port = t.device(t.nics().front()).nic().port_model;
  return port.substr(0, port.find('-'));
}

// A collective's class: generation x server kind x network x quantity. Point-to-point operations
// (sendrecv, alltoall) are their own quantity: NCCL schedules them apart from the collectives.
std::string coll_class(const ValidationRow& row, const Topology& t, int servers) {
  const int first = row.gpus.empty() ? 0 : row.gpus.front();
  const bool p2p_op = row.op == "sendrecv" || row.op == "alltoall";
  const std::string size = size_quantity(row.size_B);
  return t.gpu_model(first).architecture + "/" + server_kind(t, first) + "/" + network_kind(t, servers) + "/" +
         (p2p_op ? "p2p-op " : "") + size;
}

// Any other row's class: the generation of the compute (or NCCL) model it used x its quantity.
std::string workload_class(const ValidationResult& r) {
  for (const char* prefix : {"compute:", "nccl:"})
    for (const std::string& thing : r.things)
      if (thing.rfind(prefix, 0) == 0) return thing.substr(std::string(prefix).size()) + "/" + r.quantity;
  return "unknown/" + r.quantity;
}

int servers_of(const Topology& t, const std::vector<int>& gpus) {
  std::set<int> nodes;
  for (int g : gpus) nodes.insert(t.node_of(g));
  return static_cast<int>(nodes.size());
}

double kernel_time_us(const ValidationRow& row, const Catalog& catalog, std::set<std::string>& things) {
  const GpuModel& gpu = catalog.gpu(row.gpu, row.where.at("gpu"));
  const ComputeModel& model = catalog.compute(gpu.architecture, row.where.at("gpu"));
  things.insert("gpus:" + gpu.name);
  things.insert("compute:" + gpu.architecture);
  Kernel kernel;
  kernel.m = row.gemm_m;
  kernel.n = row.gemm_n;
  kernel.k = row.gemm_k;
  kernel.dtype = row.dtype;
  kernel.sparse = row.sparse;
  std::string why = kernel_unavailable(gpu, kernel);
  if (!why.empty()) throw InputError(row.where.file, row.where.pointer, why);
  return kernel_cost(gpu, model, kernel).time_s * 1e6;
}

// One inference row: its model served on its GPU (or MIG instance), no fabric (rows serve on
// one GPU or on data-parallel copies). The metric as its source prints it.
double inference_prediction(const ValidationRow& row, const Catalog& catalog, ValidationResult& result) {
  const GpuModel& gpu = catalog.gpu(row.gpu, row.where.at("gpu"));
  InferenceRequest request;
  request.model = row.model;
  request.framework = row.framework;
  request.shape.precision = row.precision;
  request.shape.sparse = row.sparse;
  request.shape.batch = row.batch;
  request.shape.seq = row.seq;
  request.shape.lengths = row.seq_lengths;
  request.gpus = row.count;
  request.scenario = row.serving.empty() ? ServingScenario::offline : parse_serving_scenario(row.serving);
  result.things = {"gpus:" + gpu.name, "compute:" + gpu.architecture, "frameworks:" + row.framework};
  try {
    if (!row.mig.empty()) request.mig = parse_mig(row.mig);
    InferenceResult served = serve(catalog, gpu, request, {});
    result.detail = "batch " + fixed(served.batch, 0) + ", " + served.bound;
    if (row.metric == "throughput") return served.throughput;
    if (row.metric != "speedup") return served.latency_s * 1e3;  // time_ms, latency_ms
    request.shape.sparse = false;
    const InferenceResult dense = serve(catalog, gpu, request, {});
    return dense.latency_s / served.latency_s;
  } catch (const std::invalid_argument& e) {
    throw InputError(row.where.file, row.where.pointer, e.what());
  }
}

// The models a training scenario's point uses: its variant's topology at the point's server
// count (so the fabric's links and NICs count), the GPUs' compute models, framework, optimizer
// and network.
std::set<std::string> training_things(const ScenarioSpec& spec, const ScenarioPoint& point,
                                      const EvaluationInputs& inputs) {
  std::string topology = spec.topology;
  ScaleOut scale;
  std::string gpu;
  for (const Variant& v : spec.variants)
    if (v.name == point.variant) {
      if (!v.topology.empty()) topology = v.topology;
      gpu = v.gpu;
      if (point.nodes > 1) {
        scale.nodes = point.nodes;
        scale.nic = v.nic;
        scale.nics_per_node = v.nics_per_node;
      }
    }
  std::set<std::string> things;
  Topology t = inputs.topology(topology, scale, gpu);
  add_things(t, things);
  for (int g = 0; g < t.gpu_count(); ++g) things.insert("compute:" + t.gpu_model(g).architecture);
  things.insert("frameworks:" + spec.training.framework);
  things.insert("frameworks:" + spec.training.optimizer);  // optimizers live in frameworks.json
  things.insert("networks:" + spec.training.network);
  return things;
}

// One LLM row: its model and layout on as many servers of its topology as its GPUs fill, each
// in a Simulator of its own. The metric as its source counts it.
double llm_prediction(const ValidationRow& row, const EvaluationInputs& inputs, ValidationResult& result) {
  if (inputs.catalog == nullptr) throw std::logic_error("evaluate: llm rows need a catalog");
  const Catalog& catalog = *inputs.catalog;
  const TransformerSpec& model = catalog.transformer(row.model, row.where.at("model"));
  try {
    Topology base = inputs.topology(row.topology, ScaleOut{}, row.gpu);
    const int per_server = base.gpu_count() / (base.node_of(base.gpu_count() - 1) + 1);
    ScaleOut scale = row.scale;
    if (row.count > base.gpu_count()) scale.nodes = (row.count + per_server - 1) / per_server;
    Topology t = inputs.topology(row.topology, scale, row.gpu);
    add_things(t, result.things);
    for (int g = 0; g < t.gpu_count(); ++g) result.things.insert("compute:" + t.gpu_model(g).architecture);
    result.things.insert("frameworks:adam");
    LlmLayout layout = resolve_layout(model, row.layout, row.count);
    LlmOptions options;
    // A published run whose groups crossed servers says so in its layout (allow_cross_server_tp).
    check_group_domains(t, layout, options.order, row.topology);
    options.nccl = row.nccl;
    LlmResult r = simulate_iteration(t, catalog, model, layout, options);
    result.data_parallel = layout.dp;
    result.detail = "tp" + std::to_string(layout.tp) + " pp" + std::to_string(layout.pp) + " dp" + std::to_string(layout.dp) +
                    (layout.uneven() ? " split " + describe_layer_split(model, layout) : "") + ", " +
                    std::to_string(r.nodes) + " servers";
    if (row.metric == "iteration_s") return r.iteration_s;
    if (row.metric == "tflops_per_gpu") return r.tflops_per_gpu;
    if (row.metric == "mfu") return r.mfu;
    if (row.metric == "tokens_per_s_per_gpu") return r.tokens_per_s / r.gpus;
    // hardware FLOPs: HFU over the same peak MFU uses
    return r.mfu > 0 ? r.tflops_per_gpu * r.hfu / r.mfu : 0;
  } catch (const UsageError& e) {
    throw InputError(row.where.file, row.where.pointer, e.what());
  }
}

}  // namespace

std::vector<ValidationResult> evaluate(const std::vector<ValidationRow>& rows, const EvaluationInputs& inputs) {
  // Topologies by name, scale-out request and GPU model (a coll row's "gpu": what it ran on).
  auto topology_key = [](const ValidationRow& row) { return row.topology + "|" + row.scale.text() + "|" + row.gpu; };
  std::map<std::string, std::unique_ptr<Topology>> topologies;
  auto simulated = [](const ValidationRow& row) { return row.role != "pending" && (row.kind == "p2p" || row.kind == "coll"); };
  for (const auto& row : rows)
    if (simulated(row) && !topologies.count(topology_key(row))) try {
        topologies[topology_key(row)] = std::make_unique<Topology>(inputs.topology(row.topology, row.scale, row.gpu));
      } catch (const UsageError& e) {  // the row asks what its topology cannot do
        throw InputError(row.where.file, row.where.pointer, e.what());
      }

  // Every platform first (SimGrid seals them at the first run): p2p copies per topology and
  // peer-access setting, collectives per topology and GPU set with what their rows need.
  Simulator simulator;
  std::map<std::pair<std::string, bool>, std::size_t> copy_platforms;
  using CommKey = std::tuple<std::string, std::vector<int>, bool, bool, std::string>;
  std::map<CommKey, std::unique_ptr<Communicator>> communicators;
  std::map<CommKey, std::vector<CollRequest>> requests;
  std::map<CommKey, std::size_t> coll_platforms;
  for (const auto& row : rows) {
    if (!simulated(row)) continue;
    const Topology& t = *topologies[topology_key(row)];
    if (row.kind == "p2p") {
      check_gpu(row, t, row.src, "src");
      check_gpu(row, t, row.dst, "dst");
      auto key = std::make_pair(row.topology, row.peer_access);
      if (!copy_platforms.count(key)) {
        P2pOptions options;
        options.peer_access = row.peer_access;
        copy_platforms[key] = simulator.add_platform(t, route_options(options));
      }
    } else {
      for (int g : row.gpus) check_gpu(row, t, g, "gpus");
      CommKey key{topology_key(row), row.gpus, row.peer_access, row.gpu_direct, row.nccl};
      RouteOptions routes;
      routes.peer_access = row.peer_access;
      routes.gpu_direct = row.gpu_direct;
      if (!communicators.count(key)) communicators[key] = std::make_unique<Communicator>(t, row.gpus, inputs.catalog->nccl_version(row.nccl), routes);
      requests[key].push_back(request_of(row));
    }
  }
  for (auto& [key, comm] : communicators)
    coll_platforms[key] = simulator.add_platform(*topologies[std::get<0>(key)], comm->routes(), comm->needs(requests[key]));
  // Training scenarios, each laid out once for all of its rows.
  std::map<std::string, ScenarioSpec> scenario_specs;
  std::map<std::string, std::unique_ptr<ScenarioRunner>> scenario_runners;
  TopologyFactory topology_factory = inputs.topology;
  PlatformFactory platform_factory = [&](const Topology& t, const RouteOptions& routes, const PlatformNeeds& needs) {
    return std::unique_ptr<Runner>(new PlatformRunner(simulator, simulator.add_platform(t, routes, needs)));
  };
  for (const auto& row : rows) {
    if (row.kind != "training" || row.role == "pending" || scenario_runners.count(row.scenario)) continue;
    if (!inputs.scenario || !inputs.catalog) throw std::logic_error("evaluate: training rows need a scenario loader and a catalog");
    const ScenarioSpec& spec = scenario_specs[row.scenario] = inputs.scenario(row.scenario);
    scenario_runners[row.scenario] = std::make_unique<ScenarioRunner>(spec, *inputs.catalog, topology_factory, platform_factory);
  }
  std::map<std::string, std::vector<ScenarioPoint>> scenario_points;
  std::map<const ScenarioPoint*, std::set<std::string>> point_things;  // topologies built once per point

  std::vector<ValidationResult> results;
  for (const auto& row : rows) {
    ValidationResult result;
    result.row = row;
    result.quantity = quantity_of(row, 1);
    if (row.role == "pending") {
      results.push_back(result);
      continue;
    }
    result.evaluated = true;
    if (row.kind == "kernel") {
      if (inputs.catalog == nullptr) throw std::logic_error("evaluate: kernel rows need a catalog");
      result.predicted = kernel_time_us(row, *inputs.catalog, result.things);
      result.detail = row.sparse ? "2:4" : "dense";
      result.error = (result.predicted - row.measured()) / row.measured();
      results.push_back(result);
      continue;
    }
    if (row.kind == "inference") {
      if (inputs.catalog == nullptr) throw std::logic_error("evaluate: inference rows need a catalog");
      result.predicted = inference_prediction(row, *inputs.catalog, result);
      result.error = (result.predicted - row.measured()) / row.measured();
      results.push_back(result);
      continue;
    }
    if (row.kind == "llm") {
      result.predicted = llm_prediction(row, inputs, result);
      result.error = (result.predicted - row.measured()) / row.measured();
      results.push_back(result);
      continue;
    }
    if (row.kind == "training") {
      auto& points = scenario_points[row.scenario];
      if (points.empty()) points = scenario_runners.at(row.scenario)->run();
      const ScenarioPoint* found = nullptr;
      for (const ScenarioPoint& p : points)
        if (p.count == row.count && (row.variant.empty() ? p.variant == points.front().variant : p.variant == row.variant))
          found = &p;
      if (found == nullptr)
        throw InputError(row.where.file, row.where.pointer + "/count",
                         "scenario " + row.scenario + " has no point at count " + std::to_string(row.count) +
                             (row.variant.empty() ? "" : " of variant '" + row.variant + "'"));
      result.predicted = row.metric == "throughput" ? found->throughput : found->speedup;
      auto things = point_things.find(found);
      if (things == point_things.end())
        things = point_things.emplace(found, training_things(scenario_specs.at(row.scenario), *found, inputs)).first;
      result.things = things->second;
      if (found->nodes > 1) result.quantity = quantity_of(row, found->nodes);
      result.detail = found->replay.algorithms.empty() ? "-" : found->replay.algorithms;
      result.error = (result.predicted - row.measured()) / row.measured();
      results.push_back(result);
      continue;
    }
    const Topology& t = *topologies[topology_key(row)];
    add_things(t, result.things);
    if (row.kind == "p2p") {
      PlatformRunner runner(simulator, copy_platforms[{row.topology, row.peer_access}]);
      P2pOptions options;
      options.peer_access = row.peer_access;
      options.method = parse_copy_method(row.method);
      P2pBench bench(t, runner, options);
      if (row.metric == "latency_us") {
        result.predicted = bench.copy_time_s(row.src, row.dst, row.size_B) * 1e6;
      } else {
        P2pPoint point = bench.measure(row.src, row.dst, row.size_B);
        result.predicted = (row.metric == "uni_GBps" ? point.uni_Bps : point.bi_Bps) / 1e9;
      }
    } else {
      CommKey key{topology_key(row), row.gpus, row.peer_access, row.gpu_direct, row.nccl};
      PlatformRunner runner(simulator, coll_platforms[key]);
      CollResult r = communicators[key]->run(request_of(row), runner);
      result.quantity = quantity_of(row, servers_of(t, row.gpus));
      result.predicted = row.metric == "busbw_GBps" ? r.busbw_Bps / 1e9 : r.time_s * 1e6;
      result.detail = std::string(to_string(r.algo)) + "/" + to_string(r.proto);
      const int servers = servers_of(t, row.gpus);
      result.accuracy_class = coll_class(row, t, servers);
      for (const Candidate& c : r.candidates)
        if (c.algo == r.algo && c.proto == r.proto && c.nccl.time_s > 0 && r.time_s > 0)
          result.nccl_predicted = row.metric == "busbw_GBps" ? r.busbw_Bps * r.time_s / c.nccl.time_s / 1e9 : c.nccl.time_s * 1e6;
    }
    result.error = (result.predicted - row.measured()) / row.measured();
    results.push_back(result);
  }
  for (ValidationResult& r : results)
    if (r.evaluated && r.accuracy_class.empty()) r.accuracy_class = workload_class(r);
  return results;
}

}  // namespace topsim
