// The LLM module's arithmetic (src/llm): parameters, iteration FLOPs against Megatron-LM's
// closed forms, one layer's kernels and communication under tp / sp / cp, activation memory
// against Korthikanti et al. 2022, ZeRO sharding, layout checks, rank placement and the 1F1B
// and interleaved pipeline timelines. Every expected number is derived by hand next to it.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "llm/layout.hpp"
#include "llm_helpers.hpp"
#include "llm/pipeline.hpp"
#include "llm/transformer_math.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

using test::make_model;

const NamedKernel& find(const std::vector<NamedKernel>& kernels, const std::string& name) {
  for (const NamedKernel& k : kernels)
    if (k.name == name) return k;
  FAIL("no kernel named " << name);
  throw std::logic_error("unreachable");
}

void check_gemm(const NamedKernel& k, double m, double n, double b) {
  INFO(k.name);
  CHECK(k.kernel.kind == Kernel::Kind::gemm);
  CHECK(k.kernel.m == m);
  CHECK(k.kernel.n == n);
  CHECK(k.kernel.k == b);
}

void check_usage_error(const TransformerSpec& m, const LlmLayout& L, int gpus, const std::string& text) {
  INFO(text);
  CHECK_THROWS_AS(resolve_layout(m, L, gpus), UsageError);
  CHECK_THROWS_WITH(resolve_layout(m, L, gpus), Catch::Contains(text));
}

}  // namespace

TEST_CASE("llm: count_params of a tiny GELU model, tied", "[llm]") {
  // l 2, h 8, a 2 (d 4), kv 2, f 32, V 16.
  TransformerSpec m = make_model(2, 8, 2, 2, 32, 16);
  m.tied_embeddings = true;
  ParamCounts c = count_params(m);
  CHECK(c.attention == 512);  // 4 h^2 = 4 x 64 = 256 per layer, x 2 layers
  CHECK(c.mlp == 1024);       // 2 h f = 2 x 8 x 32 = 512 per layer, x 2
  CHECK(c.norms == 40);       // 2 h = 16 per layer, x 2, + final h 8
  CHECK(c.embedding == 128);  // V h = 16 x 8
  CHECK(c.lm_head == 0);      // tied
  CHECK(c.experts == 0);
  CHECK(c.router == 0);
  CHECK(c.total() == 1704);   // 512 + 1024 + 40 + 128
}

TEST_CASE("llm: count_params untied, SwiGLU and grouped-query attention", "[llm]") {
  // kv 1: Wq and Wo are h x h = 64 each, Wk and Wv h x (kv d) = 8 x 4 = 32 each: 192 per layer.
  TransformerSpec m = make_model(2, 8, 2, 1, 32, 16);
  m.ffn = TransformerSpec::Ffn::swiglu;
  ParamCounts c = count_params(m);
  CHECK(c.attention == 384);  // 192 x 2 layers
  CHECK(c.mlp == 1536);       // 3 h f = 3 x 8 x 32 = 768 per layer, x 2
  CHECK(c.norms == 40);
  CHECK(c.embedding == 128);
  CHECK(c.lm_head == 128);    // untied: V h = 16 x 8
  CHECK(c.total() == 2216);   // 384 + 1536 + 40 + 128 + 128
}

TEST_CASE("llm: count_params of an MoE model with a dense first layer", "[llm]") {
  // SwiGLU, l 2 with layer 0 dense (first_dense 1) and layer 1 MoE: 4 experts of f_e 16, top 2,
  // 1 shared expert.
  TransformerSpec m = make_model(2, 8, 2, 2, 32, 16);
  m.ffn = TransformerSpec::Ffn::swiglu;
  m.tied_embeddings = true;
  m.moe = MoeSpec{4, 2, 16, 1, {false, true}};
  ParamCounts c = count_params(m);
  CHECK(c.attention == 512);        // 4 h^2 = 256 per layer, both layers
  CHECK(c.mlp == 768);              // layer 0 only: 3 h f = 3 x 8 x 32
  CHECK(c.experts == 1536);         // layer 1: 4 experts x 3 h f_e = 4 x 3 x 8 x 16 = 4 x 384
  CHECK(c.shared_experts == 384);   // 1 x 3 x 8 x 16
  CHECK(c.router == 32);            // h x experts = 8 x 4
  CHECK(c.norms == 40);
  CHECK(c.embedding == 128);
  CHECK(c.lm_head == 0);
  CHECK(c.total() == 3400);         // 512 + 768 + 1536 + 384 + 32 + 40 + 128
}

