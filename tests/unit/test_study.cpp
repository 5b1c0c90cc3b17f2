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

// Where the data folder is found (study/data_dir.hpp): TOPSIM_DATA_DIR, then the prefix the
// binary is installed in, then the source tree. Each place is a temporary directory here.
TEST_CASE("study: the data folder is TOPSIM_DATA_DIR, else the binary's install prefix, else the source tree") {
  namespace fs = std::filesystem;
  fs::path root = fs::path(write_temp("data-dir/marker", "")).parent_path();
  fs::create_directories(root / "prefix/bin");
  fs::create_directories(root / "prefix/share/topsim/models");
  fs::create_directories(root / "checkout/models");
  fs::create_directories(root / "empty/bin");
  fs::create_directories(root / "chosen");
  DataDirSearch search;
  search.executable = (root / "prefix/bin/topsim").string();
  search.install_relative = "../share/topsim";
  search.source_tree = (root / "checkout").string();

  DataDir installed = find_data_dir(search);
  CHECK(installed.path == (root / "prefix/share/topsim").string());
  CHECK(installed.origin == "install prefix");

  // The environment comes first, whatever it holds (it is the user's explicit choice).
  search.env = (root / "chosen").string();
  DataDir env = find_data_dir(search);
  CHECK(env.path == search.env);
  CHECK(env.origin == "TOPSIM_DATA_DIR");
  search.env = (root / "missing").string();
  CHECK(input_error([&] { find_data_dir(search); }) ==
        search.env + ": TOPSIM_DATA_DIR names no directory (it must hold models/, topologies/ and scenarios/; unset "
                     "it to use the installed or built-in data)");
  search.env.clear();

  // A binary outside any prefix with data (a build tree) reads the source tree.
  search.executable = (root / "empty/bin/topsim").string();
  DataDir source = find_data_dir(search);
  CHECK(source.path == (root / "checkout").string());
  CHECK(source.origin == "source tree");

  // Neither: nothing found, and the message says where it looked; a Workspace throws it only
  // when a command needs the data.
  search.source_tree = (root / "gone").string();
  DataDir none = find_data_dir(search);
  CHECK(none.path.empty());
  CHECK(none.tried == (root / "empty/share/topsim").string() + " (the install prefix: no models/), " +
                          (root / "gone").string() + " (the source tree it was built from: no models/)");
  Workspace workspace(none, "");
  CHECK(workspace.topology_path(data_path("topologies/dgx-a100.json")) == data_path("topologies/dgx-a100.json"));
  CHECK(input_error([&] { workspace.topology_path("dgx-a100"); }) ==
        "no data folder (models/, topologies/, scenarios/) found: looked at " + none.tried +
            "; set TOPSIM_DATA_DIR to one, or give --models DIR and every file by path");
}
