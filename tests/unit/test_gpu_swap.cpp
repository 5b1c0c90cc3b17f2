// The --gpu what-if (topology/gpu_swap.hpp): another GPU model on the same board, its NVLinks
// trimmed to the model's count; and, through the study layer, what that moves in a training
// iteration (only tensor-parallel time).
#include <catch2/catch.hpp>

#include <map>

#include "helpers.hpp"
#include "llm/layout.hpp"
#include "study/train.hpp"
#include "study/workspace.hpp"
#include "topology/gpu_swap.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

TopologySpec bundled_spec(const std::string& name) { return load_topology_spec(data_path("topologies/" + name + ".json")); }

// NVLinks from `gpu` to each other end, in file order ("nvswitch0" -> 2).
std::vector<std::pair<std::string, int>> nvlinks_of(const TopologySpec& spec, const std::string& gpu) {
  std::vector<std::pair<std::string, int>> out;
  for (const LinkSpec& l : spec.links)
    if (l.model.rfind("nvlink", 0) == 0 && (l.a == gpu || l.b == gpu)) out.emplace_back(l.a == gpu ? l.b : l.a, l.count);
  return out;
}

std::string swap_error(TopologySpec spec, const std::string& gpu) {
  try {
    swap_gpu(spec, gpu, catalog());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("gpu swap: water-filling spreads the kept links evenly, in file order, each connection capped") {
  // 8 over six 2-link connections: a round of 1 each (6 placed), then the first two get a second.
  CHECK(water_fill({2, 2, 2, 2, 2, 2}, 8) == std::vector<int>{2, 2, 1, 1, 1, 1});
  // 8 over DGX H100's 5,4,4,5: two rounds of 1 each.
  CHECK(water_fill({5, 4, 4, 5}, 8) == std::vector<int>{2, 2, 2, 2});
  // Fewer links than connections: the last connections get none.
  CHECK(water_fill({2, 2, 2, 2, 2, 2}, 4) == std::vector<int>{1, 1, 1, 1, 0, 0});
  // A cap reached early: 5 over {1, 3}: round 1 gives 1,1; then only the second has room: 1,3.
  CHECK(water_fill({1, 3}, 5) == std::vector<int>{1, 3});
  // More to keep than wired: everything stays.
  CHECK(water_fill({2, 2}, 20) == std::vector<int>{2, 2});
}

TEST_CASE("gpu swap: A800 on DGX A100 keeps 8 of 12 NVLink3 ports per GPU, 2,2,1,1,1,1, as HGX A800 wires them") {
  TopologySpec spec = bundled_spec("dgx-a100");
  GpuSwap swap = swap_gpu(spec, "a800", catalog());
  // topologies/hgx-a800.json (the bundled HGX A800 board) wires each GPU 2,2,1,1,1,1 to
  // nvswitch0..5: the trimmed DGX A100 must be exactly that board's NVLink wiring.
  const TopologySpec a800_board = bundled_spec("hgx-a800");
  for (int g = 0; g < 8; ++g) {
    const std::string gpu = "gpu" + std::to_string(g);
    const std::vector<std::pair<std::string, int>> expected = {{"nvswitch0", 2}, {"nvswitch1", 2}, {"nvswitch2", 1},
                                                               {"nvswitch3", 1}, {"nvswitch4", 1}, {"nvswitch5", 1}};
    CHECK(nvlinks_of(spec, gpu) == expected);
    CHECK(nvlinks_of(spec, gpu) == nvlinks_of(a800_board, gpu));
  }
  for (const DeviceSpec& d : spec.devices)
    if (d.type == DeviceType::gpu) CHECK(d.model == "a800");
  CHECK(swap.board_nvlinks == 12);
  CHECK(swap.kept_nvlinks == 8);
  // 8 links x 25 GB/s per direction x 2 directions = 400 GB/s; the board's 12 give 600 GB/s.
  CHECK(swap.kept_Bps == Approx(400e9));
  CHECK(swap.board_Bps == Approx(600e9));
  CHECK(swap.text() == "a800 (8 of 12 NVLinks)");
  REQUIRE(swap.notes.size() == 2);
  CHECK(swap.notes[0] ==
        "--gpu a800: each GPU keeps 8 of the board's 12 nvlink3 ports (400 GB/s of 600 GB/s); gpu0 drops 1 of 2 to each "
        "of nvswitch2, nvswitch3, nvswitch4, nvswitch5, every GPU alike");
  // What else changes, from models/gpus.json: dgx-a100's a100 has 40 GiB at 1555 GB/s, a800 80 GiB
  // at 2039 GB/s; SMs (108), dense fp16 tensor (312 TFLOP/s) and board power (400 W) are alike.
  CHECK(swap.notes[1] == "--gpu a800 replaces a100: memory 40.0 -> 80.0 GiB, memory bandwidth 1555 -> 2039 GB/s");
  // The board is otherwise untouched: 48 GPU-switch links stay 48 (none fell to 0 lanes).
  CHECK(spec.links.size() == bundled_spec("dgx-a100").links.size());
  Topology built = Topology::build(spec, catalog());
  CHECK(built.gpu_count() == 8);
}

TEST_CASE("gpu swap: H800 on DGX H100 keeps 8 of 18 NVLink4 ports, 2 to each of the 4 NVSwitches, as HGX H800") {
  TopologySpec spec = bundled_spec("dgx-h100");
  GpuSwap swap = swap_gpu(spec, "h800", catalog());
  const TopologySpec h800_board = bundled_spec("hgx-h800");
  for (int g = 0; g < 8; ++g) {
    const std::string gpu = "gpu" + std::to_string(g);
    const std::vector<std::pair<std::string, int>> expected = {
        {"nvswitch0", 2}, {"nvswitch1", 2}, {"nvswitch2", 2}, {"nvswitch3", 2}};
    CHECK(nvlinks_of(spec, gpu) == expected);
    CHECK(nvlinks_of(spec, gpu) == nvlinks_of(h800_board, gpu));
  }
  CHECK(swap.text() == "h800 (8 of 18 NVLinks)");
  // 8 x 25 GB/s x 2 = 400 GB/s of 18 x 25 x 2 = 900 GB/s.
  CHECK(swap.kept_Bps == Approx(400e9));
  CHECK(swap.board_Bps == Approx(900e9));
  CHECK_NOTHROW(Topology::build(spec, catalog()));
}

TEST_CASE("gpu swap: a GPU-GPU link keeps the smaller of its two ends' shares") {
  // Three a100 in a triangle of nvlink3 links: gpu0-gpu1 x3, gpu0-gpu2 x3, gpu1-gpu2 x1, swapped
  // to a30 (4 NVLink3 links). Shares: gpu0 spreads 4 over {3, 3} -> {2, 2}; gpu1 over {3, 1} ->
  // round 1 {1, 1}, then only the first has room: {3, 1}; gpu2 likewise {3, 1}. Links keep
  // min of both ends: gpu0-gpu1 min(2, 3) = 2, gpu0-gpu2 min(2, 3) = 2, gpu1-gpu2 min(1, 1) = 1.
  TopologySpec spec;
  spec.name = "triangle";
  for (int g = 0; g < 3; ++g) {
    DeviceSpec d;
    d.id = "gpu" + std::to_string(g);
    d.model = "a100";
    spec.devices.push_back(d);
  }
  spec.links = {link_spec("gpu0", "gpu1", "nvlink3", 3), link_spec("gpu0", "gpu2", "nvlink3", 3),
                link_spec("gpu1", "gpu2", "nvlink3", 1)};
  GpuSwap swap = swap_gpu(spec, "a30", catalog());
  REQUIRE(spec.links.size() == 3);
  CHECK(spec.links[0].count == 2);
  CHECK(spec.links[1].count == 2);
  CHECK(spec.links[2].count == 1);
  // gpu0 keeps 4; gpu1 and gpu2 keep 2 + 1 = 3 each (their partner gpu0 had less to give).
  CHECK(swap.kept_nvlinks == 4);
  CHECK(swap.board_nvlinks == 6);
  REQUIRE(swap.notes.size() == 2);
  CHECK(swap.notes[0] ==
        "--gpu a30: each GPU keeps 4 of the board's 6 nvlink3 ports (200 GB/s of 300 GB/s); gpu0 drops 1 of 3 to each of "
        "gpu1, gpu2; the other GPUs keep the smaller share of each GPU-GPU link");
  // a100 -> a30 (models/gpus.json): 40 -> 24 GiB, 1555 -> 933 GB/s, 108 -> 56 SMs, dense fp16
  // tensor 312 -> 165 TFLOP/s, 400 -> 165 W (neither has fp8 tensor math).
  CHECK(swap.notes[1] == "--gpu a30 replaces a100: memory 40.0 -> 24.0 GiB, memory bandwidth 1555 -> 933 GB/s, SMs "
                         "108 -> 56, fp16_tensor dense 312 -> 165 TFLOP/s, board power 400 -> 165 W");
}

TEST_CASE("gpu swap: a GPU with more NVLinks than the board wires keeps the board's wiring, with a note") {
  TopologySpec spec = bundled_spec("hgx-a800");
  const TopologySpec board = spec;
  GpuSwap swap = swap_gpu(spec, "a100-80gb", catalog());
  CHECK(nvlinks_of(spec, "gpu0") == nvlinks_of(board, "gpu0"));
  CHECK(swap.text() == "a100-80gb (8 NVLinks wired of its 12)");
  REQUIRE(swap.notes.size() == 2);
  CHECK(swap.notes[0] ==
        "--gpu a100-80gb: the board wires 8 of a100-80gb's 12 nvlink3 ports (400 GB/s of 600 GB/s); the other 4 go unused");
  // a800 and a100-80gb differ in NVLinks only (models/gpus.json), and the note says so.
  CHECK(swap.notes[1] == "--gpu a100-80gb replaces a800: the same memory, memory bandwidth, SMs, tensor math and board "
                         "power; only its NVLinks may differ");
}

TEST_CASE("gpu swap: a30 on DGX A100 keeps 4 links, 1 to each of nvswitch0..3; nvswitch4 and 5 are left idle and removed") {
  TopologySpec spec = bundled_spec("dgx-a100");
  const std::size_t devices = spec.devices.size(), links = spec.links.size();
  GpuSwap swap = swap_gpu(spec, "a30", catalog());
  // water_fill({2,2,2,2,2,2}, 4) = {1,1,1,1,0,0}: the two 0-lane links of each of 8 GPUs go,
  // 16 of the board's links, and with them the two switches they reached.
  const std::vector<std::pair<std::string, int>> expected = {{"nvswitch0", 1}, {"nvswitch1", 1}, {"nvswitch2", 1}, {"nvswitch3", 1}};
  CHECK(nvlinks_of(spec, "gpu5") == expected);
  CHECK(spec.links.size() == links - 16);
  CHECK(spec.devices.size() == devices - 2);
  REQUIRE(swap.notes.size() == 3);
  CHECK(swap.notes[1] == "--gpu a30: nvswitch4, nvswitch5 are left without a GPU and removed");
  CHECK(swap.text() == "a30 (4 of 12 NVLinks)");
  CHECK_NOTHROW(Topology::build(spec, catalog()));
}

TEST_CASE("gpu swap: a board without NVLink takes any GPU as a PCIe card, links unchanged, only the GPU's own figures noted") {
  TopologySpec spec = bundled_spec("pcie-8x-rtx4090");
  const std::size_t links = spec.links.size();
  GpuSwap swap = swap_gpu(spec, "h100", catalog());
  CHECK(spec.links.size() == links);
  CHECK(swap.board_nvlinks == 0);
  // models/gpus.json: rtx4090 24 GiB at 1008 GB/s, 128 SMs, 165/330 TFLOP/s dense fp16/fp8
  // tensor, 450 W; h100 80 GiB at 3350 GB/s, 132 SMs, 990/1979 TFLOP/s, 700 W.
  REQUIRE(swap.notes.size() == 1);
  CHECK(swap.notes[0] == "--gpu h100 replaces rtx4090: memory 24.0 -> 80.0 GiB, memory bandwidth 1008 -> 3350 GB/s, SMs "
                         "128 -> 132, fp16_tensor dense 165 -> 990 TFLOP/s, fp8_tensor dense 330 -> 1979 TFLOP/s, board "
                         "power 450 -> 700 W");
  CHECK(swap.text() == "h100");
  CHECK_NOTHROW(Topology::build(spec, catalog()));
}

TEST_CASE("gpu swap: refused when the board's NVLinks are another generation, when the GPU has none, or unknown") {
  CHECK(swap_error(bundled_spec("dgx-h100"), "a800") ==
        "--gpu a800 speaks nvlink3; dgx-h100's NVSwitches speak nvlink4; GPUs that fit this board: gh200, gh200-144gb, "
        "h100, h100-pcie, h20, h200, h800");
  CHECK(swap_error(bundled_spec("dgx1-v100"), "a100") ==
        "--gpu a100 speaks nvlink3; dgx1-v100's GPUs are joined by nvlink2; GPUs that fit this board: v100, v100-sxm3");
  // A PCIe card has no place on an SXM board: its NVSwitches would be left without a GPU end.
  CHECK(swap_error(bundled_spec("dgx-a100"), "l40s") ==
        "--gpu l40s has no NVLink; dgx-a100's NVSwitches speak nvlink3; GPUs that fit this board: a100, a100-80gb, "
        "a100-pcie, a100-pcie-80gb, a30, a800");
  CHECK(swap_error(bundled_spec("dgx-a100"), "a801").rfind("--gpu: unknown GPU model 'a801' (did you mean", 0) == 0);
  // Nothing is half-changed by a refusal: the spec is the caller's copy, untouched until the checks pass.
  TopologySpec spec = bundled_spec("dgx-h100");
  CHECK_THROWS_AS(swap_gpu(spec, "a800", catalog()), UsageError);
  CHECK(spec.devices.front().model == "h100");
}

TEST_CASE("gpu swap: a100-80gb against a800 on dgx-a100 moves only tensor-parallel time, by about 600/400") {
  // models/gpus.json: a800 and a100-80gb have the same math (312 TFLOPS dense bf16), memory
  // (80 GiB, 2039 GB/s) and SMs (108); they differ in NVLinks only (12 against 8 nvlink3, 25 GB/s
  // per link per direction: 600 against 400 GB/s). Llama 2 70B on 512 GPUs (64 servers), tp 8
  // inside a server with sequence parallelism, pp 2, dp 32.
  Workspace ws(TOPSIM_DATA_DIR);
  const TransformerSpec model = find_transformer(ws, "llama2-70b");
  auto run = [&](const std::string& gpu, bool overlap) {
    int gpus = 512;
    const Topology& t = training_topology(ws, "dgx-a100", {}, gpu, gpus);
    LlmLayout asked;
    asked.tp = 8;
    asked.pp = 2;
    asked.sp = true;
    asked.global_batch = 512;
    asked.overlap_grad_reduce = overlap;
    asked.overlap_param_gather = overlap;
    return simulate_iteration(t, ws.catalog(), model, resolve_layout(model, asked, gpus), {});
  };
  // Without overlap every data-parallel collective is exposed, so dp_s is their whole time.
  const LlmResult a100 = run("a100-80gb", false);
  const LlmResult a800 = run("a800", false);
  // Compute: the same kernels on the same math and memory, exactly.
  CHECK(a800.compute_s == a100.compute_s);
  // Data parallelism: each dp group is one GPU per server, over PCIe and the same 8 HDR NICs;
  // NVLink carries none of it, so its time is the same to 1e-9 s.
  CHECK(a800.dp_s == Approx(a100.dp_s).margin(1e-9));
  for (const char* name : {"dp_allgather", "dp_reducescatter"}) CHECK(a800.comm_s.at(name) == Approx(a100.comm_s.at(name)).margin(1e-9));
  CHECK(a800.pp_s == Approx(a100.pp_s).margin(1e-9));
  // Tensor parallelism: a reduce-scatter (and an all-gather) of one micro-batch's activations,
  // 1 x 4096 tokens x 8192 hidden x 2 B = 64 MiB = 67,108,864 B, over 8 GPUs behind NVSwitches.
  // A ring moves 7/8 of it through each GPU's NVLinks: 58,720,256 B. At 25 GB/s x 0.9136
  // (models/links.json nvlink3 efficiency) per link: 12 links 274.08 GB/s -> 0.2143 ms floor;
  // 8 links 182.72 GB/s -> 0.3214 ms floor. Bandwidth alone gives 12/8 = 1.5; NCCL's fixed
  // per-step latency (the same on both boards) pulls the ratio below 1.5. At 64 MiB the
  // transfer is over 80% of the time, so the ratio lies in [1.4, 1.5].
  for (const char* name : {"tp_reducescatter", "tp_allgather"}) {
    const double ratio = a800.comm_s.at(name) / a100.comm_s.at(name);
    CHECK(ratio >= 1.4);
    CHECK(ratio <= 1.5);
    CHECK(a100.comm_s.at(name) >= 0.2143e-3);
    CHECK(a800.comm_s.at(name) >= 0.3214e-3);
  }
  const double tp_ratio = a800.tp_s / a100.tp_s;
  CHECK(tp_ratio >= 1.4);
  CHECK(tp_ratio <= 1.5);
  // With overlap (the default) the collectives are the same, but more of them hides behind the
  // A800's longer backward pass: exposed dp time can only fall, never rise.
  const LlmResult a100_overlap = run("a100-80gb", true);
  const LlmResult a800_overlap = run("a800", true);
  CHECK(a800_overlap.compute_s == a100_overlap.compute_s);
  for (const char* name : {"dp_allgather", "dp_reducescatter"})
    CHECK(a800_overlap.comm_s.at(name) == Approx(a100_overlap.comm_s.at(name)).margin(1e-9));
  CHECK(a800_overlap.dp_s <= a100_overlap.dp_s);
}
