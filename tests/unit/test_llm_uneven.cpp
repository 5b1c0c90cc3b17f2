// Uneven pipelines (docs/llm.md, "Uneven pipelines"): the layers of each virtual stage under
// --first/last-stage-layers and the embedding / loss accounting, derived by hand; what follows
// them (parameters, layers in flight, one iteration's per-stage passes); plan's split rule; and
// the errors. Names differ from test_llm.cpp's: unity builds share one anonymous namespace.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "llm_helpers.hpp"
#include "llm/iteration.hpp"
#include "llm/layout.hpp"
#include "llm/pipeline.hpp"
#include "llm/plan.hpp"
#include "llm/transformer_math.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

// h 64, 8 heads (MHA), f 256 GELU, V 128, untied, trained at 16 tokens: per layer at tp 2,
// attention 4 h^2 / 2 = 8192 + MLP 2 h f / 2 = 16384 + norms 2 h = 128 -> 24704 parameters.
TransformerSpec small_model(int layers) { return test::make_model(layers, 64, 8, 8, 256, 128); }

LlmLayout pipeline(int pp, int vp = 1) {
  LlmLayout L;
  L.pp = pp;
  L.vp = vp;
  return L;
}

// pp x vp counts: `first`, then `middle` repeated, then `last`.
std::vector<int> split(int first, int middle, int middle_stages, int last) {
  std::vector<int> counts = {first};
  counts.insert(counts.end(), static_cast<std::size_t>(middle_stages), middle);
  counts.push_back(last);
  return counts;
}

void expect_split_error(const TransformerSpec& m, const LlmLayout& L, int gpus, const std::string& text) {
  INFO(text);
  CHECK_THROWS_AS(resolve_layout(m, L, gpus), UsageError);
  CHECK_THROWS_WITH(resolve_layout(m, L, gpus), Catch::Contains(text));
}

}  // namespace