TEST_CASE("llm: iteration_flops matches Megatron-LM's closed forms for GPT-3 175B", "[llm]") {
  // Narayanan et al. 2021: l 96, h 12288, a 96 (d 128), V 51200, f 4h, s 2048, B 1536.
  TransformerSpec m = make_model(96, 12288, 96, 96, 4 * 12288, 51200);
  m.tied_embeddings = true;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200, a = 96, d = 128;
  // Per token and layer, forward 2 x 12 h^2 (4 h^2 attention, 8 h^2 MLP) + 4 s h (scores and
  // context); head 2 V h; x 3 for backward: B s (72 l h^2 + 12 l s h + 6 V h)
  //   = 72 B s l h^2 (1 + s / (6 h) + V / (12 l h)).
  const double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  IterationFlops none = iteration_flops(m, 2048, B, Recompute::none);
  CHECK(none.model == Approx(model).epsilon(1e-9));
  CHECK(none.hardware == none.model);

  // Full recomputation runs every layer's forward again (the head not): + B s l (24 h^2 + 4 s h)
  // = 96 B s l h^2 (1 + s / (6 h) + V / (16 l h)), SC21's eq. 3.
  IterationFlops full = iteration_flops(m, 2048, B, Recompute::full);
  CHECK(full.model == Approx(model).epsilon(1e-9));
  CHECK(full.hardware == Approx(96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))).epsilon(1e-9));

  // Selective recomputation runs the attention core's forward again: 4 s a d per layer per token.
  IterationFlops selective = iteration_flops(m, 2048, B, Recompute::selective);
  CHECK(selective.model == Approx(model).epsilon(1e-9));
  CHECK(selective.hardware - selective.model == Approx(B * s * l * 4 * s * a * d).epsilon(1e-9));
}

TEST_CASE("llm: layer_kernels GEMM shapes and elementwise bytes under tp 2", "[llm]") {
  // h 64, a 8 (d 8), kv 2, f 256 GELU; tp 2, cp 1, b 2, s 16: b s = 32 rows per GEMM.
  TransformerSpec m = make_model(4, 64, 8, 2, 256, 128);
  LlmLayout L;
  L.tp = 2;
  L.dp = 1;
  L.micro_batch = 2;
  L.seq_len = 16;
  LayerKernels k = layer_kernels(m, L, 0);
  // qkv: n = (heads + 2 kv) d / tp = (8 + 4) x 8 / 2 = 48, k = h = 64.
  check_gemm(find(k.forward, "qkv"), 32, 48, 64);
  // Backward: dX = dC W^T is m x k by n (32 x 64 by 48); dW = X^T dC is k x n by m (64 x 48 by 32).
  check_gemm(find(k.backward, "qkv.dgrad"), 32, 64, 48);
  check_gemm(find(k.backward, "qkv.wgrad"), 64, 48, 32);
  // proj: row-parallel, k = heads d / tp = 32; fc1 n = f / tp = 128, fc2 k = 128.
  check_gemm(find(k.forward, "proj"), 32, 64, 32);
  check_gemm(find(k.forward, "fc1"), 32, 128, 64);
  check_gemm(find(k.forward, "fc2"), 32, 64, 128);
  check_gemm(find(k.backward, "fc2.dgrad"), 32, 128, 64);
  check_gemm(find(k.backward, "fc2.wgrad"), 128, 64, 32);
  // Flash attention: s 16 queries against half of 16 keys (causal), depth d 8, over
  // b a / tp = 2 x 8 / 2 = 8 (sequence, head) pairs; backward 2.5 times the batch.
  const NamedKernel& core = find(k.forward, "attention");
  CHECK(core.core);
  CHECK(core.kernel.m == 16);
  CHECK(core.kernel.n == 8);
  CHECK(core.kernel.k == 8);
  CHECK(core.kernel.batch == 8);
  CHECK(find(k.backward, "attention.bwd").kernel.batch == 20);
  // norm1 reads and writes every token's hidden vector: 32 x 64 x 2 accesses x 2 B = 8192 B;
  // backward twice that. The GELU: 32 x 128 x 2 x 2 B = 16384 B. residual: 3 accesses, 12288 B.
  CHECK(find(k.forward, "norm1").kernel.bytes_B == 8192);
  CHECK(find(k.backward, "norm1.bwd").kernel.bytes_B == 16384);
  CHECK(find(k.forward, "act").kernel.bytes_B == 16384);
  CHECK(find(k.forward, "residual1").kernel.bytes_B == 12288);

  // Sequence parallelism splits the tokens of norms and residuals by tp: 16 x 64 x 2 x 2 = 4096 B;
  // the GEMMs keep all 32 rows (the all-gather brings them back).
  L.sp = true;
  LayerKernels ksp = layer_kernels(m, L, 0);
  CHECK(find(ksp.forward, "norm1").kernel.bytes_B == 4096);
  CHECK(find(ksp.forward, "residual2").kernel.bytes_B == 6144);  // 16 x 64 x 3 x 2
  check_gemm(find(ksp.forward, "qkv"), 32, 48, 64);
}

