#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "routing/route.hpp"
#include "routing/topo_matrix.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {
std::vector<std::string> paths(const Topology& t, const Route& route) {
  std::vector<std::string> out;
  for (const Path& p : route.paths) out.push_back(describe(t, p));
  return out;
}
}  // namespace

TEST_CASE("routing: DGX-1 V100 uses the bonded NVLinks of a pair") {
  Topology t = bundled("dgx1-v100");
  Route r = find_route(t, 0, 3, RouteOptions{});
  CHECK(r.kind == RouteKind::nvlink);
  CHECK(r.nvlinks == 2);
  CHECK(paths(t, r) == std::vector<std::string>{"gpu0 -nvlink2x2-> gpu3"});
  // 25 GB/s x 2 links x 0.9701 efficiency.
  CHECK(path_bandwidth_Bps(t, r.paths[0]) == Approx(48.505e9));
  CHECK(path_latency_s(t, r.paths[0]) == Approx(0.2e-6));
}

TEST_CASE("routing: DGX-1 pairs without NVLink are staged through host memory across QPI") {
  Topology t = bundled("dgx1-v100");
  Route r = find_route(t, 0, 5, RouteOptions{});
  CHECK(r.kind == RouteKind::host_staged);
  CHECK(paths(t, r) == std::vector<std::string>{
                           "[gpu0 staging] gpu0 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> cpu0 [cpu0 memory] "
                           "cpu0 -qpi-9.6x2-> cpu1 [cpu1] cpu1 -pcie3-x16-> pcie2 [pcie2] pcie2 -pcie3-x16-> gpu5 "
                           "[gpu5 staging]"});
  // Latency: 4 PCIe hops x 0.1 us + 2 switches x 0.15 + memory 0.1 + QPI 0.1 + CPU 0.1 = 1.0 us.
  CHECK(path_latency_s(t, r.paths[0]) == Approx(1.0e-6));
  // Narrowest alone: a PCIe Gen3 x16 hop, 15.754 GB/s x 0.6308 = 9.94 GB/s (the V100 staging
  // pipeline, 14.407 GB/s, binds only when both directions share it).
  CHECK(path_bandwidth_Bps(t, r.paths[0]) == Approx(15.754e9 * 0.6308));
}

TEST_CASE("routing: DGX-2 stripes over six switch planes and crosses boards on the trunks") {
  Topology t = bundled("dgx2");
  Route r = find_route(t, 0, 8, RouteOptions{});
  CHECK(r.kind == RouteKind::nvlink);
  CHECK(r.nvlinks == 6);
  REQUIRE(r.paths.size() == 6);
  for (const Path& p : r.paths) CHECK(p.share == Approx(1.0 / 6));
  CHECK(describe(t, r.paths[0]) ==
        "gpu0 -nvlink2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink2x8-> nvswitch6 [nvswitch6] nvswitch6 -nvlink2-> gpu8");
  CHECK(describe(t, r.paths[5]) ==
        "gpu0 -nvlink2-> nvswitch5 [nvswitch5] nvswitch5 -nvlink2x8-> nvswitch11 [nvswitch11] nvswitch11 -nvlink2-> gpu8");
  Route same_board = find_route(t, 0, 1, RouteOptions{});
  CHECK(describe(t, same_board.paths[0]) == "gpu0 -nvlink2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink2-> gpu1");
}

TEST_CASE("routing: DGX H100 splits bytes 5/4/4/5 over its four NVSwitches") {
  Topology t = bundled("dgx-h100");
  Route r = find_route(t, 2, 6, RouteOptions{});
  CHECK(r.nvlinks == 18);
  REQUIRE(r.paths.size() == 4);
  CHECK(r.paths[0].share == Approx(5.0 / 18));
  CHECK(r.paths[1].share == Approx(4.0 / 18));
  CHECK(r.paths[2].share == Approx(4.0 / 18));
  CHECK(r.paths[3].share == Approx(5.0 / 18));
  CHECK(describe(t, r.paths[1]) == "gpu2 -nvlink4x4-> nvswitch1 [nvswitch1] nvswitch1 -nvlink4x4-> gpu6");
}

