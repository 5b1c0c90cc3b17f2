#include "study/sweep.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "collectives/communicator.hpp"
#include "io/io.hpp"
#include "study/batch.hpp"
#include "study/scenarios.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// FNV-1a over the point ids: two files with the same fingerprint describe the same grid.
std::string fingerprint(const std::vector<std::string>& ids) {
  unsigned long long h = 14695981039346656037ull;
  for (const auto& id : ids) {
    for (unsigned char c : id + "\n") {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", h);
  return text;
}

// A result file for a grid of points (each with an `id`), before its rows.
template <typename Point>
ResultFile envelope(const std::vector<Point>& points, const std::string& source, int index, int shards) {
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.id);
  ResultFile out;
  out.source = source;
  out.grid = fingerprint(ids);
  out.points = static_cast<long long>(points.size());
  out.shard_index = index;
  out.shard_count = shards;
  return out;
}

// A point of a collective sweep.
struct CollPoint {
  std::string id;
  std::string topology;
  int count = 0;
  std::string op;
  std::size_t size = 0;
  const SweepOverride* override = nullptr;
};

ResultValue rounded(double value, int digits) { return round_to(value, digits); }

}  // namespace

ResultFile sweep_collectives(const std::string& path, const std::string& source, const Workspace& workspace,
                             const SweepShard& shard) {
  SweepSpec sweep = load_sweep(path);
  const Catalog& catalog = workspace.catalog();
  NcclVersion version;
  try {
    version = catalog.nccl_version(sweep.nccl);
  } catch (const UsageError& e) {
    throw InputError(sweep.where.file, "/sweep/nccl", e.what());
  }
  const bool by_nodes = sweep.gpus.empty();
  const std::vector<int>& counts = by_nodes ? sweep.nodes : sweep.gpus;
  std::vector<CollPoint> points;
  for (const auto& t : sweep.topologies)
    for (int c : counts)
      for (const auto& op : sweep.ops)
        for (std::size_t z = 0; z < sweep.sizes.size(); ++z)
          for (const auto& o : sweep.overrides)
            points.push_back({t + (by_nodes ? "/nodes=" : "/gpus=") + std::to_string(c) + "/" + op + "/" + sweep.sizes[z] +
                                  "/" + o.name,
                              t, c, op, z, &o});
  ResultFile out = envelope(points, source, shard.index, shard.count);

  // This shard's points, each with its communicator (one per topology, count and routes).
  struct Group {
    std::unique_ptr<Topology> topology;
    std::unique_ptr<Communicator> comm;
    std::vector<CollRequest> requests;
    PlatformRunner* runner = nullptr;  ///< owned by the Batch
    std::string skipped;  ///< why the points of this group cannot run
  };
  std::map<std::string, Group> groups;
  std::vector<std::pair<std::size_t, std::string>> mine;  // point index, group key
  auto request_of = [&](const CollPoint& p) {
    CollRequest r;
    r.op = parse_op(p.op);
    r.dtype = parse_dtype(sweep.dtype);
    r.size_B = sweep.sizes_B[p.size];
    if (!p.override->algo.empty()) r.algo = parse_algo(p.override->algo);
    if (!p.override->proto.empty()) r.proto = parse_proto(p.override->proto);
    r.channels = p.override->channels;
    return r;
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shard.count)) != shard.index - 1) continue;
    const CollPoint& p = points[i];
    std::string key = p.topology + "|" + std::to_string(p.count) + "|" + (p.override->peer_access ? "p" : "-") +
                      (p.override->gpu_direct ? "g" : "-");
    Group& g = groups[key];
    if (!g.topology && g.skipped.empty()) {
      try {
        ScaleOut scale;
        if (by_nodes) scale.nodes = p.count;
        g.topology = std::make_unique<Topology>(workspace.topology(p.topology, scale));
        int gpus = by_nodes ? g.topology->gpu_count() : p.count;
        if (gpus > g.topology->gpu_count())
          throw UsageError(p.topology + " has " + std::to_string(g.topology->gpu_count()) + " GPUs");
        std::vector<int> ranks(static_cast<std::size_t>(gpus));
        for (int r = 0; r < gpus; ++r) ranks[static_cast<std::size_t>(r)] = r;
        RouteOptions routes;
        routes.peer_access = p.override->peer_access;
        routes.gpu_direct = p.override->gpu_direct;
        g.comm = std::make_unique<Communicator>(*g.topology, ranks, version, routes);
      } catch (const UsageError& e) {
        g.topology.reset();
        g.skipped = e.what();
      }
    }
    if (g.comm) g.requests.push_back(request_of(p));
    mine.emplace_back(i, key);
  }
  Batch batch;
  for (auto& [key, g] : groups)
    if (g.comm) g.runner = &batch.add(*g.topology, g.comm->routes(), g.comm->needs(g.requests));

  for (std::size_t n = 0; n < mine.size(); ++n) {
    const auto& [i, key] = mine[n];
    const CollPoint& p = points[i];
    Group& g = groups.at(key);
    ResultRow row;
    row.fields = {{"point", static_cast<long long>(i)}, {"id", p.id}, {"topology", p.topology}};
    row.fields.emplace_back(by_nodes ? "nodes" : "gpus", static_cast<long long>(p.count));
    row.fields.emplace_back("op", p.op);
    row.fields.emplace_back("size", sweep.sizes[p.size]);
    row.fields.emplace_back("override", p.override->name);
    if (!g.comm) {
      row.fields.emplace_back("status", "skipped: " + g.skipped);
    } else {
      std::string status = "ok";
      try {
        CollResult r = g.comm->run(request_of(p), *g.runner);
        row.fields.emplace_back("status", status);
        row.fields.emplace_back("gpus_total", static_cast<long long>(g.comm->ranks()));
        row.fields.emplace_back("size_B", static_cast<long long>(std::llround(r.size.size_B)));
        row.fields.emplace_back("algo", std::string(to_string(r.algo)));
        row.fields.emplace_back("proto", std::string(to_string(r.proto)));
        row.fields.emplace_back("channels", static_cast<long long>(r.channels));
        row.fields.emplace_back("time_us", rounded(r.time_s * 1e6, 3));
        row.fields.emplace_back("algbw_GBps", rounded(r.algbw_Bps / 1e9, 3));
        row.fields.emplace_back("busbw_GBps", rounded(r.busbw_Bps / 1e9, 3));
        row.fields.emplace_back("bound", r.bound_class);
      } catch (const UsageError& e) {  // an override this point cannot run (an algorithm it lacks)
        row.fields.emplace_back("status", std::string("skipped: ") + e.what());
      }
    }
    out.rows.push_back(std::move(row));
    if (shard.progress) shard.progress(n + 1, mine.size());
  }
  return out;
}

