#include "workload/training.hpp"

#include <stdexcept>

#include "compute/kernel.hpp"

namespace topsim {

namespace {

TraceOp gemm_op(std::string name, double m, double n, double k, double batch, bool conv, const std::string& dtype,
                bool sparse) {
  TraceOp op;
  op.name = std::move(name);
  op.kind = TraceOp::Kind::compute;
  op.cost = conv ? TraceOp::Cost::conv : TraceOp::Cost::gemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.dtype = dtype;
  op.sparse = sparse;
  op.stream = "compute";
  return op;
}

TraceOp memory_op(std::string name, double bytes_B, std::string stream = "compute") {
  TraceOp op;
  op.name = std::move(name);
  op.kind = TraceOp::Kind::compute;
  op.cost = TraceOp::Cost::memory;
  op.bytes_B = bytes_B;
  op.stream = std::move(stream);
  return op;
}

bool has_gemm(const Layer& layer) {
  return layer.kind == Layer::Kind::conv || layer.kind == Layer::Kind::linear || layer.kind == Layer::Kind::matmul;
}

// Weights 2:4 sparsity prunes: the k x n operand of a prunable layer (its bias is not pruned).
double pruned_weights(const Layer& layer) { return layer.prunable ? layer.gemm_n * layer.gemm_k : 0; }


}  // namespace

namespace {

// A layer's share of one rank of its tensor-parallel group (tp ranks): its GEMM shape, batch of
// GEMMs, memory-bound elements and parameters.
struct Share {
  double m = 0, n = 0, k = 0, batch = 1, elements = 0, params = 0, pruned = 0;
};

Share share_of(const Layer& layer, int tp) {
  Share s{layer.gemm_m, layer.gemm_n, layer.gemm_k, static_cast<double>(layer.batch), layer.elements, layer.params,
          pruned_weights(layer)};
  if (tp == 1) return s;
  const double weights = layer.gemm_n * layer.gemm_k;
  switch (layer.tp) {
    case Layer::Split::column:  // outputs split: weights and bias
      s.n /= tp;
      s.params /= tp;
      s.pruned /= tp;
      break;
    case Layer::Split::row:  // inputs split: weights; the bias is added once, replicated
      s.k /= tp;
      s.params = weights / tp + (layer.params - weights);
      s.pruned /= tp;
      break;
    case Layer::Split::split:
      s.batch /= tp;
      s.elements /= tp;
      break;
    case Layer::Split::none: break;
  }
  return s;
}

// The NCCL type activations travel in under a training precision.
std::string activation_nccl_type(const TrainingTypes& types) {
  if (types.math_dtype == "fp16") return "half";
  if (types.math_dtype == "bf16") return "bfloat16";
  return "float";
}

}  // namespace

TrainingTypes training_types(const TrainingSpec& spec, const FrameworkModel& framework) {
  TrainingTypes t;
  if (spec.precision == "amp") t.math_dtype = "fp16";
  else if (spec.precision == "bf16") t.math_dtype = "bf16";
  else if (spec.precision == "tf32") t.math_dtype = "tf32";
  else t.math_dtype = "fp32";
  t.activation_B = dtype_size_B(t.math_dtype);
  t.gradient_dtype = spec.gradient_dtype.value_or(framework.gradient_dtype);
  t.gradient_B = t.gradient_dtype == "float" ? 4 : 2;
  return t;
}

TrainingMemory training_memory(const TrainingSpec& spec, const TrainingSetup& setup) {
  TrainingTypes types = training_types(spec, *setup.framework);
  const bool half_copy = types.activation_B < 4;  // amp, bf16: a 16-bit copy of the weights
  TrainingMemory m;
  for (const Layer& layer : setup.network->layers) {
    Share sh = share_of(layer, spec.tensor_parallel);
    double kept = spec.sparsity.weights ? sh.params - sh.pruned * (1 - sparse_storage_fraction(4)) : sh.params;
    m.weights_B += kept * 4 + (half_copy ? kept * types.activation_B : 0);
    m.gradients_B += sh.params * 4;
    m.optimizer_B += kept * setup.optimizer->state_bytes_per_param;
    double elements = has_gemm(layer) ? sh.m * sh.n * sh.batch : sh.elements;
    m.activations_B += elements * types.activation_B * spec.batch_per_gpu;
  }
  return m;
}

double gradient_bytes(const TrainingSpec& spec, const TrainingSetup& setup) {
  TrainingTypes types = training_types(spec, *setup.framework);
  double elements = 0;
  for (const Layer& layer : setup.network->layers) {
    Share sh = share_of(layer, spec.tensor_parallel);
    elements += spec.sparsity.gradients ? sh.params - sh.pruned / 2 : sh.params;
  }
  return elements * types.gradient_B;
}

TraceSpec training_trace(const TrainingSpec& spec, const TrainingSetup& setup, int ranks) {
  const Network& net = *setup.network;
  const FrameworkModel& fw = *setup.framework;
  TrainingTypes types = training_types(spec, fw);
  const double batch = spec.batch_per_gpu;
  const int tp = spec.tensor_parallel;
  if (tp < 1 || ranks % tp != 0)
    throw std::invalid_argument("training_trace: " + std::to_string(ranks) + " ranks do not divide into tensor-parallel groups of " +
                                std::to_string(tp));
  const int replicas = ranks / tp;  // data-parallel width
  TraceSpec trace;
  trace.description = net.name + " training iteration, " + std::to_string(ranks) + " ranks" +
                      (tp > 1 ? ", tensor parallel " + std::to_string(tp) : "");
  trace.ranks = ranks;
  trace.samples = batch * replicas;

  // Without tensor parallelism every compute op runs once on every rank ("world"); with it, each
  // tensor-parallel group gets its own copy (suffix .tp<g>), because its ops wait for its own
  // group's collectives.
  const int copies = tp == 1 ? 1 : replicas;
  auto suffix = [&](int g) { return tp == 1 ? std::string() : ".tp" + std::to_string(g); };
  auto tp_group = [&](int g) { return "tp" + std::to_string(g); };
  if (tp > 1) {
    for (int g = 0; g < replicas; ++g) {
      TraceGroup group;
      group.name = tp_group(g);
      for (int r = 0; r < tp; ++r) group.ranks.push_back(g * tp + r);
      trace.groups.push_back(group);
    }
    if (replicas > 1)
      for (int i = 0; i < tp; ++i) {
        TraceGroup group;
        group.name = "dp" + std::to_string(i);
        for (int g = 0; g < replicas; ++g) group.ranks.push_back(g * tp + i);
        trace.groups.push_back(group);
      }
  }
  auto ranks_of = [&](int g) {
    std::vector<int> list;
    if (tp > 1)
      for (int r = 0; r < tp; ++r) list.push_back(g * tp + r);
    return list;
  };
  // Megatron's activation allreduce within a tensor-parallel group, on its own stream; the
  // next compute op of the group waits for it.
  auto tp_allreduce = [&](const std::string& name, double size_B, const std::string& ready, int g) {
    TraceOp op;
    op.name = name;
    op.kind = TraceOp::Kind::collective;
    op.op = "allreduce";
    op.group = tp_group(g);
    op.size_B = size_B;
    op.dtype = activation_nccl_type(types);
    op.stream = "tp";
    op.after = {ready};
    trace.ops.push_back(op);
    return name;
  };

  for (int g = 0; g < copies; ++g) {
    std::string wait;  // a tensor-parallel allreduce the next op waits for
    auto push = [&](TraceOp op) {
      op.name += suffix(g);
      op.ranks = ranks_of(g);
      if (!wait.empty()) op.after.push_back(wait);
      wait.clear();
      trace.ops.push_back(op);
      return trace.ops.back().name;
    };
    for (const Layer& layer : net.layers) {
      Share sh = share_of(layer, tp);
      std::string name = "fwd." + layer.name;
      std::string done;
      if (layer.kind == Layer::Kind::matmul) {
        done = push(gemm_op(name, sh.m, sh.n, sh.k, sh.batch * batch, false, types.math_dtype, false));
      } else if (has_gemm(layer)) {
        done = push(gemm_op(name, sh.m * batch, sh.n, sh.k, 1, layer.kind == Layer::Kind::conv, types.math_dtype,
                            spec.sparsity.math && layer.prunable));
      } else if (layer.kind == Layer::Kind::elementwise) {
        done = push(memory_op(name, sh.elements * layer.accesses * types.activation_B * batch * fw.elementwise_traffic));
      } else {  // embedding: gather rows, write the output
        done = push(memory_op(name, 2 * sh.elements * types.activation_B * batch));
      }
      if (tp > 1 && layer.tp == Layer::Split::row)
        wait = tp_allreduce(name + ".allreduce" + suffix(g), layer.gemm_m * layer.gemm_n * batch * types.activation_B, done, g);
    }

    // Backward, in reverse. 2:4 sparse tensor cores need the pruned operand in its compressed
    // layout; the input gradient multiplies by the transposed weights (not 2:4 along the reduced
    // dimension) and the weight gradient is dense, so backward GEMMs stay dense. A
    // column-parallel layer's input gradient is partial on each rank: all-reduced in its group
    // while the weight gradient computes.
    for (std::size_t i = net.layers.size(); i-- > 0;) {
      const Layer& layer = net.layers[i];
      Share sh = share_of(layer, tp);
      std::string base = "bwd." + layer.name;
      if (layer.kind == Layer::Kind::matmul) {
        double b = sh.batch * batch;
        push(gemm_op(base + ".dgrad_a", sh.m, sh.k, sh.n, b, false, types.math_dtype, false));
        push(gemm_op(base + ".dgrad_b", sh.k, sh.n, sh.m, b, false, types.math_dtype, false));
      } else if (has_gemm(layer)) {
        bool conv = layer.kind == Layer::Kind::conv;
        double m = sh.m * batch;
        std::string partial;
        if (i > 0) {  // nothing upstream needs the input gradient of the first layer
          std::string dgrad = push(gemm_op(base + ".dgrad", m, sh.k, sh.n, 1, conv, types.math_dtype, false));
          if (tp > 1 && layer.tp == Layer::Split::column)
            partial = tp_allreduce(base + ".dgrad.allreduce" + suffix(g), m * layer.gemm_k * types.activation_B, dgrad, g);
        }
        push(gemm_op(base + ".wgrad", sh.k, sh.n, m, 1, conv, types.math_dtype, false));
        wait = partial;
      } else if (layer.kind == Layer::Kind::elementwise) {
        // Backward of a memory-bound layer reads the output gradient and saved tensors and writes
        // the input gradient: twice the forward traffic (docs/formats.md).
        push(memory_op(base, 2 * sh.elements * layer.accesses * types.activation_B * batch * fw.elementwise_traffic));
      } else {  // embedding: scatter-add the output gradient into the table gradient
        push(memory_op(base, 2 * sh.elements * types.activation_B * batch));
      }
    }
  }

  // Gradients: each layer's joins the open bucket once its last backward op is done; a full
  // bucket is all-reduced across the replicas (one allreduce per data-parallel group) on the
  // comm stream. Every tensor-parallel copy has the same layers, so the same buckets.
  const double cap_B = spec.bucket_B.value_or(fw.bucket_B);
  const double first_cap_B = fw.first_bucket_B > 0 ? fw.first_bucket_B : cap_B;
  double bucket_B = 0;
  int buckets = 0;
  std::vector<std::string> allreduces;
  auto close_bucket = [&](const std::string& ready) {
    if (bucket_B <= 0) return;
    if (replicas > 1) {
      for (int i = 0; i < tp; ++i) {
        TraceOp op;
        op.name = "allreduce." + std::to_string(buckets) + (tp == 1 ? "" : ".dp" + std::to_string(i));
        op.kind = TraceOp::Kind::collective;
        op.op = "allreduce";
        op.group = tp == 1 ? "world" : "dp" + std::to_string(i);
        op.size_B = bucket_B;
        op.dtype = types.gradient_dtype;
        op.stream = "comm";
        for (int g = 0; g < copies; ++g) op.after.push_back(ready + suffix(g));
        allreduces.push_back(op.name);
        trace.ops.push_back(op);
      }
    }
    ++buckets;
    bucket_B = 0;
  };
  std::string last_backward;
  for (std::size_t i = net.layers.size(); i-- > 0;) {
    const Layer& layer = net.layers[i];
    last_backward = "bwd." + layer.name + (has_gemm(layer) && layer.kind != Layer::Kind::matmul ? ".wgrad"
                                           : layer.kind == Layer::Kind::matmul                 ? ".dgrad_b"
                                                                                                : "");
    Share sh = share_of(layer, tp);
    double grad_B = (spec.sparsity.gradients ? sh.params - sh.pruned / 2 : sh.params) * types.gradient_B;
    if (grad_B <= 0) continue;
    bucket_B += grad_B;
    if (bucket_B >= (buckets == 0 ? first_cap_B : cap_B)) close_bucket(last_backward);
  }
  close_bucket(last_backward);

  // Optimizer: master weights, gradients and states streamed once; with compressed weights
  // only the kept values and their indices (FP32 states). A rank waits for the buckets of its
  // own data-parallel group.
  double optimizer_elements = 0;
  for (const Layer& layer : net.layers) {
    Share sh = share_of(layer, tp);
    optimizer_elements += spec.sparsity.weights ? sh.params - sh.pruned * (1 - sparse_storage_fraction(4)) : sh.params;
  }
  for (int g = 0; g < copies; ++g) {
    TraceOp step = memory_op("optimizer" + suffix(g), optimizer_elements * setup.optimizer->bytes_per_param);
    step.ranks = ranks_of(g);
    step.after = allreduces;
    trace.ops.push_back(step);
    if (ranks > 1 && fw.step_overhead_s > 0) {
      TraceOp overhead;
      overhead.name = "step.overhead" + suffix(g);
      overhead.kind = TraceOp::Kind::compute;
      overhead.cost = TraceOp::Cost::time;
      overhead.time_s = fw.step_overhead_s;
      overhead.stream = "host";
      overhead.ranks = ranks_of(g);
      overhead.after = {step.name};
      trace.ops.push_back(overhead);
    }
  }
  return trace;
}

}  // namespace topsim