TEST_CASE("llm: layer_comm sizes under tp, sp and cp", "[llm]") {
  TransformerSpec m = make_model(4, 64, 8, 2, 256, 128);
  LlmLayout L;
  L.tp = 2;
  L.dp = 1;
  L.micro_batch = 2;
  L.seq_len = 16;
  // tp_B = b s h x 2 B = 2 x 16 x 64 x 2 = 4096 B; two all-reduces per forward.
  LayerComm c = layer_comm(m, L, 0);
  CHECK(c.tp_ops == 2);
  CHECK(c.tp_B == 4096);
  CHECK(c.pp_B == 4096);
  CHECK(c.cp_steps == 0);
  CHECK(c.cp_B == 0);
  CHECK(c.ep_B == 0);
  // sp: 2 all-gathers + 2 reduce-scatters of the same full size; the stage boundary sends
  // the sequence-parallel slice: 4096 / 2 = 2048 B.
  L.sp = true;
  LayerComm s = layer_comm(m, L, 0);
  CHECK(s.tp_ops == 4);
  CHECK(s.tp_B == 4096);
  CHECK(s.pp_B == 2048);
  // cp 4: 16 / 4 = 4 tokens of each sequence, b s / cp = 8 tokens; ring of cp - 1 = 3 steps,
  // each sending K and V: 2 x 8 x (kv d / tp = 2 x 8 / 2 = 8) x 2 B = 256 B; tp_B = 8 x 64 x 2 = 1024.
  L.sp = false;
  L.cp = 4;
  LayerComm r = layer_comm(m, L, 0);
  CHECK(r.cp_steps == 3);
  CHECK(r.cp_B == 256);
  CHECK(r.tp_B == 1024);
  check_gemm(find(layer_kernels(m, L, 0).forward, "qkv"), 8, 48, 64);
  // tp 1: no tensor-parallel collective at all.
  L.tp = 1;
  L.cp = 1;
  CHECK(layer_comm(m, L, 0).tp_ops == 0);
  CHECK(layer_comm(m, L, 0).tp_B == 0);
}

