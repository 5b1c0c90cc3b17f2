// MoE layers as Megatron-Core runs them (src/llm/expert_groups.cpp, transformer_math.cpp's MoE
// branch): the expert grid etp x ep x edp carved out of a stage's tp x cp x dp ranks, the token
// counts top-k routing gives the dispatch and combine all-to-alls and the grouped expert GEMMs,
// and the layouts Megatron refuses. Every expected number is derived by hand next to it.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llm/expert_groups.hpp"
#include "llm/layout.hpp"
#include "llm/transformer_math.hpp"
#include "llm_helpers.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

// h 8, 2 heads of 4, SwiGLU, both layers MoE: 8 routed experts of 16, top 2, `shared` shared
// experts of 16; trained at 16 tokens.
TransformerSpec moe_model(int shared) {
  TransformerSpec m = test::make_model(2, 8, 2, 2, 16, 32);
  m.ffn = TransformerSpec::Ffn::swiglu;
  m.moe = MoeSpec{8, 2, 16, shared, {true, true}};
  return m;
}

LlmLayout moe_layout(int tp, int cp, int dp, int pp, int ep, int etp) {
  LlmLayout L;
  L.tp = tp;
  L.cp = cp;
  L.dp = dp;
  L.pp = pp;
  L.ep = ep;
  L.etp = etp;
  L.sp = tp > 1;
  L.seq_len = 16;
  L.micro_batch = 1;
  return L;
}

const NamedKernel& moe_kernel(const std::vector<NamedKernel>& kernels, const std::string& name) {
  for (const NamedKernel& k : kernels)
    if (k.name == name) return k;
  FAIL("no kernel named " << name);
  throw std::logic_error("unreachable");
}

bool has_kernel(const std::vector<NamedKernel>& kernels, const std::string& name) {
  for (const NamedKernel& k : kernels)
    if (k.name == name) return true;
  return false;
}

void check_grouped(const NamedKernel& k, double groups, double m, double n, double depth) {
  INFO(k.name);
  CHECK(k.kernel.kind == Kernel::Kind::gemm);
  CHECK(k.kernel.batch == groups);
  CHECK(k.kernel.m == m);
  CHECK(k.kernel.n == n);
  CHECK(k.kernel.k == depth);
}

}  // namespace