TEST_CASE("routing: with P2P disabled DGX A100 stages through the socket's memory") {
  Topology t = bundled("dgx-a100");
  RouteOptions off;
  off.peer_access = false;
  Route r = find_route(t, 0, 1, off);
  CHECK(r.kind == RouteKind::host_staged);
  CHECK(paths(t, r) ==
        std::vector<std::string>{"[gpu0 staging] gpu0 -pcie4-x16-> pcie0_gpu [pcie0_gpu] pcie0_gpu -pcie4-x16-> pcie0_up "
                                 "[pcie0_up] pcie0_up -pcie4-x16-> cpu0 [cpu0 memory] cpu0 -pcie4-x16-> pcie0_up [pcie0_up] "
                                 "pcie0_up -pcie4-x16-> pcie0_gpu [pcie0_gpu] pcie0_gpu -pcie4-x16-> gpu1 [gpu1 staging]"});
}

TEST_CASE("routing: GeForce boards without peer access stage even under one switch") {
  Topology t = bundled("pcie-8x-rtx4090");
  Route r = find_route(t, 0, 1, RouteOptions{});
  CHECK(r.kind == RouteKind::host_staged);
  // The RTX 4090 publishes no staging limit: the narrowest hop is a PCIe Gen4 x16 link at
  // 31.508 GB/s x 0.6308.
  CHECK(path_bandwidth_Bps(t, r.paths[0]) == Approx(31.508e9 * 0.6308));
}

TEST_CASE("routing: GPUs that allow peer access use PCIe inside one socket") {
  std::string path = tiny_with("{\"a\": \"gpu0\", \"b\": \"gpu1\", \"model\": \"nvlink2\", \"count\": 2},\n", "");
  Topology t = Topology::build(load_topology_spec(path), catalog());
  Route r = find_route(t, 1, 0, RouteOptions{});
  CHECK(r.kind == RouteKind::pcie_peer);
  CHECK(paths(t, r) == std::vector<std::string>{"gpu1 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> gpu0"});
}

TEST_CASE("routing: copy-engine transfers cross both GPUs' copy engines") {
  Topology t = bundled("dgx-a100");
  RouteOptions copy;
  copy.copy_engine = true;
  Route r = find_route(t, 0, 1, copy);
  REQUIRE(r.paths.size() == 6);
  CHECK(describe(t, r.paths[0]) ==
        "[gpu0 copy engines] gpu0 -nvlink3x2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink3x2-> gpu1 [gpu1 copy engines]");
}