TEST_CASE("llm: layer_activation_B is Korthikanti et al. 2022's 34 s b h", "[llm]") {
  // h 64, a 8, MHA, f 4h GELU; s 16, b 2: s b h = 2048. With 2-byte activations and 1-byte
  // dropout masks a layer keeps 34 s b h bytes (attention 11, MLP 19, norms 4) besides the
  // 5 a s^2 b score term flash attention never stores.
  TransformerSpec m = make_model(4, 64, 8, 8, 256, 128);
  LlmLayout L;
  L.dp = 1;
  L.micro_batch = 2;
  L.seq_len = 16;
  const double sbh = 16 * 2 * 64;
  CHECK(layer_activation_B(m, L, 0) == 34 * sbh);  // 69632 B

  // tp 2 with sp: everything split by t: 34 s b h / 2.
  L.tp = 2;
  L.sp = true;
  CHECK(layer_activation_B(m, L, 0) == 34 * sbh / 2);
  // Without sp the norms, residual inputs and masks (10 s b h) stay whole: 10 + 24 / 2 = 22.
  L.sp = false;
  CHECK(layer_activation_B(m, L, 0) == 22 * sbh);

  // Full recomputation keeps each layer's 2-byte input: 2 s b h, / t under sp.
  L.recompute = Recompute::full;
  CHECK(layer_activation_B(m, L, 0) == 2 * sbh);
  L.sp = true;
  CHECK(layer_activation_B(m, L, 0) == 2 * sbh / 2);

  // Unfused attention, nothing recomputed, tp 1: + 5 a s^2 b = 5 x 8 x 256 x 2 = 20480 B.
  L.tp = 1;
  L.sp = false;
  L.recompute = Recompute::none;
  L.attention = Attention::unfused;
  CHECK(layer_activation_B(m, L, 0) == 34 * sbh + 5 * 8 * 16 * 16 * 2);
  // Selective recomputation drops the score term again.
  L.recompute = Recompute::selective;
  CHECK(layer_activation_B(m, L, 0) == 34 * sbh);
}

TEST_CASE("llm: rank_params of the first and last pipeline stages", "[llm]") {
  // l 4, h 64, a 8, MHA, f 256 GELU, V 128, untied; tp 2, pp 2: two layers per stage.
  // Per layer: attention 4 h^2 / tp = 16384 / 2 = 8192, MLP 2 h f / tp = 32768 / 2 = 16384,
  // norms 2 h = 128 (replicated): 24704; two layers 49408. Embedding table V h / tp = 4096.
  TransformerSpec m = make_model(4, 64, 8, 8, 256, 128);
  LlmLayout L;
  L.tp = 2;
  L.pp = 2;
  L.dp = 2;
  L.micro_batch = 1;
  L.seq_len = 16;
  CHECK(rank_params(m, L, 0).dense == 53504);  // 49408 + embedding 4096
  CHECK(rank_params(m, L, 1).dense == 53568);  // 49408 + LM head 4096 + final norm 64
  CHECK(rank_params(m, L, 1).experts == 0);
  // Tied, the last stage keeps its own copy of the table (Megatron syncs its gradient with the
  // first stage's): the same count.
  m.tied_embeddings = true;
  CHECK(rank_params(m, L, 1).dense == 53568);
  // Tied with pp 1, the head uses the embedding's weight itself: 4 x 24704 + 4096 + 64 = 102976.
  L.pp = 1;
  CHECK(rank_params(m, L, 0).dense == 102976);
  m.tied_embeddings = false;
  CHECK(rank_params(m, L, 0).dense == 107072);  // untied: + the head's 4096
}

