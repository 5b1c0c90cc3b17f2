// The generated training iteration (issue 5): the layout of forward, backward, gradient
// buckets and optimizer for PyTorch DDP and Horovod, the 2:4 sparsity switches, the memory
// estimate, and Megatron-style tensor parallelism. Sizes are derived by hand in the comments.
#include <catch2/catch.hpp>

#include "engine/simulator.hpp"
#include "workload/replay.hpp"
#include "workload_helpers.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("workload: training_trace lays out ResNet-50 for Horovod and PyTorch DDP") {
  TrainingSpec spec;
  TrainingSetup horovod = resnet50("horovod-tensorflow", spec);
  const Network& net = *horovod.network;
  // ResNet-50 v1.5: 25,557,032 parameters, FP32 gradients: 25,557,032 x 4 = 102,228,128 B.
  CHECK(net.params() == 25557032);
  CHECK(gradient_bytes(spec, horovod) == 102228128);

  TraceSpec one = training_trace(spec, horovod, 1);
  CHECK(one.ranks == 1);
  for (const TraceOp& op : one.ops) CHECK(op.kind == TraceOp::Kind::compute);  // no collective on one rank
  CHECK(find_op(one, "step.overhead") == nullptr);  // overhead of a distributed step: ranks > 1

  for (const std::string framework : {"horovod-tensorflow", "pytorch-ddp"}) {
    INFO(framework);
    TrainingSpec s;
    TrainingSetup setup = resnet50(framework, s);
    TraceSpec t = training_trace(s, setup, 8);
    CHECK(t.ranks == 8);
    CHECK(t.samples == 8 * 256);
    CHECK(with_prefix(t, "fwd.").size() == net.layers.size());  // one forward op per layer (175)
    // Every GEMM layer but the first has an input gradient: 53 convs + 1 linear - conv1 = 53.
    std::size_t gemm_layers = 0;
    for (const Layer& l : net.layers) gemm_layers += l.kind == Layer::Kind::conv || l.kind == Layer::Kind::linear;
    CHECK(gemm_layers == 54);
    CHECK(find_op(t, "bwd." + net.layers[0].name + ".dgrad") == nullptr);
    CHECK(find_op(t, "bwd." + net.layers[0].name + ".wgrad") != nullptr);
    std::size_t dgrads = 0;
    for (const TraceOp& op : t.ops) dgrads += op.name.size() > 6 && op.name.substr(op.name.size() - 6) == ".dgrad";
    CHECK(dgrads == gemm_layers - 1);
    // Buckets add up to every gradient.
    auto buckets = with_prefix(t, "allreduce.");
    REQUIRE(!buckets.empty());
    double total = 0;
    std::vector<std::string> names;
    for (const TraceOp* b : buckets) {
      CHECK(b->kind == TraceOp::Kind::collective);
      CHECK(b->op == "allreduce");
      CHECK(b->dtype == "float");
      CHECK(b->stream == "comm");
      CHECK(b->after.size() == 1);
      total += b->size_B;
      names.push_back(b->name);
    }
    CHECK(total == 102228128);
    // The optimizer waits for every bucket.
    const TraceOp* optimizer = find_op(t, "optimizer");
    REQUIRE(optimizer != nullptr);
    CHECK(optimizer->after == names);
    const TraceOp* overhead = find_op(t, "step.overhead");
    if (framework == "pytorch-ddp") {
      // First bucket 1 MiB, later ones 25 MiB (a bucket closes once it reaches its cap).
      CHECK(buckets.front()->size_B >= 1 * kMiB);
      // The last layer with weights, fc (2048 x 1000 + 1000 = 2,049,000 params), is over the
      // 1 MiB first cap alone: 2,049,000 x 4 = 8,196,000 B, ready after its weight gradient.
      CHECK(buckets.front()->size_B == 8196000);
      CHECK(buckets.front()->after == std::vector<std::string>{"bwd.fc.wgrad"});
      for (std::size_t i = 1; i + 1 < buckets.size(); ++i) CHECK(buckets[i]->size_B >= 25 * kMiB);
      CHECK(overhead == nullptr);  // step_overhead 0us
      // A "bucket" setting replaces the 25 MiB cap, not DDP's fixed 1 MiB first bucket.
      TrainingSpec big = s;
      big.bucket_B = 40 * kMiB;
      // with_prefix points into the trace: it must outlive them (ASan caught a temporary here).
      TraceSpec big_trace = training_trace(big, setup, 8);
      auto resized = with_prefix(big_trace, "allreduce.");
      REQUIRE(resized.size() >= 3);
      CHECK(resized.front()->size_B == 8196000);
      for (std::size_t i = 1; i + 1 < resized.size(); ++i) CHECK(resized[i]->size_B >= 40 * kMiB);
      CHECK(resized.size() < buckets.size());
    } else {
      // 64 MiB fusion buffer: 102,228,128 B = one full buffer (>= 67,108,864 B) and the rest.
      CHECK(buckets.size() == 2);
      CHECK(buckets[0]->size_B >= 64 * kMiB);
      REQUIRE(overhead != nullptr);
      CHECK(overhead->cost == TraceOp::Cost::time);
      CHECK(overhead->time_s == Approx(9.597e-3).epsilon(1e-12));  // as solved in models/frameworks.json
      CHECK(overhead->stream == "host");
      CHECK(overhead->after == std::vector<std::string>{"optimizer"});
      // Horovod has no separate first bucket: a "bucket" setting caps every bucket, the first
      // included. With 16 MiB: the first closes within one layer's gradient above 16 MiB (the
      // largest ResNet-50 layer, fc, holds 8,196,000 B), so below 16 MiB + 8,196,000 B.
      TrainingSpec small = spec;
      small.bucket_B = 16 * kMiB;
      TraceSpec small_trace = training_trace(small, setup, 8);
      auto fused = with_prefix(small_trace, "allreduce.");
      REQUIRE(fused.size() >= 4);
      CHECK(fused.front()->size_B >= 16 * kMiB);
      CHECK(fused.front()->size_B < 16 * kMiB + 8196000);
    }
  }
}

