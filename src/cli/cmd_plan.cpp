// topsim plan MODEL --gpus N --topology T: every layout that fits, simulated, ranked by throughput.
#include <algorithm>
#include <memory>
#include <optional>

#include "cli/train_common.hpp"
#include "llm/bounds.hpp"
#include "llm/domains.hpp"
#include "llm/plan.hpp"
#include "llm/result_bytes.hpp"
#include "util/error.hpp"
#include "util/processes.hpp"
#include "util/progress.hpp"
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

// Layouts simulated in order of their floors (src/llm/bounds.hpp), lowest first, stopping once a
// floor is above the `needed`-th fastest iteration found: no layout left can enter what is
// printed (the top and the runner-up), since its iteration is at least its floor. The rows are
// those a full search ranks first, fastest first, ties in the candidates' order.
struct Ranked {
  std::vector<std::pair<LlmLayout, LlmResult>> rows;
  std::size_t simulated = 0;
};

// `progress` counts layouts over both searches (those that fit, then those that do not):
// `before` were taken by an earlier search, `total` is both searches' candidates.
struct SearchProgress {
  Progress& progress;
  std::size_t before;
  std::size_t total;
};

Ranked rank_layouts(const std::vector<const PlanCandidate*>& candidates, std::size_t needed, int jobs,
                    const Topology& topology, const Catalog& catalog, const TransformerSpec& model,
                    const LlmOptions& options, const SearchProgress& shown) {
  struct Pending {
    const PlanCandidate* candidate;
    std::size_t order;
    double floor_s;
  };
  std::vector<Pending> pending;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    pending.push_back({candidates[i], i, llm_bounds(topology, catalog, model, candidates[i]->layout, options).iteration_s()});
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) { return a.floor_s < b.floor_s; });
  std::vector<std::pair<std::size_t, std::pair<LlmLayout, LlmResult>>> done;
  std::vector<double> fastest;  // the `needed` lowest iteration times so far, ascending
  auto excluded = [&](const Pending& p) { return needed == 0 || (fastest.size() >= needed && p.floor_s > fastest.back()); };
  // --jobs layouts at a time, each in a process of its own (util/processes.hpp), as a queue: a
  // layout starts when a process is free, if the results taken so far do not exclude it, and
  // the results are taken in floor order with the same test. Results arriving early only make
  // the queue hand out layouts a serial search would skip, never skip one it would simulate,
  // and taking in order discards them: the layouts kept (and the count printed) are a serial
  // search's whatever --jobs is.
  std::size_t next = 0;
  std::string latest;  // the layout handed out last, what the progress line shows as running
  std::size_t taken = 0;
  run_queue(
      [&]() -> std::optional<std::size_t> {
        if (next >= pending.size() || excluded(pending[next])) return std::nullopt;
        latest = describe(model, pending[next].candidate->layout);
        return next++;
      },
      jobs,
      [&](std::size_t k) {
        return to_bytes(simulate_iteration(topology, catalog, model, pending[k].candidate->layout, options));
      },
      [&](std::size_t k, std::string&& answer) {
        const Pending& p = pending[k];
        shown.progress.update(shown.before + ++taken, shown.total, latest);
        if (excluded(p)) return false;
        LlmResult r = llm_result_from_bytes(answer);
        fastest.insert(std::upper_bound(fastest.begin(), fastest.end(), r.iteration_s), r.iteration_s);
        if (fastest.size() > needed) fastest.pop_back();
        done.push_back({p.order, {p.candidate->layout, std::move(r)}});
        return true;
      },
      &shown.progress);
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) {
    return a.second.second.iteration_s != b.second.second.iteration_s ? a.second.second.iteration_s < b.second.second.iteration_s
                                                                      : a.first < b.first;
  });
  Ranked out;
  out.simulated = done.size();
  for (auto& entry : done) out.rows.push_back(std::move(entry.second));
  return out;
}

// The plan's candidates, sorted: those whose tensor, context or expert groups span NVLink
// domains are left out unless the layout allows it (counted in `spanning`; when allowed, in
// `crossing`); the rest split into those that fit and those that do not.
struct Sorted {
  std::vector<const PlanCandidate*> fitting, unfit;
  std::size_t spanning = 0, crossing = 0;
};