TEST_CASE("llm: stage_memory under ZeRO 0 to 3", "[llm]") {
  // The model of the rank_params test; tp 2, pp 2, dp 2, cp 2: parameters are replicated over
  // dp x cp = 4 ranks. bf16: weights 2 B, fp32 gradients 4 B, master 4 B + Adam's 8 B of state.
  TransformerSpec m = make_model(4, 64, 8, 8, 256, 128);
  LlmLayout L;
  L.tp = 2;
  L.pp = 2;
  L.dp = 2;
  L.cp = 2;
  L.micro_batch = 1;
  L.seq_len = 16;
  const double P = rank_params(m, L, 0).total();
  REQUIRE(P == 53504);
  const double state_B = 8;

  L.zero = 0;  // nothing sharded
  LlmMemory z0 = stage_memory(m, L, 0, 3, state_B);
  CHECK(z0.weights_B == 2 * P);
  CHECK(z0.gradients_B == 4 * P);
  CHECK(z0.optimizer_B == (4 + state_B) * P);
  // Activations: 3 layers in flight x one layer at tp 2, no sp, cp 2 (b s / cp = 8 tokens):
  // 8 x 64 x (4 x 2 + 2) = 5120 (norms, masks) + 8 x (2 x 32 + 2 x 32) x 2 = 2048 (Q, K, V,
  // context) + 8 x 2 x 128 x 2 = 4096 (fc1, GELU) = 11264 B; x 3 = 33792 B.
  CHECK(z0.activations_B == 33792);

  L.zero = 1;  // optimizer / (dp cp)
  LlmMemory z1 = stage_memory(m, L, 0, 3, state_B);
  CHECK(z1.weights_B == 2 * P);
  CHECK(z1.gradients_B == 4 * P);
  CHECK(z1.optimizer_B == (4 + state_B) * P / 4);

  L.zero = 2;  // + gradients
  LlmMemory z2 = stage_memory(m, L, 0, 3, state_B);
  CHECK(z2.weights_B == 2 * P);
  CHECK(z2.gradients_B == 4 * P / 4);
  CHECK(z2.optimizer_B == (4 + state_B) * P / 4);

  L.zero = 3;  // + weights, and the layer running held whole: its tp share of attention
  // (4 x 64 x 64 / 2 = 8192) and of the FFN (2 x 64 x 256 / 2 = 16384) plus both norms (128),
  // 24704 parameters as 2 B weights and 4 B gradients: 148224 B (largest_gathered_layer_B).
  const double gathered_B = 24704 * (2 + 4);
  CHECK(largest_gathered_layer_B(m, L) == gathered_B);
  LlmMemory z3 = stage_memory(m, L, 0, 3, state_B);
  CHECK(z3.weights_B == 2 * P / 4 + gathered_B);
  CHECK(z3.gradients_B == 4 * P / 4);
  CHECK(z3.optimizer_B == (4 + state_B) * P / 4);
  CHECK(z3.total_B() == (2 + 4 + 12) * 53504 / 4 + 148224 + 33792);  // 240768 + 148224 + 33792

  // FSDP shards like ZeRO-3 whatever zero says.
  L.zero = 0;
  L.fsdp = true;
  CHECK(stage_memory(m, L, 0, 3, state_B).weights_B == 2 * P / 4 + gathered_B);
  // The last stage also keeps fp32 logits: b s / cp x V / tp x 4 B = 8 x 64 x 4 = 2048 B.
  CHECK(stage_memory(m, L, 1, 3, state_B).activations_B == 33792 + 2048);
}