TEST_CASE("llm uneven: layers per virtual stage, by hand", "[llm]") {
  // Llama 3 405B's 126 layers at pp 16 with the embedding and the loss as units: 128 slots / 16
  // = 8 per stage; the first and last give one slot to the embedding and the loss.
  TransformerSpec llama = small_model(126);
  LlmLayout L = pipeline(16);
  L.account_for_embedding = L.account_for_loss = true;
  CHECK(virtual_stage_layer_counts(llama, L) == split(7, 8, 14, 7));
  CHECK(describe_layer_split(llama, L) == "7+emb/8x14/7+loss");
  CHECK(virtual_stage_layers(llama, L, 0) == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  CHECK(virtual_stage_layers(llama, L, 1).front() == 7);
  CHECK(virtual_stage_layers(llama, L, 15) == std::vector<int>{119, 120, 121, 122, 123, 124, 125});

  // Llama 3.1 405B at pp 8 vp 8: 128 slots / 64 virtual stages = 2; virtual stage 0 holds layer
  // 0 (and the embedding), 63 holds layer 125 (and the loss), the 62 others two each.
  L = pipeline(8, 8);
  L.account_for_embedding = L.account_for_loss = true;
  CHECK(virtual_stage_layer_counts(llama, L) == split(1, 2, 62, 1));
  CHECK(describe_layer_split(llama, L) == "1+emb/2x62/1+loss");
  // Rank 0 runs virtual stages 0, 8, ..., 56: 1 + 7 x 2 = 15 layers; virtual stage 8 starts
  // after 1 + 7 x 2 = 15 layers. Rank 7 ends with virtual stage 63, layer 125. Rank 3: 16.
  std::vector<int> rank0 = stage_layers(llama, L, 0);
  CHECK(rank0.size() == 15);
  CHECK(rank0[0] == 0);
  CHECK(rank0[1] == 15);
  CHECK(rank0[2] == 16);
  CHECK(stage_layers(llama, L, 7).size() == 15);
  CHECK(stage_layers(llama, L, 7).back() == 125);
  CHECK(stage_layers(llama, L, 3).size() == 16);

  // BLOOM's 70 layers at pp 12, first and last 5 without accounting: (70 - 10) / 10 = 6.
  TransformerSpec bloom = small_model(70);
  L = pipeline(12);
  L.first_stage_layers = 5;
  L.last_stage_layers = 5;
  CHECK(virtual_stage_layer_counts(bloom, L) == split(5, 6, 10, 5));
  CHECK(describe_layer_split(bloom, L) == "5/6x10/5");
  // Only the first given: (70 - 4) / 11 = 6 over the others.
  L.last_stage_layers = 0;
  L.first_stage_layers = 4;
  CHECK(virtual_stage_layer_counts(bloom, L) == split(4, 6, 10, 6));
  // With accounting: 72 slots / 12 = 6, first and last 5.
  L = pipeline(12);
  L.account_for_embedding = L.account_for_loss = true;
  CHECK(virtual_stage_layer_counts(bloom, L) == split(5, 6, 10, 5));

  // Even and unset: layers / (pp vp) each, and no description.
  L = pipeline(7, 2);
  CHECK(virtual_stage_layer_counts(llama, L) == std::vector<int>(14, 9));
  CHECK(describe_layer_split(llama, L).empty());
  CHECK(stage_layers(llama, L, 1) == std::vector<int>{9, 10, 11, 12, 13, 14, 15, 16, 17, 72, 73, 74, 75, 76, 77, 78, 79, 80});
}

TEST_CASE("llm uneven: rank_params and layers in flight follow the split", "[llm]") {
  // 10 layers at pp 4 with both units: 12 slots / 4 = 3, so [2, 3, 3, 2] layers; tp 2.
  TransformerSpec m = small_model(10);
  LlmLayout L = pipeline(4);
  L.tp = 2;
  L.dp = 1;
  L.seq_len = 16;
  L.account_for_embedding = L.account_for_loss = true;
  REQUIRE(virtual_stage_layer_counts(m, L) == std::vector<int>{2, 3, 3, 2});
  CHECK(rank_params(m, L, 0).dense == 2 * 24704 + 4096);       // + embedding V h / tp = 53504
  CHECK(rank_params(m, L, 1).dense == 3 * 24704);              // 74112: the fullest rank
  CHECK(rank_params(m, L, 3).dense == 2 * 24704 + 4096 + 64);  // + LM head and final norm = 53568
  // Explicit first 1, last 1: (10 - 2) / 2 = 4 in the middle.
  L.account_for_embedding = L.account_for_loss = false;
  L.first_stage_layers = L.last_stage_layers = 1;
  CHECK(rank_params(m, L, 0).dense == 24704 + 4096);
  CHECK(rank_params(m, L, 2).dense == 4 * 24704);

  // 1F1B at pp 4 with 8 micro-batches: rank r holds pp - r micro-batches at its peak. With
  // [1, 4, 4, 1] layers: rank 0 4 x 1, rank 1 3 x 4 = 12, rank 2 2 x 4 = 8, rank 3 1 x 1.
  const std::vector<int> layers = {1, 4, 4, 1};
  CHECK(peak_layers_in_flight(0, 4, 1, 8, layers) == 4);
  CHECK(peak_layers_in_flight(1, 4, 1, 8, layers) == 12);
  CHECK(peak_layers_in_flight(2, 4, 1, 8, layers) == 8);
  CHECK(peak_layers_in_flight(3, 4, 1, 8, layers) == 1);
  // Equal chunks: the chunk-forward count times the chunk (interleaved too).
  for (int r = 0; r < 4; ++r)
    CHECK(peak_layers_in_flight(r, 4, 2, 8, std::vector<int>(8, 3)) == 3 * peak_in_flight(r, 4, 2, 8));
}

TEST_CASE("llm uneven: an uneven iteration differs from the even one only where stages do", "[llm]") {
  // 12 layers, tp 1 pp 4 dp 2 on a DGX H100: even [3, 3, 3, 3]; first and last 2 -> [2, 4, 4, 2].
  // Without tp or cp a pass is its kernels alone, so a stage's forward is its layers' plus the
  // embedding (stage 0) or the LM head (stage 3): one layer is stage 1's even forward / 3.
  TransformerSpec m = small_model(12);
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.head_dim = 64;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 1024;
  Topology t = test::bundled("dgx-h100");
  LlmLayout base = pipeline(4);
  base.global_batch = 8;
  LlmLayout even = resolve_layout(m, base, 8);
  base.first_stage_layers = base.last_stage_layers = 2;
  LlmLayout uneven = resolve_layout(m, base, 8);
  LlmResult a = simulate_iteration(t, test::catalog(), m, even, {});
  LlmResult b = simulate_iteration(t, test::catalog(), m, uneven, {});
  REQUIRE(a.stage_forward_s.size() == 4);
  REQUIRE(b.stage_forward_s.size() == 4);
  using Catch::Matchers::WithinRel;
  const double layer_fwd = a.stage_forward_s[1] / 3, layer_bwd = a.stage_backward_s[1] / 3;
  CHECK_THAT(b.stage_forward_s[0], WithinRel(a.stage_forward_s[0] - layer_fwd, 1e-12));
  CHECK_THAT(b.stage_forward_s[1], WithinRel(4 * layer_fwd, 1e-12));
  CHECK_THAT(b.stage_forward_s[2], WithinRel(4 * layer_fwd, 1e-12));
  CHECK_THAT(b.stage_forward_s[3], WithinRel(a.stage_forward_s[3] - layer_fwd, 1e-12));
  CHECK_THAT(b.stage_backward_s[0], WithinRel(a.stage_backward_s[0] - layer_bwd, 1e-12));
  CHECK_THAT(b.stage_backward_s[2], WithinRel(4 * layer_bwd, 1e-12));
  // The same work in all: model FLOPs per iteration, hence tflops x time, agree.
  CHECK_THAT(b.tflops_per_gpu * b.iteration_s, WithinRel(a.tflops_per_gpu * a.iteration_s, 1e-12));
}

TEST_CASE("llm uneven: plan's split of layers that do not divide", "[llm]") {
  LlmLayout L = pipeline(16);
  CHECK(choose_layer_split(small_model(126), L));  // 128 slots / 16
  CHECK(L.account_for_embedding);
  CHECK(L.account_for_loss);
  CHECK(L.first_stage_layers == 0);
  // 100 layers at pp 8: 102 does not divide by 8 either. Middle ceil(100 / 8) = 13 each over 6
  // stages = 78; the rest 22 halved: first 11, last 11.
  L = pipeline(8);
  CHECK(choose_layer_split(small_model(100), L));
  CHECK_FALSE(L.account_for_embedding);
  CHECK(L.first_stage_layers == 11);
  CHECK(L.last_stage_layers == 11);
  CHECK(virtual_stage_layer_counts(small_model(100), L) == split(11, 13, 6, 11));
  // 101 layers at pp 8: 13 x 6 = 78, rest 23: the first takes the odd layer, 12 and 11.
  L = pipeline(8);
  CHECK(choose_layer_split(small_model(101), L));
  CHECK(L.first_stage_layers == 12);
  CHECK(L.last_stage_layers == 11);
  // Dividing layers stay even; 96 layers over 64 stages cannot be split (ceil 2 x 62 > 96).
  L = pipeline(8);
  CHECK(choose_layer_split(small_model(96), L));
  CHECK_FALSE(L.uneven());
  L = pipeline(64);
  CHECK_FALSE(choose_layer_split(small_model(96), L));
  // Two stages, 7 layers (9 does not divide by 2): no middle, the first 4 and the last 3.
  L = pipeline(2);
  CHECK(choose_layer_split(small_model(7), L));
  CHECK(virtual_stage_layer_counts(small_model(7), L) == std::vector<int>{4, 3});
}

TEST_CASE("llm uneven: bad splits are usage errors naming the numbers", "[llm]") {
  TransformerSpec bloom = small_model(70);
  LlmLayout L = pipeline(12);
  L.first_stage_layers = 40;
  L.last_stage_layers = 40;
  expect_split_error(bloom, L, 12, "--first-stage-layers 40 + --last-stage-layers 40 = 80 exceed tiny's 70 layers");
  L.first_stage_layers = 5;
  L.last_stage_layers = 4;
  expect_split_error(bloom, L, 12,
                     "tiny's 70 layers less --first-stage-layers 5 + --last-stage-layers 4 = 9 leave 61, not divisible "
                     "over the 10 other stages of pp x vp = 12 x 1 = 12; valid: first + last = 10 (6 layers per middle "
                     "stage), 20 (5), 30 (4)");
  L.first_stage_layers = -2;
  expect_split_error(bloom, L, 12, "--first-stage-layers must be >= 1 (or left out for the even share), got -2");
  LlmLayout one = pipeline(1);
  one.first_stage_layers = 5;
  expect_split_error(bloom, one, 1, "--first-stage-layers 5 needs pipeline parallelism (--pp > 1)");
  one = pipeline(1);
  one.account_for_loss = true;
  expect_split_error(bloom, one, 1, "--account-for-loss needs pipeline parallelism (--pp > 1)");
  // Both ways at once.
  L = pipeline(12);
  L.first_stage_layers = 5;
  L.account_for_embedding = true;
  expect_split_error(bloom, L, 12, "are two ways to shape the first and last stages: give one of them");
  // Accounting that does not divide: 126 + 2 = 128 over 12; the first / last that would.
  TransformerSpec llama = small_model(126);
  L = pipeline(12);
  L.account_for_embedding = L.account_for_loss = true;
  expect_split_error(llama, L, 12,
                     "tiny has 126 layers + 2 (embedding, loss) = 128 pipeline slots, not divisible by pp x vp = 12 x 1 "
                     "= 12; valid: instead of the accounting, --first-stage-layers + --last-stage-layers = 6 (12 "
                     "layers per middle stage), 16 (11), 26 (10)");
  // One unit where both would divide: 30 + 1 = 31 over 8; 32 would.
  L = pipeline(8);
  L.account_for_embedding = true;
  expect_split_error(small_model(30), L, 8, "= 31 pipeline slots, not divisible by pp x vp = 8 x 1 = 8; valid: both units (32 slots); or");
  // Two stages (no middle one): 31 + 2 = 33 is odd; the first and last then hold all 31.
  L = pipeline(2);
  L.account_for_embedding = L.account_for_loss = true;
  expect_split_error(small_model(31), L, 2, "valid: one unit (32 slots); or instead of the accounting, --first-stage-layers + "
                                            "--last-stage-layers = 31 (no middle stage)");
  // Two stages, both first and last: they must hold every layer.
  L = pipeline(2);
  L.first_stage_layers = 30;
  L.last_stage_layers = 30;
  expect_split_error(bloom, L, 2, "both first and last, --first-stage-layers + --last-stage-layers must be tiny's 70 layers, not 60");
  // The middle stages need a layer each: 70 - 69 = 1 over 10.
  L = pipeline(12);
  L.first_stage_layers = 69;
  expect_split_error(bloom, L, 12, "leave 1, not enough for the 11 other stages");
}

TEST_CASE("llm uneven: scenario layouts take the four keys; a bad one names its pointer", "[llm]") {
  const std::string head = R"({"description": "d", "model": "llama3-405b", "topology": "dgx-h100", "nodes": [128], "sources": "s",
                               "layout": {"tp": 8, "pp": 16, )";
  LlmScenarioSpec s = parse_llm_scenario(head + R"("account_for_embedding": true, "account_for_loss": true},
      "variants": [{"name": "explicit", "layout": {"account_for_embedding": false, "account_for_loss": false,
                                                   "first_stage_layers": 7, "last_stage_layers": 7}}]})",
                                         "uneven.json");
  REQUIRE(s.variants.size() == 1);
  const LlmLayout& L = s.variants[0].layout;
  CHECK_FALSE(L.account_for_embedding);
  CHECK(L.first_stage_layers == 7);
  CHECK(L.last_stage_layers == 7);
  // 126 - 14 = 112 over 14 middle stages: 8 each, the split accounting gives.
  CHECK(virtual_stage_layer_counts(small_model(126), L) == split(7, 8, 14, 7));
  std::string message = test::input_error([&] { parse_llm_scenario(head + R"("first_stage_layers": 0}})", "bad.json"); });
  CHECK_THAT(message, Catch::Contains("/layout/first_stage_layers"));
}