TEST_CASE("workload: 2:4 sparsity switches change gradient bytes and forward GEMMs") {
  TrainingSpec dense;
  TrainingSetup setup = resnet50("pytorch-ddp", dense);
  double prunable = 0;
  for (const Layer& l : setup.network->layers) prunable += l.prunable ? l.params : 0;
  // Prunable conv/linear weights of ResNet-50 (models/networks.json): 23,445,504 parameters.
  CHECK(prunable == 23445504);
  TrainingSpec grads = dense;
  grads.sparsity.gradients = true;
  // Half of the prunable gradients stay: 102,228,128 - 23,445,504 / 2 x 4 = 102,228,128 - 46,891,008
  // = 55,337,120 B.
  CHECK(gradient_bytes(dense, setup) - gradient_bytes(grads, setup) == prunable / 2 * 4);
  CHECK(gradient_bytes(grads, setup) == 55337120);
  double total = 0;
  TraceSpec grads_trace = training_trace(grads, setup, 8);  // outlives the pointers with_prefix returns
  for (const TraceOp* b : with_prefix(grads_trace, "allreduce.")) total += b->size_B;
  CHECK(total == 55337120);

  TrainingSpec math = dense;
  math.sparsity.math = true;
  TraceSpec t = training_trace(math, setup, 8);
  TraceSpec plain = training_trace(dense, setup, 8);
  int sparse_forward = 0;
  for (const Layer& l : setup.network->layers) {
    INFO(l.name);
    const TraceOp* fwd = find_op(t, "fwd." + l.name);
    REQUIRE(fwd != nullptr);
    CHECK(fwd->sparse == l.prunable);
    sparse_forward += fwd->sparse;
    CHECK_FALSE(find_op(plain, "fwd." + l.name)->sparse);
  }
  CHECK(sparse_forward > 0);
  for (const TraceOp* op : with_prefix(t, "bwd.")) CHECK_FALSE(op->sparse);  // backward GEMMs stay dense
}

