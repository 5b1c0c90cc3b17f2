// topsim plan MODEL --gpus N --topology T: every layout that fits, simulated, ranked by throughput.
#include <algorithm>
#include <memory>
#include <optional>

#include "cli/train_common.hpp"
#include "llm/bounds.hpp"
#include "llm/plan.hpp"
#include "llm/result_bytes.hpp"
#include "util/error.hpp"
#include "util/processes.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

std::string describe(const TransformerSpec& m, const LlmLayout& L) {
  std::string text = "tp " + std::to_string(L.tp) + " pp " + std::to_string(L.pp);
  if (L.vp > 1) text += " vp " + std::to_string(L.vp);
  if (L.uneven()) text += " split " + describe_layer_split(m, L);
  if (L.cp > 1) text += " cp " + std::to_string(L.cp);
  if (L.ep > 1) text += " ep " + std::to_string(L.ep);
  text += " dp " + std::to_string(L.dp) + " mb " + std::to_string(L.micro_batch);
  if (L.recompute != Recompute::none) text += " recompute " + to_string(L.recompute);
  if (L.zero != 1) text += " zero " + std::to_string(L.zero);
  return text;
}

// Why the best beats the runner-up: the parts of the iteration where the runner-up spends more,
// largest first.
std::string why_best(const TransformerSpec& m, const std::pair<LlmLayout, LlmResult>& best,
                     const std::pair<LlmLayout, LlmResult>& next) {
  const LlmResult& a = best.second;
  const LlmResult& b = next.second;
  std::vector<std::pair<double, std::string>> parts = {
      {b.compute_s - a.compute_s, "compute"},      {b.bubble_s - a.bubble_s, "pipeline bubble"},
      {b.tp_s - a.tp_s, "exposed tensor-parallel"}, {b.pp_s - a.pp_s, "pipeline sends"},
      {b.dp_s - a.dp_s, "exposed data-parallel"},   {b.cp_s - a.cp_s, "exposed context-parallel"},
      {b.ep_s - a.ep_s, "expert all-to-all"},      {b.optimizer_s - a.optimizer_s, "optimizer step"}};
  std::sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> more;
  for (const auto& [s, name] : parts)
    if (s > 0.0005 * a.iteration_s && more.size() < 3) more.push_back(name + " +" + fixed(s * 1e3, 1) + " ms");
  std::string text = "# best: " + describe(m, best.first) + ", " + fixed(a.iteration_s, 3) + " s per iteration; runner-up " +
                     describe(m, next.first) + ", " + fixed(b.iteration_s, 3) + " s (" +
                     fixed(100 * (b.iteration_s / a.iteration_s - 1), 1) + "% slower)";
  // And where the runner-up gains back part of it.
  std::vector<std::string> less;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it)
    if (it->first < -0.0005 * a.iteration_s && less.size() < 2) less.push_back(it->second + " " + fixed(it->first * 1e3, 1) + " ms");
  return text + (more.empty() ? "" : ": it spends " + join(more, ", ")) + (less.empty() ? "" : "; it saves " + join(less, ", ")) +
         "\n";
}

}  // namespace