ResultFile sweep_scenario(const std::string& path, const std::string& source, const Workspace& workspace,
                          const SweepShard& shard) {
  ScenarioSpec scenario = load_scenario(path);
  const bool by_nodes = scenario.gpus.empty();
  const std::vector<int>& counts = by_nodes ? scenario.nodes : scenario.gpus;
  struct Point {
    std::string id;
    ScenarioSpec spec;
  };
  std::vector<Point> points;
  for (const Variant& v : scenario.variants)
    for (int c : counts) {
      Point p{v.name + (by_nodes ? "/nodes=" : "/gpus=") + std::to_string(c), scenario};
      p.spec.variants = {v};
      (by_nodes ? p.spec.nodes : p.spec.gpus) = {c};
      points.push_back(std::move(p));
    }
  ResultFile out = envelope(points, source, shard.index, shard.count);

  const Catalog& catalog = workspace.catalog();
  Batch batch;
  TopologyFactory topologies = topology_factory(workspace);
  PlatformFactory platforms = batch.platforms();
  std::vector<std::pair<std::size_t, std::unique_ptr<ScenarioRunner>>> mine;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(shard.count)) == shard.index - 1)
      mine.emplace_back(i, std::make_unique<ScenarioRunner>(points[i].spec, catalog, topologies, platforms));
  std::size_t done = 0;
  for (auto& [i, runner] : mine) {
    std::vector<ScenarioPoint> result = runner->run();
    Table table = scenario_table(result, Format::json);
    ResultRow row;
    row.fields = {{"point", static_cast<long long>(i)}, {"id", points[i].id}, {"status", std::string("ok")}};
    const auto& columns = table.columns();
    const auto& cells = table.rows().at(0);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (columns[c].name == "vs_first") continue;  // a ratio between points, not a property of one
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, double>) row.fields.emplace_back(columns[c].name, rounded(v, columns[c].digits));
            else row.fields.emplace_back(columns[c].name, ResultValue(v));
          },
          cells[c]);
    }
    out.rows.push_back(std::move(row));
    ++done;
    if (shard.progress) shard.progress(done, mine.size());
  }
  return out;
}

}  // namespace topsim
