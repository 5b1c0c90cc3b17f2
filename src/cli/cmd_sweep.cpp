// topsim sweep: every point of a grid (a sweep file's collectives, or a training scenario's
// variants x counts) as one JSON row; --shard i/n runs every n-th point from the i-th, so that
// a job array spreads a grid over machines (the grid runs in study/sweep). topsim merge joins
// the shards into what one run writes.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/common.hpp"
#include "io/io.hpp"
#include "report/result_file.hpp"
#include "study/sweep.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

struct SweepArgs {
  std::string file;
  std::string output;
  std::string shard = "1/1";
  bool quiet = false;
};

std::pair<int, int> parse_shard(const std::string& text) {
  auto slash = text.find('/');
  std::vector<int> i, n;
  try {
    if (slash == std::string::npos) throw ParseError("no '/'");
    i = parse_int_list(text.substr(0, slash));
    n = parse_int_list(text.substr(slash + 1));
  } catch (const ParseError&) {
    throw UsageError("--shard: expected i/n (the i-th of n shares, 1 <= i <= n), got '" + text + "'");
  }
  if (i.size() != 1 || n.size() != 1 || n[0] < 1 || i[0] < 1 || i[0] > n[0])
    throw UsageError("--shard: expected i/n with 1 <= i <= n, got '" + text + "'");
  return {i[0], n[0]};
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& context) {
  CLI::App* sweep = app.add_subcommand("sweep", "Every point of a grid (a sweep file, or a training scenario) as JSON rows");
  auto args = std::make_shared<SweepArgs>();
  sweep->add_option("file", args->file, "Sweep file (scenarios/sweep-*.json) or training scenario: path or bundled name")
      ->required();
  sweep->add_option("-o,--output", args->output, "Write the rows here (default: standard output)");
  sweep->add_option("--shard", args->shard, "Run the i-th of n shares of the points (1/3, 2/3, 3/3)")->default_val("1/1");
  add_quiet_option(*sweep, args->quiet);
  sweep->callback([args, &context]() {
    auto [index, shards] = parse_shard(args->shard);
    std::string path = context.workspace().scenario_path(args->file);
    // The file as the user named it, so that results do not depend on where the data lives.
    Progress progress("topsim sweep", "points", stderr_progress(args->quiet));
    SweepShard shard{index, shards, [&](std::size_t done, std::size_t total) { progress.update(done, total); }};
    ResultFile result = is_sweep_file(path) ? sweep_collectives(path, args->file, context.workspace(), shard)
                                            : sweep_scenario(path, args->file, context.workspace(), shard);
    progress.finish();
    std::string text = result_file_text(result);
    if (args->output.empty()) context.out = text;
    else write_file_whole(args->output, text, "-o");
  });

  CLI::App* merge = app.add_subcommand("merge", "Join the shards of one sweep into what a single run writes");
  auto files = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  merge->add_option("files", *files, "Shard files of one sweep")->required();
  merge->add_option("-o,--output", *output, "Write the merged rows here (default: standard output)");
  merge->callback([files, output, &context]() {
    std::vector<ResultFile> parts;
    for (const auto& f : *files) parts.push_back(load_result_file(f));
    ResultFile all = parts.front();
    all.shard_index = all.shard_count = 1;
    all.rows.clear();
    std::map<long long, const ResultRow*> by_point;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const ResultFile& p = parts[k];
      if (p.grid != all.grid || p.source != all.source || p.points != all.points)
        throw InputError((*files)[k], "", "not a shard of the same sweep as " + files->front() + " (source " + p.source +
                                              ", grid " + p.grid + " against " + all.source + ", grid " + all.grid + ")");
      for (const ResultRow& row : p.rows) {
        long long point = std::get<long long>(*row.get("point"));
        if (!by_point.emplace(point, &row).second)
          throw InputError((*files)[k], "", "point " + std::to_string(point) + " is in two files");
      }
    }
    std::vector<std::string> missing;
    for (long long i = 0; i < all.points; ++i)
      if (!by_point.count(i)) missing.push_back(std::to_string(i));
    if (!missing.empty())
      throw InputError(files->front(), "", "the files miss " + std::to_string(missing.size()) + " of " +
                                               std::to_string(all.points) + " points (" +
                                               join(std::vector<std::string>(missing.begin(), missing.begin() + std::min<std::size_t>(missing.size(), 8)), ", ") +
                                               (missing.size() > 8 ? ", ..." : "") + "): is a shard missing?");
    for (const auto& [point, row] : by_point) all.rows.push_back(*row);
    std::string text = result_file_text(all);
    if (output->empty()) context.out = text;
    else write_file_whole(*output, text, "-o");
  });
}

}  // namespace topsim
