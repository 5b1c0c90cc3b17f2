// train --megatron-args (docs/llm.md, "Megatron arguments"): the word splitter, the mapping of
// Megatron-LM's arguments into a transformer and a layout (derived by hand), every refusal, and
// models/megatron.json's defaults against LlmLayout's. Names carry mg_: unity builds share one
// anonymous namespace.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "llm/megatron_args.hpp"
#include "llm/transformer_math.hpp"
#include "util/error.hpp"

using namespace topsim;

namespace {

const MegatronArgumentTable& mg_table() { return test::catalog().megatron_arguments(); }

MegatronRun mg_run(const std::string& text, int gpus) {
  return read_megatron_run(split_megatron_words(text), mg_table(), gpus, "m");
}

std::string mg_error(const std::string& text, int gpus) {
  try {
    mg_run(text, gpus);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// A small dense model that every refusal below changes one thing of: 8 layers, h 1024, 8 heads.
const std::string mg_base =
    "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 --bf16 "
    "--micro-batch-size 1 ";

// The rejection `key`'s reason and citation, as the message ends.
std::string mg_rejection(const std::string& key) {
  const MegatronRejection& r = mg_table().rejection(key);
  return "Megatron-LM rejects this: " + r.reason + " (" + r.source + ")";
}

}  // namespace

TEST_CASE("megatron words: whitespace, continuations, quotes, comments and --name=value", "[megatron]") {
  CHECK(split_megatron_words("--a 1\t--b\n2") == std::vector<std::string>{"--a", "1", "--b", "2"});
  // backslash-newline separates like a space; '#' at a word's start comments out the line
  CHECK(split_megatron_words("--a 1 \\\n  --b 2 # --c 3\n--d") == std::vector<std::string>{"--a", "1", "--b", "2", "--d"});
  CHECK(split_megatron_words("# only a comment\n") == std::vector<std::string>{});
  // '#' inside a word is part of it
  CHECK(split_megatron_words("--x a#b") == std::vector<std::string>{"--x", "a#b"});
  CHECK(split_megatron_words("--moe-layer-freq \"([0]*3 + [1]*58)\" --p '/a b/c'") ==
        std::vector<std::string>{"--moe-layer-freq", "([0]*3 + [1]*58)", "--p", "/a b/c"});
  CHECK(split_megatron_words("--a=1 --b=\"x y\"") == std::vector<std::string>{"--a", "1", "--b", "x y"});
  CHECK(split_megatron_words("\"a\\\"b\" c\\ d") == std::vector<std::string>{"a\"b", "c d"});
  CHECK_THROWS_WITH(split_megatron_words("--a 'open"), "unclosed ' quote");
}

TEST_CASE("megatron: MLPerf GPT-3 175B's arguments as a transformer and a layout", "[megatron]") {
  // The golden's file: a launcher line, comments and continuations around the arguments.
  const MegatronRun r = read_megatron_run(
      split_megatron_words(read_text_file(test::test_data("megatron/gpt3-175b-mlperf.args"))), mg_table(), 256, "gpt3");
  const TransformerSpec& m = r.model;
  CHECK(m.layers == 96);
  CHECK(m.hidden == 12288);
  CHECK(m.heads == 96);
  CHECK(m.kv_heads == 96);         // no --group-query-attention: a KV head per head
  CHECK(m.head_dim == 128);        // 12288 / 96
  CHECK(m.ffn_hidden == 49152);    // no --ffn-hidden-size, no --swiglu: 4 x 12288
  CHECK(m.ffn == TransformerSpec::Ffn::gelu);
  CHECK(m.vocab == 50688);         // 50257 up to a multiple of 128 x tp 4 = 512: 99 x 512
  CHECK(m.tied_embeddings);        // no --untie-embeddings-and-output-weights
  CHECK_FALSE(m.moe.has_value());
  const LlmLayout& L = r.layout;
  CHECK(L.tp == 4);
  CHECK(L.pp == 8);
  CHECK(L.vp == 3);                // 96 layers / pp 8 = 12 per stage, / 4 per virtual stage
  CHECK(L.sp);
  CHECK(L.zero == 1);              // --use-distributed-optimizer
  CHECK(L.overlap_grad_reduce);
  CHECK(L.overlap_param_gather);
  CHECK(L.tp_comm_overlap);
  CHECK(L.align_param_gather);     // interleaved, no --no-align-param-gather
  CHECK(L.precision == "fp8");     // --fp8-format hybrid under --bf16
  CHECK(L.fp8_recipe == "delayed");
  // --bf16 with fp32 main gradients: Megatron reduces in fp32 (4 bytes), as llm_types() has it
  CHECK_FALSE(L.grad_reduce_in_fp32);
  CHECK_FALSE(L.grad_reduce_in_bf16);
  CHECK(llm_types(L).gradient_B == 4);
  CHECK(L.micro_batch == 1);
  CHECK(L.global_batch == 1536);
  CHECK(L.seq_len == 2048);
  CHECK(L.dp == 0);                // resolve_layout's: 256 / (4 x 8)
  CHECK(r.not_modelled.front() == "--fp8-amax-history-len");
  CHECK(r.not_modelled.size() == 24);  // the file's other arguments, each once
  REQUIRE(r.notes.size() == 1);
}

TEST_CASE("megatron: model defaults derived as Megatron derives them", "[megatron]") {
  // SwiGLU without --ffn-hidden-size: int(4 x 4096 x 2/3 / 64) x 64 = int(170.67) x 64 = 10880.
  MegatronRun r = mg_run("--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --group-query-attention "
                         "--num-query-groups 8 --swiglu --seq-length 4096 --max-position-embeddings 4096 --vocab-size 128256 --bf16 --micro-batch-size 1 "
                         "--untie-embeddings-and-output-weights --kv-channels 64",
                         8);
  CHECK(r.model.ffn_hidden == 10880);
  CHECK(r.model.ffn == TransformerSpec::Ffn::swiglu);
  CHECK(r.model.kv_heads == 8);
  CHECK(r.model.head_dim == 64);
  CHECK(r.model.vocab == 128256);  // a multiple of 128 x tp 1 already: no note
  CHECK(r.notes.empty());
  CHECK_FALSE(r.model.tied_embeddings);
  CHECK(r.layout.zero == 0);                 // no distributed optimizer
  CHECK(r.layout.global_batch == 8);         // micro-batch 1 x dp 8
  CHECK_FALSE(r.layout.align_param_gather);  // off without interleaving (arguments.py:1009-1013)
  // --num-query-groups without --group-query-attention is ignored: a KV head per head
  CHECK(mg_run(mg_base + "--num-query-groups 2", 1).model.kv_heads == 8);
  // --grad-reduce-in-bf16 (or bf16 main gradients) keeps a bf16 run's reduce in bf16 (2 bytes),
  // even beside --accumulate-allreduce-grads-in-fp32 (arguments.py:1213-1214)
  CHECK(mg_run(mg_base + "--grad-reduce-in-bf16", 1).layout.grad_reduce_in_bf16);
  CHECK(mg_run(mg_base + "--main-grads-dtype bf16", 1).layout.grad_reduce_in_bf16);
  const LlmLayout both = mg_run(mg_base + "--grad-reduce-in-bf16 --accumulate-allreduce-grads-in-fp32", 1).layout;
  CHECK(llm_types(both).gradient_B == 2);
  // fp16 runs reduce in fp16 (2 bytes) unless --accumulate-allreduce-grads-in-fp32 (4)
  const std::string fp16 = "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 "
                           "--fp16 --micro-batch-size 1 ";
  CHECK(llm_types(mg_run(fp16, 1).layout).gradient_B == 2);
  CHECK(llm_types(mg_run(fp16 + "--accumulate-allreduce-grads-in-fp32", 1).layout).gradient_B == 4);
}

TEST_CASE("megatron: MoE, the layer pattern and the uneven split", "[megatron]") {
  MegatronRun r = mg_run("--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --kv-channels 128 --ffn-hidden-size 18432 "
                         "--swiglu --seq-length 4096 --max-position-embeddings 4096 --vocab-size 129280 --bf16 --micro-batch-size 1 --num-experts 256 "
                         "--moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
                         "--moe-layer-freq '([0]*3+[1]*58)' --pipeline-model-parallel-size 16 "
                         "--decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 1 "
                         "--expert-model-parallel-size 64 --use-distributed-optimizer --global-batch-size 8192",
                         2048);
  REQUIRE(r.model.moe.has_value());
  CHECK(r.model.moe->experts == 256);
  CHECK(r.model.moe->top_k == 8);
  CHECK(r.model.moe->expert_ffn_hidden == 2048);
  CHECK(r.model.moe->shared_experts == 1);  // 2048 / 2048
  CHECK(r.model.moe->moe_layer.size() == 61);
  CHECK_FALSE(r.model.moe->moe_layer[2]);
  CHECK(r.model.moe->moe_layer[3]);
  CHECK(r.layout.first_stage_layers == 4);
  CHECK(r.layout.last_stage_layers == 1);
  CHECK(r.layout.ep == 64);
  CHECK(r.layout.vp == 1);
  // --moe-layer-freq N: layer i is MoE when i % N == 0; every layer by default (1)
  CHECK(moe_layer_pattern("2", 5) == std::vector<int>{1, 0, 1, 0, 1});
  CHECK(moe_layer_pattern("([1]*2+[0])*2", 6) == std::vector<int>{1, 1, 0, 1, 1, 0});
  CHECK(moe_layer_pattern("[0, 1,1]", 3) == std::vector<int>{0, 1, 1});
  CHECK_THROWS_WITH(moe_layer_pattern("[2]*3", 3), Catch::Contains("topsim reads an integer N or a list expression"));
  CHECK_THROWS_WITH(moe_layer_pattern("list(range(3))", 3), Catch::Contains("topsim reads an integer N or a list expression"));
  CHECK(mg_run(mg_base + "--num-experts 8", 1).model.moe->moe_layer == std::vector<bool>(8, true));
  // without --moe-ffn-hidden-size an expert is --ffn-hidden-size wide (4 x 1024)
  CHECK(mg_run(mg_base + "--num-experts 8", 1).model.moe->expert_ffn_hidden == 4096);
  CHECK_FALSE(mg_run(mg_base + "--num-experts 0", 1).model.moe.has_value());
}

TEST_CASE("megatron: combinations Megatron rejects, with its reason and citation", "[megatron]") {
  struct Case {
    std::string args;
    int gpus;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"--tensor-model-parallel-size 2 --tp-comm-overlap", 2, "tp_comm_overlap_needs_sequence_parallel"},
      // tp 1 turns sequence parallelism off before the check (arguments.py:1432-1442)
      {"--sequence-parallel --tp-comm-overlap", 1, "tp_comm_overlap_needs_sequence_parallel"},
      {"--overlap-grad-reduce --overlap-param-gather", 1, "overlap_param_gather_needs_distributed_optimizer"},
      {"--use-distributed-optimizer --overlap-param-gather", 1, "overlap_param_gather_needs_overlap_grad_reduce"},
      {"--fp16", 1, "bf16_and_fp16"},
      {"--accumulate-allreduce-grads-in-fp32 --main-grads-dtype bf16", 1, "accumulate_needs_fp32_main_grads"},
      {"--pipeline-model-parallel-size 3", 3, "layers_divisible_by_pipeline"},
      {"--pipeline-model-parallel-size 4 --account-for-loss-in-pipeline-split", 4, "layers_divisible_by_pipeline"},
      {"--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 3", 4, "layers_per_stage_divisible_by_virtual"},
      {"--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2 --no-overlap-p2p-communication", 2,
       "interleaved_needs_pipeline"},
      {"--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --num-virtual-stages-per-pipeline-rank 2", 4,
       "one_virtual_pipeline_setting"},
      {"--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 1 --decoder-first-pipeline-num-layers 1", 4,
       "uneven_needs_virtual_stages_per_rank"},
      {"--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 3 --account-for-loss-in-pipeline-split", 4,
       "uneven_with_accounting"},
      // 8 layers less 3 + 2 leave 3 for 2 middle stages; 8 less 4 + 4 leave none for 2
      {"--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 2", 4,
       "uneven_middle_divisible"},
      {"--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 4", 4,
       "uneven_middle_stages"},
      {"--pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 9", 2, "uneven_middle_stages"},
      {"--recompute-granularity selective --recompute-method uniform", 1, "selective_recompute_method"},
      {"--recompute-granularity selective --recompute-num-layers 1", 1, "selective_recompute_num_layers"},
      {"--recompute-granularity full --recompute-num-layers 1", 1, "full_recompute_needs_method"},
      {"--recompute-granularity full --recompute-method block", 1, "full_recompute_needs_num_layers"},
      {"--context-parallel-size 3", 3, "seq_length_context_parallel"},  // 2048 is not a multiple of 6
      {"--expert-model-parallel-size 2", 2, "expert_parallel_needs_experts"},
      {"--num-experts 6 --expert-model-parallel-size 4", 4, "experts_divisible_by_expert_parallel"},
      {"--num-experts 8 --moe-layer-freq [1]*7", 1, "moe_layer_freq_length"},
      {"--tensor-model-parallel-size 2", 3, "world_size_divisible"},
      {"--max-position-embeddings 1024", 1, "max_position_embeddings_covers_sequence"},
      {"--global-batch-size 6", 4, "global_batch_divisible"},  // 6 over 1 x dp 4
  };
  for (const Case& c : cases) {
    INFO(c.args);
    CHECK_THAT(mg_error(mg_base + c.args, c.gpus), Catch::EndsWith(mg_rejection(c.key)));
  }
  CHECK(mg_error("--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --vocab-size 32000 --bf16 "
                 "--micro-batch-size 1",
                 1) == "missing --max-position-embeddings: " + mg_rejection("required_arguments"));
  CHECK_THAT(mg_error("--num-layers 8 --hidden-size 1000 --num-attention-heads 3 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 --bf16 "
                      "--micro-batch-size 1",
                      1),
             Catch::EndsWith(mg_rejection("kv_channels_divide")));
  CHECK(mg_error(mg_base + "--tp-comm-overlap", 1) ==
        "--tp-comm-overlap without sequence parallelism: " + mg_rejection("tp_comm_overlap_needs_sequence_parallel"));
}

TEST_CASE("megatron: what topsim cannot read or model is refused by name", "[megatron]") {
  // An argument Megatron does not define: the closest one it does.
  CHECK_THAT(mg_error(mg_base + "--num-layer 8", 1), Catch::StartsWith("unknown Megatron argument '--num-layer' (did you mean '--num-layers'?)"));
  CHECK_THAT(mg_error(mg_base + "--grad-reduce-in-fp32", 1),
             Catch::StartsWith("unknown Megatron argument '--grad-reduce-in-fp32' (did you mean '--grad-reduce-in-bf16'?)"));
  // Values topsim needs where Megatron's default is None.
  CHECK_THAT(mg_error("--hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 --bf16 --micro-batch-size 1", 1),
             Catch::StartsWith("missing --num-layers: the transformer's layers (Megatron's default is None: "
                               "megatron/core/transformer/transformer_config.py:65@Megatron-LM@d98e8a64ddf3)"));
  CHECK_THAT(mg_error("--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --bf16 --micro-batch-size 1", 1),
             Catch::StartsWith("missing --vocab-size: topsim cannot read a tokenizer"));
  CHECK(mg_error(mg_base + "--num-layers x", 1) == "--num-layers 'x': expected a whole number from 0 to 1073741824");
  CHECK(mg_error(mg_base + "--sequence-parallel true", 1) == "'true' after --sequence-parallel, which takes no value");
  CHECK(mg_error(mg_base + "--seq-length 1 2", 1) == "'2' after --seq-length 1, which takes one value");
  CHECK(mg_error(mg_base + "--fp8-format e5m2", 1) == "--fp8-format 'e5m2': expected e4m3, hybrid");
  CHECK_THAT(mg_error(mg_base + "--fp8-format e4m3 --fp8-recipe custom", 1), Catch::StartsWith("--fp8-recipe custom: a quantization recipe"));
  CHECK(mg_run(mg_base + "--fp8-format e4m3 --fp8-recipe mxfp8", 1).layout.fp8_recipe == "mxfp8");
  CHECK_THAT(mg_error("--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 "
                      "--micro-batch-size 1",
                      1),
             Catch::StartsWith("neither --bf16 nor --fp16"));
  CHECK_THAT(mg_error(mg_base + "--recompute-granularity full --recompute-method block --recompute-num-layers 2", 1),
             Catch::Contains("recomputes part of the layers"));
  CHECK_THAT(mg_error(mg_base + "--num-experts 8 --moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 1536", 1),
             Catch::Contains("is not a whole number of experts"));
  // Not modelled: named, each once, with their values skipped however many there are.
  MegatronRun r = mg_run(mg_base + "--lr 1e-4 --data-path 1.0 a 0.5 b --lr 2e-4 --multi-latent-attention", 1);
  CHECK(r.not_modelled == std::vector<std::string>{"--lr", "--data-path", "--multi-latent-attention"});
  // Full recomputation of every layer: uniform 1, or block with the stage's 8 layers.
  CHECK(mg_run(mg_base + "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1", 1).layout.recompute ==
        Recompute::full);
  CHECK(mg_run(mg_base + "--recompute-granularity full --recompute-method block --recompute-num-layers 8", 1).layout.recompute ==
        Recompute::full);
  CHECK(mg_run(mg_base + "--recompute-granularity selective", 1).layout.recompute == Recompute::selective);
  CHECK(mg_run(mg_base + "--recompute-activations", 1).layout.recompute == Recompute::selective);
  // Arguments that change what runs in a way topsim does not model: refused with the reason.
  CHECK(mg_error(mg_base + "--pipeline-model-parallel-layout Et*3|t*3L", 1) ==
        "--pipeline-model-parallel-layout: " + mg_table().refused.at("--pipeline-model-parallel-layout").reason +
            " (megatron/training/arguments.py:3103@Megatron-LM@d98e8a64ddf3)");
  CHECK_THAT(mg_error(mg_base + "--use-torch-fsdp2", 1), Catch::StartsWith("--use-torch-fsdp2: FSDP from Megatron's arguments"));
}

TEST_CASE("megatron: LlmLayout's defaults are Megatron's (models/megatron.json)", "[megatron]") {
  const LlmLayout L;
  const MegatronArgumentTable& t = mg_table();
  auto flag_default = [&](const std::string& name) { return t.argument(name).default_value.value() == "true"; };
  CHECK(L.overlap_grad_reduce == flag_default("--overlap-grad-reduce"));
  CHECK(L.overlap_param_gather == flag_default("--overlap-param-gather"));
  CHECK(L.tp_comm_overlap == flag_default("--tp-comm-overlap"));
  CHECK(L.sp == flag_default("--sequence-parallel"));
  CHECK(L.grad_reduce_in_fp32 == flag_default("--accumulate-allreduce-grads-in-fp32"));
  CHECK(L.grad_reduce_in_bf16 == flag_default("--grad-reduce-in-bf16"));
  // --no-align-param-gather is store_false: its default (true) is align_param_gather's
  CHECK(L.align_param_gather == flag_default("--no-align-param-gather"));
  CHECK(L.fp8_recipe == t.argument("--fp8-recipe").default_value.value());
  CHECK_FALSE(t.argument("--ddp-bucket-size").default_value.has_value());  // None: LlmLayout's 0
  CHECK(L.ddp_bucket_params == 0);
  CHECK_FALSE(t.argument("--expert-tensor-parallel-size").default_value.has_value());  // None: tp, LlmLayout's 0
  CHECK(L.etp == 0);
  for (auto [name, value] : {std::pair{"--tensor-model-parallel-size", L.tp}, {"--pipeline-model-parallel-size", L.pp},
                             {"--context-parallel-size", L.cp}, {"--expert-model-parallel-size", L.ep}})
    CHECK(t.argument(name).default_value.value() == std::to_string(value));
  // Every accepted argument is one Megatron's parser defines, and the list is the generated one.
  CHECK(t.commit == "d98e8a64ddf3");
  CHECK(t.known.size() > 800);
  for (const auto& [name, argument] : t.accepted) CHECK(std::binary_search(t.known.begin(), t.known.end(), name));
}

TEST_CASE("megatron: models/megatron.json is read strictly", "[megatron]") {
  // One accepted argument, one rejection and two known names; `edit` breaks one thing.
  auto file = [](const std::string& source, const std::string& names, const std::string& default_value) {
    return R"({"megatron_arguments": {"commit": "d98e8a64ddf3",
      "accepted": {"--bf16": {"kind": "flag", "default": )" + default_value + R"(, "meaning": "m", "source": ")" + source + R"("}},
      "refused": {}, "rejections": {"r": {"reason": "why", "source": "a.py:1-2@Megatron-LM@d98e8a64ddf3"}},
      "known_arguments": {"repository": "r", "commit": "d98e8a64ddf3", "files": ["a.py"], "tool": "t", "names": )" +
           names + "}}}";
  };
  const std::string good_source = "megatron/core/model_parallel_config.py:180@Megatron-LM@d98e8a64ddf3";
  Catalog ok;
  add_catalog_text(ok, file(good_source, R"(["--bf16", "--fp16"])", "false"), "m.json");
  CHECK(ok.megatron_arguments().argument("--bf16").default_value == std::string("false"));
  CHECK(ok.megatron_arguments().rejection("r").reason == "why");
  CHECK(test::input_error([&] { ok.megatron_arguments().rejection("s"); }) == "m.json:/megatron_arguments/rejections: no rejection 's' (topsim's code names it)");
  Catalog c1;
  CHECK(test::input_error([&] { add_catalog_text(c1, file("a.py:1@Megatron-LM@0123456789ab", R"(["--bf16"])", "false"), "m.json"); }) ==
        "m.json:/megatron_arguments/accepted/--bf16/source: expected a citation path.py:LINE@Megatron-LM@d98e8a64ddf3 (the commit "
        "of \"commit\"), got 'a.py:1@Megatron-LM@0123456789ab'");
  Catalog c2;
  CHECK(test::input_error([&] { add_catalog_text(c2, file(good_source, R"(["--fp16"])", "false"), "m.json"); }) ==
        "m.json:/megatron_arguments/accepted/--bf16: '--bf16' is not an argument Megatron-LM defines (known_arguments/names)");
  Catalog c3;
  CHECK(test::input_error([&] { add_catalog_text(c3, file(good_source, R"(["--fp16", "--bf16"])", "false"), "m.json"); }) ==
        "m.json:/megatron_arguments/known_arguments/names: expected the names sorted (tools/megatron_arg_names.py)");
  Catalog c4;
  CHECK(test::input_error([&] { add_catalog_text(c4, file(good_source, R"(["--bf16"])", "null"), "m.json"); }) ==
        "m.json:/megatron_arguments/accepted/--bf16/default: --bf16 is a flag: its default is true or false");
  // A second file with the table.
  CHECK(test::input_error([&] { add_catalog_text(ok, file(good_source, R"(["--bf16"])", "false"), "n.json"); }) ==
        "n.json:/megatron_arguments: a second megatron_arguments (m.json has them already)");
}