TEST_CASE("workload: the memory estimate of ResNet-50 at 256 images per GPU") {
  TrainingSpec spec;
  TrainingSetup setup = resnet50("pytorch-ddp", spec);
  spec.batch_per_gpu = 256;
  spec.precision = "amp";
  const double params = 25557032;
  // Weights: FP32 master (4 B) and the FP16 copy (2 B); gradients FP32 (4 B); SGD momentum (4 B).
  TrainingMemory m = training_memory(spec, setup);
  CHECK(m.weights_B == Approx(params * 6));
  CHECK(m.gradients_B == Approx(params * 4));
  CHECK(m.optimizer_B == Approx(params * 4));
  // Activations: every layer's output (GEMM layers m x n x batch, the others their elements),
  // FP16, 256 images. conv1 alone: 12544 x 64 x 2 B x 256 = 411,041,792 B.
  double elements = 0;
  for (const Layer& layer : setup.network->layers)
    elements += layer.kind == Layer::Kind::elementwise || layer.kind == Layer::Kind::embedding
                    ? layer.elements
                    : layer.gemm_m * layer.gemm_n * layer.batch;
  CHECK(m.activations_B == Approx(elements * 2 * 256));
  CHECK(m.activations_B > 411041792.0 * 10);
  CHECK(m.total_B() == Approx(m.weights_B + m.gradients_B + m.optimizer_B + m.activations_B));
  // Compressed 2:4 weights: each pruned FP32 weight keeps 0.53125 of its bytes (half the values
  // plus a 2-bit index per kept value: 0.5 + 0.5 x 0.25 / 4), in master, copy and momentum alike;
  // gradients stay dense. 23,445,504 of the parameters are prunable (test above).
  spec.sparsity.weights = true;
  TrainingMemory sparse = training_memory(spec, setup);
  const double kept = params - 23445504 * (1 - 0.53125);
  CHECK(sparse.weights_B == Approx(kept * 6));
  CHECK(sparse.optimizer_B == Approx(kept * 4));
  CHECK(sparse.gradients_B == Approx(params * 4));
  CHECK(sparse.activations_B == Approx(m.activations_B));
}