TEST_CASE("llm moe: expert groups re-split a stage's tp x cp x dp ranks as etp x ep x edp", "[llm][moe]") {
  const DimOrder megatron = parse_dim_order("tp-cp-dp-pp");
  SECTION("etp 1, ep 4 over tp 2 x dp 4: EP takes tensor-parallel ranks too") {
    // 8 ranks of the stage; local index a = i + 1 x (j + 4 k): ep groups k = 0, 1 of 4
    // consecutive ranks; edp = 8 / (1 x 4) = 2, groups {j, 4 + j}.
    LlmLayout L = moe_layout(2, 1, 4, 1, 4, 1);
    ExpertGroups g = expert_groups(L, Placement(L, megatron), 0);
    CHECK(expert_dp(L) == 2);
    CHECK(g.ep == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
    CHECK(g.edp == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
    CHECK(g.etp.size() == 8);  // one rank each
  }
  SECTION("etp = tp = 2, ep 2: EP strides over the tensor-parallel pairs") {
    // a = i + 2 (j + 2 k): ep groups (i, k) = {i + 4k, i + 2 + 4k}; etp groups consecutive pairs.
    LlmLayout L = moe_layout(2, 1, 4, 1, 2, 0);
    ExpertGroups g = expert_groups(L, Placement(L, megatron), 0);
    CHECK(expert_tp(L) == 2);
    CHECK(expert_dp(L) == 2);  // 8 / (2 x 2)
    CHECK(g.ep == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
    CHECK(g.etp == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
    CHECK(g.edp == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  }
  SECTION("context parallelism folds into the expert grid; each pipeline stage has its own") {
    // tp 2 x cp 2 x dp 2 = 8 ranks a stage, pp 2: stage 1 is ranks 8-15; etp 1, ep 8: one group.
    LlmLayout L = moe_layout(2, 2, 2, 2, 8, 1);
    ExpertGroups g = expert_groups(L, Placement(L, megatron), 1);
    CHECK(g.ep == std::vector<std::vector<int>>{{8, 9, 10, 11, 12, 13, 14, 15}});
    CHECK(g.edp.size() == 8);  // edp 1: every expert rank alone
  }
}

TEST_CASE("llm moe: layouts Megatron-Core refuses", "[llm][moe]") {
  const TransformerSpec m = moe_model(0);
  auto refuses = [&](LlmLayout L, const std::string& text) {
    INFO(text);
    CHECK_THROWS_AS(check_expert_layout(m, L), UsageError);
    CHECK_THROWS_WITH(check_expert_layout(m, L), Catch::Contains(text));
  };
  // etp x ep = 2 x 4 = 8 does not divide tp x cp x dp = 2 x 1 x 2 = 4.
  refuses(moe_layout(2, 1, 2, 1, 4, 0), "etp x ep = 2 x 4 = 8 does not divide");
  // 8 experts over ep 3.
  refuses(moe_layout(1, 1, 6, 1, 3, 1), "8 experts, not divisible by ep 3");
  // tp 2 without sequence parallelism (moe_layer.py:636-640).
  LlmLayout no_sp = moe_layout(2, 1, 4, 1, 2, 0);
  no_sp.sp = false;
  refuses(no_sp, "needs sequence parallelism");
  // expert_ffn_hidden 16 over etp 3 (tp 3 x dp 2 = 6 = 3 x 2 divides).
  refuses(moe_layout(3, 1, 2, 1, 2, 3), "expert_ffn_hidden 16 is not divisible by etp 3");
  // The 1F1B all-to-all overlap (transformer_config.py:3002-3026): expert parallelism, and the
  // interleaved schedule under pipeline parallelism, and no full recomputation.
  LlmLayout overlap = moe_layout(1, 1, 4, 1, 1, 0);
  overlap.overlap_moe_ep_comm = true;
  refuses(overlap, "needs expert parallelism");
  overlap = moe_layout(1, 1, 4, 2, 4, 0);
  overlap.overlap_moe_ep_comm = true;
  refuses(overlap, "needs the interleaved schedule");
  overlap.vp = 2;
  CHECK_NOTHROW(check_expert_layout(m, overlap));
  overlap.recompute = Recompute::full;
  refuses(overlap, "cannot run with full recomputation");
  // Folding: ep 4 x tp 2 exceeds the 4 ranks of tp 2 x dp 2, but etp 1 fits (1 x 4 divides 4).
  CHECK_NOTHROW(check_expert_layout(m, moe_layout(2, 1, 2, 1, 4, 1)));
}

TEST_CASE("llm moe: dispatch and combine bytes and grouped expert GEMMs from top-k routing", "[llm][moe]") {
  SECTION("tp 2 with sp, ep 2, etp 1, one shared expert") {
    // Each rank routes its own T = 16 tokens / tp 2 = 8 tokens (sp); dropless top-2: 16 token
    // copies leave it (all-to-all buffer 16 x h 8 x 2 B = 256 B, 1/2 of it staying local) and, the
    // router balanced, 16 come back; etp 1: rows = 8 x 2 x 1 = 16 through 8 / 2 = 4 local
    // experts, 4 rows each.
    const TransformerSpec m = moe_model(1);
    const LlmLayout L = moe_layout(2, 1, 2, 1, 2, 1);
    LayerComm c = layer_comm(m, L, 1);
    CHECK(c.ep_B == 256);   // 8 x 2 x 8 x 2 B
    CHECK(c.etp_B == 0);    // etp 1: no expert all-gather
    CHECK(c.tp_ops == 4);   // attention's all-gather and reduce-scatter, and the shared expert's
    LayerKernels k = layer_kernels(m, L, 1);
    check_grouped(moe_kernel(k.forward, "router"), 1, 8, 8, 8);               // T x experts x h
    CHECK(moe_kernel(k.forward, "permute").kernel.bytes_B == 384);            // read 8 x 8, write 16 x 8, x 2 B
    CHECK(moe_kernel(k.forward, "sort_chunks").kernel.bytes_B == 512);        // read and write 16 x 8 x 2 B
    check_grouped(moe_kernel(k.forward, "expert.fc1"), 4, 4, 32, 8);          // 4 experts of 4 rows, 2 f = 32
    check_grouped(moe_kernel(k.forward, "expert.fc2"), 4, 4, 8, 16);
    check_grouped(moe_kernel(k.backward, "expert.fc1.wgrad"), 4, 8, 32, 4);  // k x n by m, per expert
    // FLOPs of fc1: 2 x 4 x 32 x 8 x 4 experts = 8192 = 2 x rows 16 x 32 x 8 (top_k x T x 2 f x h x 2).
    const Kernel& fc1 = moe_kernel(k.forward, "expert.fc1").kernel;
    CHECK(2 * fc1.m * fc1.n * fc1.k * fc1.batch == 8192);
    // The shared expert: a dense MLP over all 16 tokens, split by tp: 2 x 16 / 2 = 16 wide.
    check_grouped(moe_kernel(k.forward, "shared.fc1"), 1, 16, 16, 8);
    CHECK(moe_kernel(k.forward, "unpermute").kernel.bytes_B == 384);
  }
  SECTION("etp = tp = 2, ep 2: the expert all-gather doubles the rows, halves the width") {
    // T = 8 as above; etp 2 gathers rows = 8 x 2 x 2 = 32, 8 per local expert; width f / etp = 8.
    const TransformerSpec m = moe_model(0);
    const LlmLayout L = moe_layout(2, 1, 2, 1, 2, 0);
    LayerComm c = layer_comm(m, L, 1);
    CHECK(c.ep_B == 256);
    CHECK(c.etp_B == 512);  // the gathered 32 x 8 x 2 B
    CHECK(c.tp_ops == 2);   // no shared expert: the attention's pair only
    LayerKernels k = layer_kernels(m, L, 1);
    check_grouped(moe_kernel(k.forward, "expert.fc1"), 4, 8, 16, 8);
    check_grouped(moe_kernel(k.forward, "expert.fc2"), 4, 8, 8, 8);
    CHECK(!has_kernel(k.forward, "shared.fc1"));
  }
  SECTION("one local expert: no sort by local expert") {
    const TransformerSpec m = moe_model(0);
    const LlmLayout L = moe_layout(1, 1, 8, 1, 8, 0);  // 8 experts over ep 8
    LayerKernels k = layer_kernels(m, L, 1);
    CHECK(!has_kernel(k.forward, "sort_chunks"));
    check_grouped(moe_kernel(k.forward, "expert.fc1"), 1, 32, 32, 8);  // T 16 x top 2 = 32 rows
    CHECK(layer_comm(m, L, 1).ep_B == 512);                    // 16 x 2 x 8 x 2 B
  }
  SECTION("Mixtral 8x7B's shape: 64 MiB all-to-all buffers at 4096 tokens, ep 8") {
    // T 4096 x top 2 x h 4096 x 2 B = 67,108,864 B; 7/8 of it (58.7 MB) leaves the rank.
    TransformerSpec m = test::make_model(1, 4096, 32, 8, 14336, 32000);
    m.ffn = TransformerSpec::Ffn::swiglu;
    m.moe = MoeSpec{8, 2, 14336, 0, {true}};
    LlmLayout L = moe_layout(1, 1, 8, 1, 8, 0);
    L.seq_len = 4096;
    CHECK(layer_comm(m, L, 0).ep_B == 67108864.0);
  }
}

TEST_CASE("llm moe: expert parameters split by ep and etp, replicated over edp", "[llm][moe]") {
  // One layer's routed experts: 8 x 3 x 8 x 16 = 3072; tp 2, dp 2, ep 2, etp 1: 3072 / 2 = 1536
  // per rank, held over edp = 4 / (1 x 2) = 2 when sharded. etp 2 instead: 3072 / 2 / 2 = 768,
  // edp 1.
  TransformerSpec m = moe_model(0);
  m.layers = 1;
  m.moe->moe_layer = {true};
  LlmLayout L = moe_layout(2, 1, 2, 1, 2, 1);
  RankParams p = rank_params(m, L, 0);
  CHECK(p.experts == 1536);
  CHECK(p.held(L, true) - p.dense / 2 == 768);  // experts / edp 2
  L.etp = 2;
  CHECK(rank_params(m, L, 0).experts == 768);
  CHECK(expert_dp(L) == 1);
}