TEST_CASE("routing: nvidia-smi topo -m of DGX-1 V100 equals the published matrix") {
  // shared/reference/measurements.md, DGX-1 V100 link matrix (NVIDIA/nccl issue 671).
  const std::vector<std::vector<std::string>> published = {
      {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"}, {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"}, {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"}, {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"}, {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"}};
  Topology t = bundled("dgx1-v100");
  TopoMatrix m = topo_matrix(t);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) CHECK(m.cells[r][c] == published[r][c]);
  CHECK(m.cells[0][8] == "PIX");   // GPU0 and mlx5_0 share a PCIe switch
  CHECK(m.cells[0][9] == "PHB");   // mlx5_1 is under the other switch of socket 0 (Broadwell: one host bridge)
  CHECK(m.cells[0][10] == "SYS");  // mlx5_2 is on socket 1
  CHECK(m.cpu_affinity[4] == "20-39,60-79");
}

TEST_CASE("routing: PCIe relations on two-level switch trees") {
  Topology dgx2 = bundled("dgx2");
  TopoMatrix m = topo_matrix(dgx2);
  CHECK(m.cells[0][1] == "NV6");
  CHECK(m.cells[0][16] == "PIX");   // NIC0 under GPU0's leaf switch
  CHECK(m.cells[0][17] == "PXB");   // NIC1 under the sibling leaf, same upper switch
  CHECK(m.cells[0][18] == "NODE");  // other upper switch of the same Skylake socket
  CHECK(m.cells[0][20] == "SYS");
  Topology a100 = bundled("dgx-a100");
  CHECK(topo_matrix(a100).cells[0][1] == "NV12");
  CHECK(topo_matrix(bundled("hgx-a800")).cells[0][1] == "NV8");
  CHECK(topo_matrix(bundled("dgx-h100")).cells[0][1] == "NV18");
  CHECK(topo_matrix(bundled("pcie-8x-rtx4090")).cells[0][1] == "PIX");
}

TEST_CASE("routing: the links each bundled server's copies use") {
  struct Expect {
    const char* topology;
    int src, dst;
    RouteKind kind;
    int nvlinks;
    std::size_t planes;
    const char* first_path;
  };
  const Expect cases[] = {
      {"dgx1-p100", 0, 4, RouteKind::nvlink, 1, 1, "gpu0 -nvlink1-> gpu4"},
      {"dgx1-p100", 1, 6, RouteKind::host_staged, 0, 1,
       "[gpu1 staging] gpu1 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> cpu0 [cpu0 memory] cpu0 -qpi-9.6x2-> cpu1 "
       "[cpu1] cpu1 -pcie3-x16-> pcie3 [pcie3] pcie3 -pcie3-x16-> gpu6 [gpu6 staging]"},
      {"dgx1-v100", 1, 5, RouteKind::nvlink, 2, 1, "gpu1 -nvlink2x2-> gpu5"},
      {"dgx2", 15, 7, RouteKind::nvlink, 6, 6,
       "gpu15 -nvlink2-> nvswitch6 [nvswitch6] nvswitch6 -nvlink2x8-> nvswitch0 [nvswitch0] nvswitch0 -nvlink2-> gpu7"},
      {"dgx-a100", 3, 4, RouteKind::nvlink, 12, 6, "gpu3 -nvlink3x2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink3x2-> gpu4"},
      {"hgx-a800", 0, 7, RouteKind::nvlink, 8, 6, "gpu0 -nvlink3x2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink3x2-> gpu7"},
      {"dgx-h100", 0, 7, RouteKind::nvlink, 18, 4, "gpu0 -nvlink4x5-> nvswitch0 [nvswitch0] nvswitch0 -nvlink4x5-> gpu7"},
      {"hgx-h800", 0, 7, RouteKind::nvlink, 8, 4, "gpu0 -nvlink4x2-> nvswitch0 [nvswitch0] nvswitch0 -nvlink4x2-> gpu7"},
      {"dgx-station-v100", 2, 3, RouteKind::nvlink, 2, 1, "gpu2 -nvlink2x2-> gpu3"},
      {"pcie-8x-rtx4090", 3, 4, RouteKind::host_staged, 0, 1,
       "[gpu3 staging] gpu3 -pcie4-x16-> pcie0 [pcie0] pcie0 -pcie4-x16-> cpu0 [cpu0 memory] cpu0 -upi-11.2x3-> cpu1 "
       "[cpu1] cpu1 -pcie4-x16-> pcie1 [pcie1] pcie1 -pcie4-x16-> gpu4 [gpu4 staging]"},
  };
  for (const Expect& e : cases) {
    INFO(e.topology << " GPU" << e.src << " -> GPU" << e.dst);
    Topology t = bundled(e.topology);
    Route r = find_route(t, e.src, e.dst, RouteOptions{});
    CHECK(r.kind == e.kind);
    CHECK(r.nvlinks == e.nvlinks);
    REQUIRE(r.paths.size() == e.planes);
    CHECK(describe(t, r.paths[0]) == e.first_path);
  }
}
