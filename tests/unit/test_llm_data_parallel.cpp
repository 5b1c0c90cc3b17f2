// Megatron-Core's data parallelism on the pipeline's timeline (src/llm/data_parallel.hpp): bucket
// sizes, when each bucket's gradients are ready, one collective at a time per stream, and the
// parameter all-gathers ahead of the next forward. Every expected number is derived by hand.
#include <catch2/catch.hpp>

#include "llm/data_parallel.hpp"
#include "llm_helpers.hpp"

using namespace topsim;


TEST_CASE("data parallel: bucket size and split", "[llm][dp]") {
  // max(40M, 1M x dp_cp): 32 ranks keep the 40M floor, 64 ranks give 64M; a given size wins.
  CHECK(ddp_bucket_params(0, 40e6, 1e6, 32) == 40e6);
  CHECK(ddp_bucket_params(0, 40e6, 1e6, 64) == 64e6);
  CHECK(ddp_bucket_params(5e6, 40e6, 1e6, 64) == 5e6);
  // 100 parameters in buckets of at least 30: floor(100 / 30) = 3 buckets of 33.33.
  std::vector<double> b = split_buckets(100, 30);
  REQUIRE(b.size() == 3);
  CHECK(b[0] == Approx(100.0 / 3));
  CHECK(split_buckets(100, 0) == std::vector<double>{100});  // bucketing off
  CHECK(split_buckets(20, 30) == std::vector<double>{20});   // smaller than one bucket
  CHECK(split_buckets(0, 30).empty());
}

TEST_CASE("data parallel: readiness, streams and gathers by hand", "[llm][dp]") {
  // Head 10, layers 80, embedding 10 parameters; backward 9 s of which 1 s on the head.
  const ChunkParams c{10, 80, 10};
  CHECK(backward_ready_s(c, 5, 9, 1) == Approx(0.5));   // half the head: 1 x 5/10
  CHECK(backward_ready_s(c, 10, 9, 1) == Approx(1));
  CHECK(backward_ready_s(c, 50, 9, 1) == Approx(5));    // 1 + 8 x 40/80
  CHECK(backward_ready_s(c, 95, 9, 1) == Approx(9));    // the embedding: at the pass's end
  // Forward: the embedding first (no time), then 8 s over the layers.
  CHECK(forward_need_s(c, 0, 8) == 0);
  CHECK(forward_need_s(c, 10, 8) == 0);
  CHECK(forward_need_s(c, 50, 8) == Approx(4));        // 8 x 40/80
  CHECK(forward_need_s(c, 100, 8) == Approx(8));

  // [0, 2), [2, 4) (ready at 1, waits for the first), [10, 11): ends at 11; before 3 s it has
  // run 2 + 1 = 3 s.
  const std::vector<StreamOp> ops{{0, 2}, {1, 2}, {10, 1}};
  CHECK(stream_end_s(ops) == 11);
  CHECK(stream_overlap_s(ops, 3) == 3);
  CHECK(stream_overlap_s(ops, 100) == 5);
  CHECK(stream_end_s({}) == 0);

  // A at the start (needed at 0, 2 s): the forward waits 2 s. B dispatched at forward time 0,
  // i.e. at 2 after the wait, ends at 4, needed at 3 + 2: no more wait. C dispatched at B's
  // need, 3 + 2 = 5, ends at 7, needed at 4 + 2 = 6: 1 s more, 3 s in all.
  std::vector<GatherOp> g(3);
  g[0] = {0, 0, 2, true};
  g[1] = {0, 3, 2, false};
  g[2] = {3, 4, 2, false};
  CHECK(gather_wait_s(g) == Approx(3));
}