TEST_CASE("llm: resolve_layout names the numbers that disagree", "[llm]") {
  TransformerSpec m = make_model(4, 64, 8, 8, 256, 128);  // "tiny": l 4, a 8, seq 16
  LlmLayout L;
  L.tp = 2;
  L.pp = 2;
  L.dp = 3;
  check_usage_error(m, L, 8, "tp x pp x cp x dp = 2 x 2 x 1 x 3 = 12 is not the 8 GPUs");
  L.dp = 0;
  check_usage_error(m, L, 6, "6 GPUs do not divide into tp x pp x cp = 2 x 2 x 1 = 4");

  LlmLayout heads;
  heads.tp = 3;
  check_usage_error(m, heads, 3, "tiny has 8 heads, not divisible by tp 3");

  LlmLayout layers;
  layers.pp = 2;
  layers.vp = 3;
  check_usage_error(m, layers, 2, "tiny has 4 layers, not divisible by pp x vp = 2 x 3 = 6");

  LlmLayout batch;
  batch.micro_batch = 2;
  batch.global_batch = 12;
  check_usage_error(m, batch, 4, "global batch 12 is not divisible by micro-batch x dp = 2 x 4 = 8");

  LlmLayout vp;
  vp.vp = 2;
  check_usage_error(m, vp, 1, "--vp 2 needs pipeline parallelism (--pp > 1)");

  LlmLayout ep;
  ep.ep = 2;
  check_usage_error(m, ep, 2, "--ep 2: tiny has no experts");

  // pp 2, vp 2, dp 1: global 3 / micro 1 = 3 micro-batches, not a multiple of pp 2.
  LlmLayout interleaved;
  interleaved.pp = 2;
  interleaved.vp = 2;
  interleaved.global_batch = 3;
  check_usage_error(m, interleaved, 2, "micro-batches per replica (3 = global batch / (micro-batch x dp)) divisible by pp 2");

  // dp 0 is derived: 16 GPUs / (tp 2 x pp 2 x cp 1) = 4; global batch 0 becomes micro x dp = 4,
  // seq_len 0 the model's 16.
  LlmLayout derived;
  derived.tp = 2;
  derived.pp = 2;
  LlmLayout r = resolve_layout(m, derived, 16);
  CHECK(r.dp == 4);
  CHECK(r.gpus() == 16);
  CHECK(r.global_batch == 4);
  CHECK(r.micro_batches() == 1);
  CHECK(r.seq_len == 16);
  // tp 1 turns sp off (Megatron ignores it).
  LlmLayout no_tp;
  no_tp.sp = true;
  CHECK_FALSE(resolve_layout(m, no_tp, 1).sp);
}

TEST_CASE("llm: Placement nests tp, cp, dp, pp and honours a custom order", "[llm]") {
  LlmLayout L;
  L.tp = 2;
  L.cp = 1;
  L.dp = 2;
  L.pp = 2;
  const DimOrder megatron = parse_dim_order("tp-cp-dp-pp");
  CHECK(to_string(megatron) == "tp-cp-dp-pp");
  Placement p(L, megatron);
  REQUIRE(p.ranks() == 8);
  // rank = tp + 2 (cp + 1 (dp + 2 pp)): {1, 0, 1, 1} -> 1 + 2 (0 + 1 (1 + 2 x 1)) = 7.
  CHECK(p.rank({1, 0, 1, 1}) == 7);
  CHECK(p.rank({0, 0, 1, 0}) == 2);  // 0 + 2 (0 + 1 (1 + 0))
  CHECK(p.rank({0, 0, 0, 1}) == 4);  // 0 + 2 (0 + 1 (0 + 2))
  for (int r = 0; r < p.ranks(); ++r) {
    INFO("rank " << r);
    CHECK(p.rank(p.coord(r)) == r);
  }
  RankCoord c = p.coord(7);
  CHECK((c.tp == 1 && c.cp == 0 && c.dp == 1 && c.pp == 1));

  // dp innermost: rank = dp + 2 (tp + 2 (cp + 1 pp)).
  Placement custom(L, parse_dim_order("dp-tp-cp-pp"));
  CHECK(custom.rank({0, 0, 1, 0}) == 1);  // dp 1 is the neighbour
  CHECK(custom.rank({1, 0, 0, 0}) == 2);  // 0 + 2 (1 + 2 x 0)
  CHECK(custom.rank({1, 0, 1, 1}) == 7);  // 1 + 2 (1 + 2 (0 + 1))
  RankCoord one = custom.coord(1);
  CHECK((one.tp == 0 && one.dp == 1 && one.pp == 0));
  for (int r = 0; r < custom.ranks(); ++r) CHECK(custom.rank(custom.coord(r)) == r);

  CHECK_THROWS_AS(parse_dim_order("tp-tp-dp-pp"), UsageError);
  CHECK_THROWS_WITH(parse_dim_order("tp-tp-dp-pp"), Catch::Contains("tp twice"));
  CHECK_THROWS_AS(parse_dim_order("tp-cp-dp"), UsageError);
  CHECK_THROWS_WITH(parse_dim_order("tp-cp-dp"), Catch::Contains("--order 'tp-cp-dp'"));
}