TEST_CASE("workload: tensor parallelism splits the transformer blocks as Megatron-LM does") {
  TrainingSpec spec;
  TrainingSetup setup = bert_tp2(spec);
  TraceSpec t = training_trace(spec, setup, 4);
  // 4 ranks in tensor-parallel pairs: tp0 = {0, 1}, tp1 = {2, 3}; data-parallel dp0 = {0, 2},
  // dp1 = {1, 3}. Two replicas of 8 sequences: 16 per iteration.
  REQUIRE(t.groups.size() == 4);
  CHECK(t.groups[0].name == "tp0");
  CHECK(t.groups[0].ranks == std::vector<int>{0, 1});
  CHECK(t.groups[3].name == "dp1");
  CHECK(t.groups[3].ranks == std::vector<int>{1, 3});
  CHECK(t.samples == 16);
  auto op = [&](const std::string& name) -> const TraceOp& {
    for (const TraceOp& o : t.ops)
      if (o.name == name) return o;
    FAIL("no op " << name);
    return t.ops.front();
  };
  // Column-parallel qkv: m = 128 tokens x 8 sequences, n = 3072 / 2, k = 1024, on tp1's ranks.
  const TraceOp& qkv = op("fwd.encoder.0.attention.qkv.tp1");
  CHECK(qkv.m == 1024);
  CHECK(qkv.n == 1536);
  CHECK(qkv.k == 1024);
  CHECK(qkv.ranks == std::vector<int>{2, 3});
  // Attention core: 16 / 2 heads per rank, 8 sequences each: 64 GEMMs of 128 x 128 x 64.
  CHECK(op("fwd.encoder.0.attention.scores.tp0").batch == 64);
  // Row-parallel attention output: k = 1024 / 2; its output all-reduced in the pair, FP16:
  // 128 x 1024 x 8 x 2 B = 2,097,152 B, on the "tp" stream; the next op waits for it.
  const TraceOp& proj = op("fwd.encoder.0.attention.output.dense.tp0");
  CHECK(proj.k == 512);
  CHECK(proj.n == 1024);
  const TraceOp& ar = op("fwd.encoder.0.attention.output.dense.allreduce.tp0");
  CHECK(ar.group == "tp0");
  CHECK(ar.size_B == 2097152);
  CHECK(ar.dtype == "half");
  CHECK(ar.stream == "tp");
  CHECK(ar.after == std::vector<std::string>{"fwd.encoder.0.attention.output.dense.tp0"});
  CHECK(op("fwd.encoder.0.attention.output.dropout.tp0").after ==
        std::vector<std::string>{"fwd.encoder.0.attention.output.dense.allreduce.tp0"});
  // Backward: the column-parallel qkv's input gradient (1024 x 1024 FP16 = 2,097,152 B) is
  // partial on each rank and all-reduced after its dgrad.
  const TraceOp& back = op("bwd.encoder.0.attention.qkv.dgrad.allreduce.tp0");
  CHECK(back.size_B == 2097152);
  CHECK(back.after == std::vector<std::string>{"bwd.encoder.0.attention.qkv.dgrad.tp0"});
  // Gradients per rank: column layers hold half their parameters, row layers half their weights
  // and their whole bias, everything else whole; FP32, all-reduced across the pair's replicas.
  double per_rank = 0;
  for (const Layer& l : setup.network->layers) {
    if (l.tp == Layer::Split::column) per_rank += l.params / 2;
    else if (l.tp == Layer::Split::row) per_rank += l.gemm_n * l.gemm_k / 2 + (l.params - l.gemm_n * l.gemm_k);
    else per_rank += l.params;
  }
  CHECK(gradient_bytes(spec, setup) == Approx(per_rank * 4));
  double dp0 = 0, dp1 = 0;
  for (const TraceOp& o : t.ops) {
    if (o.kind != TraceOp::Kind::collective || o.stream != "comm") continue;
    (o.group == "dp0" ? dp0 : dp1) += o.size_B;
    CHECK(o.after.size() == 2);  // the op that readies the bucket, in both pairs
  }
  CHECK(dp0 == Approx(per_rank * 4));
  CHECK(dp1 == Approx(per_rank * 4));
  // Groups that do not divide the ranks are refused.
  spec.tensor_parallel = 3;
  CHECK_THROWS_AS(training_trace(spec, setup, 4), std::invalid_argument);
}

TEST_CASE("workload: a tensor-parallel iteration replays with its collectives") {
  TrainingSpec spec;
  TrainingSetup setup = bert_tp2(spec);
  TraceSpec t = training_trace(spec, setup, 8);
  Topology a100 = bundled("dgx-a100");
  Replay replay(a100, catalog(), t);
  Simulator simulator;
  PlatformRunner runner(simulator, simulator.add_platform(a100, replay.routes(), replay.needs()));
  ReplayResult r = replay.run(runner);
  // 4 pairs x 24 layers x (2 forward + 2 backward) activation allreduces, plus each of the 2
  // data-parallel groups' buckets.
  int tp_allreduces = 4 * 24 * 4;
  CHECK(r.collectives > tp_allreduces);
  CHECK(r.iteration_s > r.compute_s);
  CHECK(r.compute_s == Approx(replay.rank0_compute_s()).epsilon(1e-9));
}
