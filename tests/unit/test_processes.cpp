// Work in child processes (util/processes.hpp), LlmResult as bytes (llm/result_bytes.hpp) and
// NCCL searches shared by identical servers (collectives/nccl_graph.hpp): what `plan --jobs` and
// an LLM layout's thousands of communicators rely on.
#include <unistd.h>

#include <cstring>

#include "collectives/nccl_graph.hpp"
#include "helpers.hpp"
#include "llm/result_bytes.hpp"
#include "topology/faults.hpp"
#include "util/processes.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("processes: answers come back in the items' order, each from a child, whatever the jobs") {
  std::vector<std::size_t> items = {5, 3, 8, 1, 9, 2, 7};
  auto square = [](std::size_t i) { return std::to_string(i * i) + "@" + std::to_string(::getpid()); };
  const std::string here = "@" + std::to_string(::getpid());
  for (int jobs : {1, 3}) {
    INFO("jobs " << jobs);
    std::vector<std::string> answers = run_in_processes(items, jobs, square);
    REQUIRE(answers.size() == items.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
      const std::string value = std::to_string(items[k] * items[k]);
      CHECK(answers[k].rfind(value + "@", 0) == 0);
      CHECK(answers[k] != value + here);  // not this process
    }
  }
  CHECK(run_in_processes({}, 2, square).empty());
}

TEST_CASE("processes: a child's error is the serial run's first, with its type and message") {
  std::vector<std::size_t> items = {0, 1, 2, 3, 4, 5};
  auto work = [](std::size_t i) -> std::string {
    if (i == 4) throw UsageError("item four is wrong");
    if (i == 2) throw InputError("f.json", "/a/2", "item two is wrong");
    return "ok";
  };
  for (int jobs : {1, 2, 4}) {
    INFO("jobs " << jobs);
    try {
      run_in_processes(items, jobs, work);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.file() == "f.json");
      CHECK(e.pointer() == "/a/2");
      CHECK(e.message() == "item two is wrong");
    }
  }
  CHECK_THROWS_AS(run_in_processes({4, 5}, 2, work), UsageError);
  CHECK_THROWS_WITH(run_in_processes({4, 5}, 2, work), "item four is wrong");
}

TEST_CASE("processes: a queue takes answers in hand-out order and stops where take says") {
  // Item 0 sleeps 200 ms, so with 3 jobs items 1 and 2 finish first; take still sees 0, 1, 2.
  // take stops at the item whose answer is 12 (item 3 of 0..9): items after it are not taken.
  auto work = [](std::size_t i) {
    if (i == 0) ::usleep(200000);
    return std::to_string(i * 4);
  };
  for (int jobs : {1, 3}) {
    INFO("jobs " << jobs);
    std::size_t next = 0;
    std::vector<std::size_t> taken;
    run_queue([&]() -> std::optional<std::size_t> { return next < 10 ? std::optional(next++) : std::nullopt; }, jobs, work,
              [&](std::size_t item, std::string&& answer) {
                CHECK(answer == std::to_string(item * 4));
                taken.push_back(item);
                return answer != "12";
              });
    CHECK(taken == std::vector<std::size_t>{0, 1, 2, 3});
    // One job is a serial run: items 0-3 handed out, no more. With three, the free processes
    // went on while item 0 slept (answers not taken are thrown away).
    if (jobs == 1) CHECK(next == 4);
  }
  // What take learns changes what next gives: after item 5's answer, next gives nothing more.
  std::size_t next = 5;
  bool seen_five = false;
  std::vector<std::size_t> taken;
  run_queue([&]() -> std::optional<std::size_t> { return seen_five || next >= 10 ? std::nullopt : std::optional(next++); }, 1,
            work, [&](std::size_t item, std::string&&) {
              taken.push_back(item);
              seen_five = seen_five || item == 5;
              return true;
            });
  CHECK(taken == std::vector<std::size_t>{5});
}