Sorted sort_candidates(const std::vector<PlanCandidate>& candidates, const NvlinkDomains& domains, bool allow_cross) {
  Sorted out;
  const DimOrder order = LlmOptions{}.order;  // plan places ranks as Megatron does
  for (const PlanCandidate& c : candidates) {
    if (first_spanning(group_spans(c.layout, order, domains)) != nullptr) {
      ++(allow_cross ? out.crossing : out.spanning);
      if (!allow_cross) continue;
    }
    (c.fits ? out.fitting : out.unfit).push_back(&c);
  }
  return out;
}

// The header's count of the search: layouts accepted, skipped for groups across NVLink domains
// (`domain_gpus` each), fitting, simulated; with --include-unfit, those that do not fit.
std::string search_counts(std::size_t accepted, const Sorted& sorted, const Ranked& fit, const Ranked& unfit,
                          bool include_unfit, const GpuModel& gpu, std::size_t needed, int domain_gpus) {
  const double GiB = 1024.0 * 1024 * 1024;
  std::string counts = "# " + std::to_string(accepted) + " layouts Megatron accepts, ";
  if (sorted.spanning > 0)
    counts += std::to_string(sorted.spanning) + " skipped (a tensor, context or expert group across NVLink domains of " +
              std::to_string(domain_gpus) + " GPUs: --allow-cross-server-tp), ";
  if (sorted.crossing > 0)
    counts += std::to_string(sorted.crossing) + " with a tensor, context or expert group across NVLink domains of " +
              std::to_string(domain_gpus) + " GPUs (--allow-cross-server-tp), ";
  const std::size_t searched = sorted.fitting.size();
  if (searched == 0) {
    counts += "none fits in " + fixed(gpu.memory_B / GiB, 1) + " GiB";
  } else {
    counts += std::to_string(searched) + " fit in " + fixed(gpu.memory_B / GiB, 1) +
              " GiB (each with the least recomputation that fits), ";
    counts += fit.simulated == searched ? std::string("all simulated")
                                        : std::to_string(fit.simulated) + " simulated (the other " +
                                              std::to_string(searched - fit.simulated) + " have floors above the " +
                                              std::to_string(needed) + " fastest: docs/llm.md, \"Floors\")";
  }
  counts += "\n";
  if (include_unfit)
    counts += "# --include-unfit: " + std::to_string(sorted.unfit.size()) + " layouts do not fit, " +
              std::to_string(unfit.simulated) + " simulated; they rank after every layout that fits (fits false, unfit_reason)\n";
  return counts;
}

// The UsageError when no layout fits: the leanest layout and what it needs.
[[noreturn]] void none_fits(const TransformerSpec& model, const std::vector<const PlanCandidate*>& unfit, int gpus,
                            const std::string& topology, const GpuModel& gpu) {
  const double GiB = 1024.0 * 1024 * 1024;
  const PlanCandidate* leanest = *std::min_element(unfit.begin(), unfit.end(), [](const auto* a, const auto* b) {
    return a->memory.total_B() < b->memory.total_B();
  });
  throw UsageError("no layout of " + model.name + " on " + std::to_string(gpus) + " GPUs of " + topology + " fits in " +
                   fixed(gpu.memory_B / GiB, 1) + " GiB per GPU (" + gpu.name + "): the leanest of the " +
                   std::to_string(unfit.size()) + " (" + describe(model, leanest->layout) + ") needs " +
                   fixed(leanest->memory.total_B() / GiB, 1) +
                   " GiB; give more --gpus, a smaller --global-batch or --seq, or --include-unfit to rank them anyway");
}

}  // namespace