TEST_CASE("llm: 1F1B timeline, bubble and in-flight micro-batches", "[llm]") {
  // p 4, m 8, f 1 s, b 2 s, no transfer time. Every rank is busy m (f + b) = 24 s; rank 0's last
  // backward waits for micro-batch 7 to pass the (p - 1) downstream stages both ways, and the
  // schedule stalls nowhere else: makespan (m + p - 1)(f + b) = 11 x 3 = 33 s, rank 0's
  // bubble (p - 1)(f + b) = 9 s.
  PipelineResult r = run_pipeline(test::uniform_pipeline(4, 1, 8, 1, 2, 0));
  CHECK(r.makespan_s == 33);
  CHECK(r.busy_s[0] == 24);
  CHECK(r.end_s[0] == 33);
  CHECK(r.end_s[0] - r.busy_s[0] == 9);
  // Rank 3 starts after 3 forwards (3 s) and runs its 24 s back to back: ends at 27.
  CHECK(r.end_s[3] == 27);
  // Rank 0 runs p - 1 = 3 warm-up forwards and one more before its first backward: 4 = p in
  // flight; the last rank alternates F and B: 1.
  CHECK(r.peak_in_flight[0] == 4);
  CHECK(r.peak_in_flight[3] == 1);
  CHECK(r.last_backward_s[0] == 2);

  // p2p c = 0.5 s. Order of rank r: p - r - 1 warm-up forwards, then F/B pairs. The chain that
  // ends rank 0's last backward B7 (each hop either a transfer c or the rank's own order):
  //   F0 through ranks 0..3                      4 f + 3 c = 5.5    (r3's F0 ends at 5.5)
  //   B0 on ranks 3, 2, 1                        3 b + 2 c = 7      (r1's B0 ends 12.5; r1 waited
  //                                                                 there since its F2 at 4.5)
  //   r1's next pass F3, then F3 on ranks 2, 3   3 f + 2 c = 4      (16.5; r2, r3 are free: 13, 14.5)
  //   B3 on ranks 3, 2, 1, 0                     4 b + 3 c = 9.5    (r0's B3 ends 26)
  //   r0's next pass F7 through ranks 0..3       4 f + 3 c = 5.5    (31.5)
  //   B7 on ranks 3, 2, 1, 0                     4 b + 3 c = 9.5    (41)
  // Total 11 f + 11 b + 16 c = 11 + 22 + 8 = 41 s (with c = 0 the same chain gives the 33 s above).
  // The loop through all four ranks costs 6 c per p micro-batches: the last rank's backwards
  // come every f + b + 6 c / 4 = 3.75 s in steady state (B3 at 18.5, B7 at 33.5).
  PipelineResult c = run_pipeline(test::uniform_pipeline(4, 1, 8, 1, 2, 0.5));
  CHECK(c.makespan_s == 41);
  CHECK(c.end_s[0] == 41);
  CHECK(c.end_s[3] == 33.5);
  CHECK(c.busy_s[0] == 24);
  CHECK(c.peak_in_flight[0] == 4);
  CHECK(c.peak_in_flight[3] == 1);
}