TEST_CASE("data parallel: one bucketed iteration, 2 pipeline ranks, 2 model chunks, 3 buckets", "[llm][dp]") {
  // 4 layers of hidden 64, 4 heads, ffn 256, vocab 1000, untied; tp 1, pp 2, vp 2: one layer per
  // virtual stage (v = chunk x pp + rank). A layer: attention 4 x 64^2 = 16384, FFN 2 x 64 x 256
  // = 32768, norms 2 x 64 = 128: 49280. The embedding 1000 x 64 = 64000 on v0; the head 64000
  // plus the final norm's 64 on v3.
  TransformerSpec m = test::make_model(4, 64, 4, 4, 256, 1000);
  LlmLayout L;
  L.pp = 2;
  L.vp = 2;
  L.dp = 2;  // two servers of one data-parallel pair each: only the layout's arithmetic matters here
  L.micro_batch = 1;
  L.global_batch = 8;  // 4 micro-batches per replica
  L.seq_len = 16;
  L.zero = 1;
  L.overlap_grad_reduce = L.overlap_param_gather = true;
  // Buckets of 35000: v0 (113280) splits into floor(113280 / 35000) = 3 buckets of 37760; the
  // other chunks and ranks are one bucket each (Megatron buckets only rank 0's first chunk).
  DpLayout dp = dp_layout(m, L, 35000);
  // Distinct sizes, largest first (none scaled: no threshold given).
  REQUIRE(dp.dense_sizes.size() == 3);
  CHECK(dp.dense_sizes[0] == Approx(113344));
  CHECK(dp.dense_sizes[1] == Approx(49280));
  CHECK(dp.dense_sizes[2] == Approx(37760));
  CHECK(dp.dense[0].buckets == std::vector<int>{2, 2, 2});
  CHECK(dp.dense[0].scale == std::vector<double>{1, 1, 1});
  CHECK(dp.dense[0].bucketed);
  CHECK(dp.dense[1].buckets == std::vector<int>{1});
  CHECK(dp.dense[2].buckets == std::vector<int>{1});
  CHECK(dp.dense[3].buckets == std::vector<int>{0});
  CHECK(dp.expert_sizes.empty());

  // The interleaved schedule with every pass 1 s (derived in test_llm.cpp, "interleaved"):
  // rank 0's backward passes end at 6, 8, 10, 12, 14, 16, 17, 18: v2's last (B2/3) is the 6th,
  // ending at 16; v0's last (B0/3) the 8th, 17-18. Rank 1's end at 5, 7, 9, 11, 13, 15, 16, 17:
  // v3's last (B3/3) the 6th, 14-15; v1's last (B1/3) the 8th, 16-17. F0/0 starts at 0, F2/0 at 2.
  PipelineResult p = run_pipeline(test::uniform_pipeline(2, 2, 4, 1, 1, 0));
  REQUIRE(p.end_s[0] == 18);
  REQUIRE(p.end_s[1] == 17);
  CHECK(p.last_backward_end_s[2] == 16);
  CHECK(p.last_backward_index[2] == 5);
  CHECK(p.last_backward_start_s[0] == 17);
  CHECK(p.first_forward_start_s[2] == 2);

  // Durations by size (37760, 49280, 113344 parameters): reduce-scatter 0.5, 0.6, 1.2 s;
  // all-gather 0.25, 0.3, 0.6 s. The head takes 0.2 s of v3's backward.
  DpDurations d;
  d.dense_reduce_s = {1.2, 0.6, 0.5};
  d.dense_gather_s = {0.6, 0.3, 0.25};
  const std::vector<double> pass(4, 1.0), head{0, 0, 0, 0.2};
  DpExposure e = dp_exposure(L, dp, d, p, pass, pass, head, 0);
  // Rank 0, align_grad_reduce: v2 launched 0 passes after its last (rank 0): at 16, 16-16.6.
  // v0's buckets as B0/3 (17-18) walks its 49280 layer parameters then the embedding: the first
  // at 17 + 37760/49280 = 17.766, the other two hold embedding parameters: at 18. The stream:
  // 17.766-18.266, 18.266-18.766, 18.766-19.266: 1.266 s after the rank's end at 18.
  CHECK(e.reduce_s[0] == Approx(37760.0 / 49280 + 0.5));
  // Rank 1: v3 launched 1 pass after its last, at the 7th backward's end, 16: 16-17.2; v1 one
  // past its 8th, beyond the list: after the cooldown, 17, waiting for the stream: 17.2-17.8.
  CHECK(e.reduce_s[1] == Approx(0.8));
  // Gathers, aligned (vp 2): chunks 0 and 1 dispatched at the start, in forward order: v0's three
  // buckets (needed at 0, 0 (still embedding) and (75520 - 64000)/49280 = 0.234 s into F0/0),
  // then v2's (needed at F2/0, 2 s). They end at 0.25, 0.5, 0.75, 1.05: the forward waits
  // 0.75 - 0.234 = 0.516 s.
  CHECK(e.gather_s == Approx(0.75 - 11520.0 / 49280));

  // Not aligned: each chunk's first bucket is dispatched by its own forward; within a chunk each
  // by the previous one's pre-hook. v0 as before (0.516 s), then v2's dispatched at its need,
  // 2 + 0.516, ending 0.3 s later: the forward waits 0.3 s more.
  L.align_param_gather = false;
  CHECK(dp_exposure(L, dp, d, p, pass, pass, head, 0).gather_s == Approx(0.75 - 11520.0 / 49280 + 0.3));

  // NCCL holding 10% of the SMs: rank 0's compute runs 0.1 x (what the stream ran before 18:
  // 0.6 + 0.234) longer; its stream still ends last, at 19.266.
  CHECK(dp_exposure(L, dp, d, p, pass, pass, head, 0.1).reduce_s[0] == Approx(37760.0 / 49280 + 0.5));
  // The gathers: the 0.516 s wait plus 0.1 x the 1.05 - 0.516 s that ran beside the forward.
  L.align_param_gather = true;
  CHECK(dp_exposure(L, dp, d, p, pass, pass, head, 0.1).gather_s ==
        Approx(0.75 - 11520.0 / 49280 + 0.1 * (1.05 - (0.75 - 11520.0 / 49280))));

  // Overlap off: one bucket per chunk (v0 is now 113280: a size of its own), all reduced after
  // the schedule: rank 0 reduces v2 then v0 after 18; all-gathers all before the forward.
  L.overlap_grad_reduce = L.overlap_param_gather = false;
  DpLayout off = dp_layout(m, L, 35000);
  REQUIRE(off.dense_sizes.size() == 3);  // 113344 (v3), 113280 (v0), 49280 (v1, v2)
  CHECK(off.dense_sizes[1] == Approx(113280));
  DpDurations d_off;
  d_off.dense_reduce_s = {1.2, 1.2, 0.6};
  d_off.dense_gather_s = {0.6, 0.6, 0.3};
  DpExposure e_off = dp_exposure(L, off, d_off, p, pass, pass, head, 0.1);
  CHECK(e_off.reduce_s[0] == Approx(0.6 + 1.2));
  CHECK(e_off.reduce_s[1] == Approx(1.2 + 0.6));
  CHECK(e_off.gather_s == Approx(0.6 + 0.3));  // v0 and v2, nothing to hide behind

  // Scaled from 60000 parameters: v0's 113280 runs as v3's 113344 (within 2x), scaled by
  // 113280 / 113344; 49280 is below half of it, a size of its own.
  DpLayout scaled = dp_layout(m, L, 35000, 60000);
  REQUIRE(scaled.dense_sizes.size() == 2);
  CHECK(scaled.dense[0].buckets == std::vector<int>{0});
  CHECK(scaled.dense[0].scale[0] == Approx(113280.0 / 113344));
  DpDurations d_scaled;
  d_scaled.dense_reduce_s = {1.2, 0.6};
  d_scaled.dense_gather_s = {0.6, 0.3};
  DpExposure e_scaled = dp_exposure(L, scaled, d_scaled, p, pass, pass, head, 0);
  CHECK(e_scaled.reduce_s[0] == Approx(0.6 + 1.2 * 113280.0 / 113344));
  CHECK(e_scaled.gather_s == Approx(0.6 * 113280.0 / 113344 + 0.3));
}