void add_plan_command(CLI::App& app, Context& context) {
  CLI::App* plan = app.add_subcommand("plan", "Search the parallel layouts of a transformer on N GPUs and rank those that fit");
  auto args = std::make_shared<TrainArgs>();
  auto top = std::make_shared<int>(5);
  auto include_unfit = std::make_shared<bool>(false);
  add_train_target_options(*plan, *args);
  plan->get_option("--gpus")->required();
  plan->add_option("--top", *top, "Layouts to print, fastest first")->check(CLI::Range(1, 1000));
  auto jobs_wanted = std::make_shared<int>();
  add_jobs_option(*plan, *jobs_wanted);
  auto quiet = std::make_shared<bool>(false);
  add_quiet_option(*plan, *quiet);
  plan->add_option("--attention", args->attention, "Attention core: flash (fused) or unfused");
  add_layer_split_options(*plan, *args);
  add_data_parallel_options(*plan, *args);
  add_cross_server_option(*plan, *args);
  plan->add_flag("--include-unfit", *include_unfit,
                 "Rank layouts that do not fit in memory too, after all that fit (fits false, unfit_reason)");
  plan->callback([args, top, jobs_wanted, include_unfit, quiet, &context]() {
    Format format = parse_format(args->format);
    const Workspace& ws = context.workspace();
    TransformerSpec model = find_transformer(ws, args->model);
    if (args->topology.empty()) throw UsageError("--topology is required: the server or cluster to plan on");
    check_fp8_recipe(*args);
    args->layout.attention = parse_attention(args->attention);
    int gpus = args->gpus;
    const Topology& topology = training_topology(ws, args->topology, args->scale, args->gpu, gpus);
    const GpuModel& gpu = topology.gpu_model(0);
    check_fp8_recipe(*args, &gpu);
    const NvlinkDomains domains = nvlink_domains(topology);
    PlanSpace space;
    space.gpus = gpus;
    space.gpus_per_domain = std::min(gpus, domains.gpus.front());
    space.base = args->layout;
    // Every layout compares at one batch: one sequence per GPU unless asked (printed above the table).
    if (space.base.global_batch == 0) space.base.global_batch = gpus;
    space.memory_B = gpu.memory_B;
    space.optimizer_state_B = ws.catalog().optimizer(LlmOptions{}.optimizer, model.where).state_bytes_per_param;
    std::vector<PlanCandidate> candidates = plan_candidates(model, space);
    if (candidates.empty())
      throw UsageError("no layout of " + model.name + " divides over " + std::to_string(gpus) +
                       " GPUs (check --global-batch against micro-batch x dp, and the model's heads and layers)");
    const Sorted sorted = sort_candidates(candidates, domains, args->layout.allow_cross_server_tp);
    if (sorted.fitting.empty() && sorted.unfit.empty())
      throw UsageError("every layout of " + model.name + " on " + std::to_string(gpus) + " GPUs of " + args->topology +
                       " has a tensor, context or expert group across NVLink domains (" + std::to_string(domains.gpus.front()) +
                       " GPUs each); give --allow-cross-server-tp to search them");
    if (sorted.fitting.empty() && !*include_unfit) none_fits(model, sorted.unfit, gpus, args->topology, gpu);
    LlmOptions options;
    options.nccl = args->nccl;
    const std::size_t needed = static_cast<std::size_t>(*top) + 1;
    const int jobs = std::max(1, *jobs_wanted);
    // The total is the layouts searched; the floors usually stop the search before it.
    Progress progress("topsim plan", "layouts", stderr_progress(*quiet));
    const std::size_t total = sorted.fitting.size() + (*include_unfit ? sorted.unfit.size() : 0);
    const Ranked fit =
        rank_layouts(sorted.fitting, needed, jobs, topology, ws.catalog(), model, options, {progress, 0, total});
    // Layouts that do not fit rank after every one that does, only where the top leaves room.
    const Ranked unfit = *include_unfit ? rank_layouts(sorted.unfit, needed - std::min(needed, fit.rows.size()), jobs,
                                                       topology, ws.catalog(), model, options,
                                                       {progress, sorted.fitting.size(), total})
                                        : Ranked{};
    progress.finish();
    const auto& leaders = fit.rows.empty() ? unfit.rows : fit.rows;
    std::string why = leaders.size() > 1 ? why_best(model, leaders[0], leaders[1]) : "";
    std::vector<std::pair<LlmLayout, LlmResult>> rows = fit.rows;
    rows.insert(rows.end(), unfit.rows.begin(), unfit.rows.end());
    if (rows.size() > static_cast<std::size_t>(*top)) rows.resize(static_cast<std::size_t>(*top));
    Table table = training_table(model, rows, format);
    if (format != Format::table) {
      context.out = table.render(format);
      return;
    }
    const LlmLayout& L = rows.front().first;
    const std::string counts = search_counts(candidates.size(), sorted, fit, unfit, *include_unfit, gpu, needed,
                                             domains.gpus.front());
    context.out = "# topsim plan: " + model.name + " on " + std::to_string(gpus) + " GPUs of " + topology.label() + ", " +
                  std::to_string(L.global_batch) + " sequences of " + std::to_string(L.seq_len) + " tokens, " + L.precision +
                  "\n" + counts + why + table.to_text();
  });
}

}  // namespace topsim