void add_plan_command(CLI::App& app, Context& context) {
  CLI::App* plan = app.add_subcommand("plan", "Search the parallel layouts of a transformer on N GPUs and rank those that fit");
  auto args = std::make_shared<TrainArgs>();
  auto top = std::make_shared<int>(5);
  add_train_target_options(*plan, *args);
  plan->get_option("--gpus")->required();
  plan->add_option("--top", *top, "Layouts to print, fastest first")->check(CLI::Range(1, 1000));
  auto jobs_wanted = std::make_shared<int>();
  add_jobs_option(*plan, *jobs_wanted);
  plan->add_option("--attention", args->attention, "Attention core: flash (fused) or unfused");
  add_layer_split_options(*plan, *args);
  plan->callback([args, top, jobs_wanted, &context]() {
    Format format = parse_format(args->format);
    const Workspace& ws = context.workspace();
    TransformerSpec model = find_transformer(ws, args->model);
    if (args->topology.empty()) throw UsageError("--topology is required: the server or cluster to plan on");
    args->layout.attention = parse_attention(args->attention);
    int gpus = args->gpus;
    const Topology& topology = training_topology(ws, args->topology, args->scale, args->gpu, gpus);
    const GpuModel& gpu = topology.gpu_model(0);
    PlanSpace space;
    space.gpus = gpus;
    space.gpus_per_server = std::min(gpus, topology.gpu_count() / (topology.node_of(topology.gpu_count() - 1) + 1));
    space.base = args->layout;
    // Every layout compares at one batch: one sequence per GPU unless asked (printed above the table).
    if (space.base.global_batch == 0) space.base.global_batch = gpus;
    space.memory_B = gpu.memory_B;
    space.optimizer_state_B = ws.catalog().optimizer(LlmOptions{}.optimizer, model.where).state_bytes_per_param;
    std::vector<PlanCandidate> candidates = plan_candidates(model, space);
    if (candidates.empty())
      throw UsageError("no layout of " + model.name + " divides over " + std::to_string(gpus) +
                       " GPUs (check --global-batch against micro-batch x dp, and the model's heads and layers)");
    std::vector<const PlanCandidate*> fitting;
    for (const PlanCandidate& c : candidates)
      if (c.fits) fitting.push_back(&c);
    std::string note;
    const double GiB = 1024.0 * 1024 * 1024;
    if (fitting.empty()) {
      auto leanest = std::min_element(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.memory.total_B() < b.memory.total_B();
      });
      note = "# none of the " + std::to_string(candidates.size()) + " layouts fits in " + fixed(gpu.memory_B / GiB, 1) +
             " GiB; the leanest needs " + fixed(leanest->memory.total_B() / GiB, 1) + " GiB (fits: false below)\n";
      fitting.push_back(&*leanest);
    }
    LlmOptions options;
    options.nccl = args->nccl;
    // Simulate in order of the floors (src/llm/bounds.hpp), lowest first, and stop once a floor is
    // above the (top + 1)-th fastest iteration found: no layout left can enter what is printed (the
    // top and the runner-up), since its iteration is at least its floor. The rows are those a full
    // search prints, ties in the candidates' order.
    struct Pending {
      const PlanCandidate* candidate;
      std::size_t order;
      double floor_s;
    };
    std::vector<Pending> pending;
    for (std::size_t i = 0; i < fitting.size(); ++i)
      pending.push_back({fitting[i], i, llm_bounds(topology, ws.catalog(), model, fitting[i]->layout, options).iteration_s()});
    std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) { return a.floor_s < b.floor_s; });
    const std::size_t needed = static_cast<std::size_t>(*top) + 1;
    std::vector<std::pair<std::size_t, std::pair<LlmLayout, LlmResult>>> done;
    std::vector<double> fastest;  // the `needed` lowest iteration times so far, ascending
    auto excluded = [&](const Pending& p) { return fastest.size() >= needed && p.floor_s > fastest.back(); };
    // --jobs layouts at a time, each in a process of its own (util/processes.hpp), as a queue: a
    // layout starts when a process is free, if the results taken so far do not exclude it, and
    // the results are taken in floor order with the same test. Results arriving early only make
    // the queue hand out layouts a serial search would skip, never skip one it would simulate,
    // and taking in order discards them: the layouts kept (and the count printed) are a serial
    // search's whatever --jobs is.
    const int jobs = std::max(1, *jobs_wanted);
    std::size_t next = 0;
    run_queue(
        [&]() -> std::optional<std::size_t> {
          if (next >= pending.size() || excluded(pending[next])) return std::nullopt;
          return next++;
        },
        jobs,
        [&](std::size_t k) {
          return to_bytes(simulate_iteration(topology, ws.catalog(), model, pending[k].candidate->layout, options));
        },
        [&](std::size_t k, std::string&& answer) {
          const Pending& p = pending[k];
          if (excluded(p)) return false;
          LlmResult r = llm_result_from_bytes(answer);
          fastest.insert(std::upper_bound(fastest.begin(), fastest.end(), r.iteration_s), r.iteration_s);
          if (fastest.size() > needed) fastest.pop_back();
          done.push_back({p.order, {p.candidate->layout, std::move(r)}});
          return true;
        });
    std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) {
      return a.second.second.iteration_s != b.second.second.iteration_s ? a.second.second.iteration_s < b.second.second.iteration_s
                                                                        : a.first < b.first;
    });
    const std::size_t simulated = done.size();
    std::vector<std::pair<LlmLayout, LlmResult>> rows;
    for (auto& entry : done) rows.push_back(std::move(entry.second));
    std::string why = rows.size() > 1 ? why_best(model, rows[0], rows[1]) : "";
    if (rows.size() > static_cast<std::size_t>(*top)) rows.resize(static_cast<std::size_t>(*top));
    Table table = training_table(model, rows, format);
    if (format != Format::table) {
      context.out = table.render(format);
      return;
    }
    const LlmLayout& L = rows.front().first;
    std::string counts = std::to_string(candidates.size()) + " layouts Megatron accepts, ";
    if (!note.empty()) {
      counts += "none fits in " + fixed(gpu.memory_B / GiB, 1) + " GiB";
    } else {
      counts += std::to_string(fitting.size()) + " fit in " + fixed(gpu.memory_B / GiB, 1) +
                " GiB (each with the least recomputation that fits), ";
      counts += simulated == fitting.size() ? std::string("all simulated")
                                            : std::to_string(simulated) + " simulated (the other " +
                                                  std::to_string(fitting.size() - simulated) +
                                                  " have floors above the " + std::to_string(needed) +
                                                  " fastest: docs/llm.md, \"Floors\")";
    }
    context.out = "# topsim plan: " + model.name + " on " + std::to_string(gpus) + " GPUs of " + topology.label() + ", " +
                  std::to_string(L.global_batch) + " sequences of " + std::to_string(L.seq_len) + " tokens, " + L.precision +
                  "\n# " + counts + "\n" + note + why + table.to_text();
  });
}

}  // namespace topsim