TEST_CASE("llm: interleaved 1F1B timeline from Megatron's schedule", "[llm]") {
  // pp 2, vp 2, m 4: rank 0 holds virtual stages 0 and 2, rank 1 stages 1 and 3. Megatron's
  // warm-up is (pp - r - 1) 2 + (vp - 1) pp: 4 passes on rank 0, 2 on rank 1; chunks change every
  // pp = 2 micro-batches (backward from the last chunk). Fk/Bk: virtual stage s, micro-batch k.
  std::vector<Pass> r0 = schedule_order(0, 2, 2, 4);
  const std::vector<Pass> expected0 = {
      {true, 0, 0},  {true, 0, 1},  {true, 2, 0},  {true, 2, 1},   // warm-up
      {true, 0, 2},  {false, 2, 0}, {true, 0, 3},  {false, 2, 1},  // steady F/B pairs
      {true, 2, 2},  {false, 0, 0}, {true, 2, 3},  {false, 0, 1},
      {false, 2, 2}, {false, 2, 3}, {false, 0, 2}, {false, 0, 3}};  // cool-down
  REQUIRE(r0.size() == expected0.size());
  for (std::size_t i = 0; i < r0.size(); ++i) {
    INFO("pass " << i);
    CHECK(r0[i].forward == expected0[i].forward);
    CHECK(r0[i].stage == expected0[i].stage);
    CHECK(r0[i].micro_batch == expected0[i].micro_batch);
  }
  // Rank 1: F1/0 F1/1 | F3/0 B3/0 F3/1 B3/1 F1/2 B1/0 F1/3 B1/1 F3/2 B3/2 F3/3 B3/3 | B1/2 B1/3.
  std::vector<Pass> r1 = schedule_order(1, 2, 2, 4);
  REQUIRE(r1.size() == 16);
  CHECK((r1[2].forward && r1[2].stage == 3 && r1[2].micro_batch == 0));
  CHECK((!r1[7].forward && r1[7].stage == 1 && r1[7].micro_batch == 0));
  CHECK((!r1[15].forward && r1[15].stage == 1 && r1[15].micro_batch == 3));

  // Every pass 1 s, no transfer time. Timeline [start, end) per pass (s/k = stage/micro-batch):
  //   r0: F0/0 0-1, F0/1 1-2, F2/0 2-3 (after r1's F1/0 1-2), F2/1 3-4, F0/2 4-5,
  //       B2/0 5-6 (after r1's B3/0 4-5), F0/3 6-7, B2/1 7-8 (B3/1 6-7), F2/2 8-9 (F1/2 7-8),
  //       B0/0 9-10 (B1/0 8-9), F2/3 10-11 (F1/3 9-10), B0/1 11-12 (B1/1 10-11),
  //       B2/2 13-14 (B3/2 12-13), B2/3 15-16 (B3/3 14-15), B0/2 16-17 (B1/2 15-16),
  //       B0/3 17-18 (B1/3 16-17).
  //   r1: F1/0 1-2, F1/1 2-3, F3/0 3-4, B3/0 4-5, F3/1 5-6, B3/1 6-7, F1/2 7-8, B1/0 8-9,
  //       F1/3 9-10, B1/1 10-11, F3/2 11-12, B3/2 12-13, F3/3 13-14, B3/3 14-15,
  //       B1/2 15-16, B1/3 16-17.
  // Makespan 18 s; each rank is busy 16 passes x 1 s = 16 s; rank 0's bubble 2 s.
  PipelineResult i = run_pipeline(test::uniform_pipeline(2, 2, 4, 1, 1, 0));
  CHECK(i.makespan_s == 18);
  CHECK(i.end_s[0] == 18);
  CHECK(i.end_s[1] == 17);
  CHECK(i.busy_s[0] == 16);
  CHECK(i.busy_s[1] == 16);

  // The same work without interleaving: one 2 s forward and 2 s backward per rank and
  // micro-batch. 1F1B: (m + p - 1)(f + b) = 5 x 4 = 20 s, bubble (p - 1)(f + b) = 4 s;
  // interleaving divides the bubble by vp: 4 / 2 = 2 s.
  PipelineResult plain = run_pipeline(test::uniform_pipeline(2, 1, 4, 2, 2, 0));
  CHECK(plain.makespan_s == 20);
  CHECK(plain.busy_s[0] == 16);
  CHECK(plain.end_s[0] - plain.busy_s[0] == 4);
  CHECK(i.end_s[0] - i.busy_s[0] == 2);
  CHECK(i.makespan_s < plain.makespan_s);

  // Interleaving needs micro-batches divisible by pp: 3 over pp 2.
  CHECK_THROWS_AS(run_pipeline(test::uniform_pipeline(2, 2, 3, 1, 1, 0)), std::invalid_argument);
  // One time per virtual stage: 3 given for pp 2 x vp 2 = 4.
  PipelineInput bad = test::uniform_pipeline(2, 2, 4, 1, 1, 0);
  bad.forward_s.pop_back();
  CHECK_THROWS_AS(run_pipeline(bad), std::invalid_argument);
}