TEST_CASE("processes: a child that dies without answering is an error naming its item") {
  auto work = [](std::size_t i) -> std::string {
    if (i == 7) ::_exit(3);
    return "ok";
  };
  // _exit(3): status 3 << 8, as waitpid reports it.
  CHECK_THROWS_WITH(run_in_processes({1, 7, 2}, 2, work),
                    "the child process for item 7 ended abnormally (status 768) without an answer");
}

TEST_CASE("result bytes: an LlmResult comes back bit for bit") {
  LlmResult r;
  r.gpus = 16384;
  r.nodes = 2048;
  r.iteration_s = 7.249123456789;
  r.tokens_per_s = 1.0 / 3;
  r.tflops_per_gpu = 370.9;
  r.mfu = 0.375;
  r.hfu = 0.376;
  r.compute_s = 3.258;
  r.bubble_s = 0.251;
  r.tp_s = 0.671;
  r.pp_s = 0.024;
  r.dp_s = 3.044;
  r.cp_s = 1e-300;
  r.ep_s = -0.0;
  r.optimizer_s = 5e-3;
  r.stage_forward_s = {0.1, 0.2, 0.30000000000000004};
  r.stage_backward_s = {0.4};
  r.memory = {47.3e9, 94.5e9, 0.3e9, 66.9e9};
  r.memory_capacity_B = 80e9;
  r.fits = true;
  r.comm_s = {{"dp_allgather", 1.092292}, {"tp_reducescatter", 6.66e-4}};
  r.algorithms = "allgather ring/simple x2048";
  r.floors = {2.705, 0.464, 2.051, 141e9, 1e15, 2e14};
  LlmResult back = llm_result_from_bytes(to_bytes(r));
  // Whole-object bytes compare every double exactly (-0.0 and 1e-300 included).
  CHECK(to_bytes(back) == to_bytes(r));
  CHECK(back.gpus == 16384);
  CHECK(back.nodes == 2048);
  CHECK(std::memcmp(&back.iteration_s, &r.iteration_s, sizeof(double)) == 0);
  CHECK(std::signbit(back.ep_s));
  CHECK(back.stage_forward_s == r.stage_forward_s);
  CHECK(back.stage_backward_s == r.stage_backward_s);
  CHECK(back.memory.total_B() == r.memory.total_B());
  CHECK(back.fits);
  CHECK(back.comm_s == r.comm_s);
  CHECK(back.algorithms == r.algorithms);
  CHECK(back.floors.network_B == 2e14);
  std::string bytes = to_bytes(r);
  CHECK_THROWS_WITH(llm_result_from_bytes(bytes.substr(0, bytes.size() - 1)), "llm_result_from_bytes: truncated result");
  CHECK_THROWS_WITH(llm_result_from_bytes(bytes + "x"), "llm_result_from_bytes: trailing bytes");
}

TEST_CASE("ring search cache: identical servers search once, a server with a failed NVLink apart, same rings") {
  TopologySpec spec = replicated_spec("dgx-a100", 4);
  Faults faults;
  faults.failed = {"n2.gpu3-n2.nvswitch1"};
  apply_faults(spec, faults);
  Topology t = Topology::build(spec, catalog());
  NcclRingGraphCache cache;
  for (int server = 0; server < 4; ++server) {
    std::vector<int> gpus;
    for (int g = 0; g < 8; ++g) gpus.push_back(8 * server + g);
    NcclRingGraph cached = nccl_ring_graph(t, gpus, nccl(), true, &cache);
    NcclRingGraph fresh = nccl_ring_graph(t, gpus, nccl(), true);
    INFO("server " << server);
    CHECK(cached.rings == fresh.rings);
    CHECK(cached.bw_intra_Bps == fresh.bw_intra_Bps);
    CHECK(cached.type_intra == fresh.type_intra);
  }
  // Servers 0, 1 and 3 are wired alike; server 2 lost one of gpu3's NVLinks.
  CHECK(cache.size() == 2);
  // Peer access off is another search (through the CPUs), and so another entry.
  nccl_ring_graph(t, {0, 1, 2, 3, 4, 5, 6, 7}, nccl(), false, &cache);
  CHECK(cache.size() == 3);
}
