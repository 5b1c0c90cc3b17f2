#include "workload/training.hpp"

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

// Gradient elements a layer contributes to the allreduce: the kept half of a prunable layer's
// weights when a fixed 2:4 mask zeroes the rest.
double gradient_elements(const Layer& layer, const SparsitySwitches& sparsity) {
  return sparsity.gradients ? layer.params - pruned_weights(layer) / 2 : layer.params;
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
    double kept = spec.sparsity.weights ? layer.params - pruned_weights(layer) * (1 - sparse_storage_fraction(4))
                                        : layer.params;
    m.weights_B += kept * 4 + (half_copy ? kept * types.activation_B : 0);
    m.gradients_B += layer.params * 4;
    m.optimizer_B += kept * setup.optimizer->state_bytes_per_param;
    double elements = has_gemm(layer) ? layer.gemm_m * layer.gemm_n * layer.batch : layer.elements;
    m.activations_B += elements * types.activation_B * spec.batch_per_gpu;
  }
  return m;
}

double gradient_bytes(const TrainingSpec& spec, const TrainingSetup& setup) {
  TrainingTypes types = training_types(spec, *setup.framework);
  double elements = 0;
  for (const Layer& layer : setup.network->layers) elements += gradient_elements(layer, spec.sparsity);
  return elements * types.gradient_B;
}

TraceSpec training_trace(const TrainingSpec& spec, const TrainingSetup& setup, int ranks) {
  const Network& net = *setup.network;
  const FrameworkModel& fw = *setup.framework;
  TrainingTypes types = training_types(spec, fw);
  const double batch = spec.batch_per_gpu;
  TraceSpec trace;
  trace.description = net.name + " training iteration, " + std::to_string(ranks) + " ranks";
  trace.ranks = ranks;
  trace.samples = batch * ranks;

  for (const Layer& layer : net.layers) {
    std::string name = "fwd." + layer.name;
    if (layer.kind == Layer::Kind::matmul) {
      trace.ops.push_back(gemm_op(name, layer.gemm_m, layer.gemm_n, layer.gemm_k, layer.batch * batch, false,
                                  types.math_dtype, false));
    } else if (has_gemm(layer)) {
      trace.ops.push_back(gemm_op(name, layer.gemm_m * batch, layer.gemm_n, layer.gemm_k, 1,
                                  layer.kind == Layer::Kind::conv, types.math_dtype,
                                  spec.sparsity.math && layer.prunable));
    } else if (layer.kind == Layer::Kind::elementwise) {
      trace.ops.push_back(memory_op(name, layer.elements * layer.accesses * types.activation_B * batch * fw.elementwise_traffic));
    } else {  // embedding: gather rows, write the output
      trace.ops.push_back(memory_op(name, 2 * layer.elements * types.activation_B * batch));
    }
  }

  // Backward, in reverse. 2:4 sparse tensor cores need the pruned operand in its compressed
  // layout; the input gradient multiplies by the transposed weights (not 2:4 along the reduced
  // dimension) and the weight gradient is dense, so backward GEMMs stay dense.
  const double cap_B = spec.bucket_B.value_or(fw.bucket_B);
  const double first_cap_B = fw.first_bucket_B > 0 ? fw.first_bucket_B : cap_B;
  double bucket_B = 0;
  int buckets = 0;
  std::vector<std::string> allreduces;
  auto close_bucket = [&](const std::string& ready_after) {
    if (bucket_B <= 0) return;
    if (ranks > 1) {
      TraceOp op;
      op.name = "allreduce." + std::to_string(buckets);
      op.kind = TraceOp::Kind::collective;
      op.op = "allreduce";
      op.group = "world";
      op.size_B = bucket_B;
      op.dtype = types.gradient_dtype;
      op.stream = "comm";
      op.after = {ready_after};
      allreduces.push_back(op.name);
      trace.ops.push_back(op);
    }
    ++buckets;
    bucket_B = 0;
  };
  std::string last_backward;
  for (std::size_t i = net.layers.size(); i-- > 0;) {
    const Layer& layer = net.layers[i];
    std::string base = "bwd." + layer.name;
    if (layer.kind == Layer::Kind::matmul) {
      double b = layer.batch * batch;
      trace.ops.push_back(gemm_op(base + ".dgrad_a", layer.gemm_m, layer.gemm_k, layer.gemm_n, b, false, types.math_dtype, false));
      trace.ops.push_back(gemm_op(base + ".dgrad_b", layer.gemm_k, layer.gemm_n, layer.gemm_m, b, false, types.math_dtype, false));
    } else if (has_gemm(layer)) {
      bool conv = layer.kind == Layer::Kind::conv;
      double m = layer.gemm_m * batch;
      if (i > 0)  // nothing upstream needs the input gradient of the first layer
        trace.ops.push_back(gemm_op(base + ".dgrad", m, layer.gemm_k, layer.gemm_n, 1, conv, types.math_dtype, false));
      trace.ops.push_back(gemm_op(base + ".wgrad", layer.gemm_k, layer.gemm_n, m, 1, conv, types.math_dtype, false));
    } else if (layer.kind == Layer::Kind::elementwise) {
      // Backward of a memory-bound layer reads the output gradient and saved tensors and writes
      // the input gradient: twice the forward traffic (docs/formats.md).
      trace.ops.push_back(
          memory_op(base, 2 * layer.elements * layer.accesses * types.activation_B * batch * fw.elementwise_traffic));
    } else {  // embedding: scatter-add the output gradient into the table gradient
      trace.ops.push_back(memory_op(base, 2 * layer.elements * types.activation_B * batch));
    }
    last_backward = trace.ops.back().name;
    double grad_B = gradient_elements(layer, spec.sparsity) * types.gradient_B;
    if (grad_B <= 0) continue;
    bucket_B += grad_B;
    if (bucket_B >= (buckets == 0 ? first_cap_B : cap_B)) close_bucket(last_backward);
  }
  close_bucket(last_backward);

  // Optimizer: master weights, gradients and states streamed once; with compressed weights
  // only the kept values and their indices (FP32 states).
  double optimizer_elements = 0;
  for (const Layer& layer : net.layers)
    optimizer_elements += spec.sparsity.weights
                              ? layer.params - pruned_weights(layer) * (1 - sparse_storage_fraction(4))
                              : layer.params;
  TraceOp step = memory_op("optimizer", optimizer_elements * setup.optimizer->bytes_per_param);
  step.after = allreduces;
  trace.ops.push_back(step);
  if (ranks > 1 && fw.step_overhead_s > 0) {
    TraceOp overhead;
    overhead.name = "step.overhead";
    overhead.kind = TraceOp::Kind::compute;
    overhead.cost = TraceOp::Cost::time;
    overhead.time_s = fw.step_overhead_s;
    overhead.stream = "host";
    overhead.after = {"optimizer"};
    trace.ops.push_back(overhead);
  }
  return trace;
}

}  // namespace topsim
