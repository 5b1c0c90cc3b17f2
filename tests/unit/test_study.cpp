// The study layer: a Workspace parses its models once and builds each topology once; a Batch
// runs a command's platforms on one Simulator.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "study/batch.hpp"
#include "study/scenarios.hpp"
#include "study/workspace.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("study: a workspace parses its models on first use, once") {
  Workspace workspace(TOPSIM_DATA_DIR);
  CHECK(workspace.catalog_parses() == 0);
  const Catalog& first = workspace.catalog();
  const Catalog& again = workspace.catalog();
  CHECK(&first == &again);
  CHECK(workspace.catalog_parses() == 1);
}

TEST_CASE("study: a topology is built once per name and what-ifs, against the workspace's models") {
  Workspace workspace(TOPSIM_DATA_DIR);
  ScaleOut two;
  two.nodes = 2;
  Topology a = workspace.topology("dgx-a100");
  Topology b = workspace.topology("dgx-a100");
  Topology c = workspace.topology("dgx-a100", two);
  // dgx-a100: 8 GPUs per server, so 2 servers hold 16.
  CHECK(a.gpu_count() == 8);
  CHECK(b.gpu_count() == 8);
  CHECK(c.gpu_count() == 16);
  CHECK(workspace.topology_builds() == 2);
  CHECK(workspace.catalog_parses() == 1);
  // Against another catalog: built again, never kept.
  Topology d = workspace.topology("dgx-a100", {}, "", catalog());
  CHECK(d.gpu_count() == 8);
  CHECK(workspace.topology_builds() == 2);
  CHECK_THROWS_AS(workspace.topology("no-such-server"), InputError);
}

TEST_CASE("study: a bundled scenario run through a workspace parses the catalog exactly once") {
  Workspace workspace(TOPSIM_DATA_DIR);
  ScenarioSpec scenario = load_scenario(workspace.scenario_path("bert-large-pretrain-dgx-a100"));
  scenario.nodes = {1, 2};  // 1 and 2 servers: two topologies (the one-GPU baseline reuses the first)
  Batch batch;
  std::vector<ScenarioPoint> points = run_scenario_points(scenario, workspace, batch);
  REQUIRE(points.size() == 2);
  // 8 GPUs per DGX A100 server.
  CHECK(points[0].gpus == 8);
  CHECK(points[1].gpus == 16);
  CHECK(points[1].replay.iteration_s > 0);
  CHECK(workspace.catalog_parses() == 1);
  CHECK(workspace.topology_builds() <= 3);
}
