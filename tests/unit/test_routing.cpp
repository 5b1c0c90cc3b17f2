#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "routing/route.hpp"
#include "routing/route_table.hpp"
#include "routing/topo_matrix.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {
std::string text(const Topology& t, const Route& route) { return describe(t, route.path); }
RouteOptions copies() {
  RouteOptions options;
  options.mode = TransferMode::copy_engine;
  return options;
}
}  // namespace

TEST_CASE("routing: DGX-1 V100 uses the bonded NVLinks of a pair") {
  Topology t = bundled("dgx1-v100");
  Route r = find_route(t, 0, 3, RouteOptions{});
  CHECK(r.kind == RouteKind::nvlink);
  CHECK(r.nvlinks == 2);
  CHECK(text(t, r) == "gpu0 -nvlink2x2-> gpu3");
  // 25 GB/s x 2 links x 0.9701 efficiency.
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::raw) == Approx(48.505e9));
  // NCCL's kernels on Volta reach 0.8 of line rate: 2 x 25 x 0.8.
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::sm) == Approx(40e9));
  CHECK(path_latency_s(t, r.path) == Approx(0.2e-6));
}

TEST_CASE("routing: DGX-1 pairs without NVLink are staged through host memory across QPI") {
  Topology t = bundled("dgx1-v100");
  Route r = find_route(t, 0, 5, copies());
  CHECK(r.kind == RouteKind::host_staged);
  CHECK(text(t, r) == "[gpu0 copy engines] [gpu0 staging] gpu0 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> cpu0 "
                      "[cpu0 memory] cpu0 -qpi-9.6x2-> cpu1 [cpu1] cpu1 -pcie3-x16-> pcie2 [pcie2] pcie2 -pcie3-x16-> "
                      "gpu5 [gpu5 staging] [gpu5 copy engines]");
  // Latency: 4 PCIe hops x 0.1 us + 2 switches x 0.15 + memory 0.1 + QPI 0.1 + CPU 0.1 = 1.0 us.
  CHECK(path_latency_s(t, r.path) == Approx(1.0e-6));
  // Narrowest alone: a PCIe Gen3 x16 hop, 15.754 GB/s x 0.6415 = 10.11 GB/s (the V100 staging
  // pipeline, 14.41 GB/s, binds only when both directions share it).
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::copy_engine) == Approx(15.754e9 * 0.6415));
  // NCCL's shared-memory transport takes the same way without the cudaMemcpy staging pipeline.
  CHECK(text(t, find_route(t, 0, 5, RouteOptions{})).rfind("gpu0 -pcie3-x16-> pcie0 [pcie0]", 0) == 0);
}

TEST_CASE("routing: DGX-2 stripes over six switch planes and crosses boards on the trunks") {
  Topology t = bundled("dgx2");
  Route r = find_route(t, 0, 8, RouteOptions{});
  CHECK(r.kind == RouteKind::nvlink);
  CHECK(r.nvlinks == 6);
  CHECK(r.planes == 6);
  CHECK(text(t, r) == "gpu0 -nvlink2x6-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink2x48-> nvswitch6..11 "
                      "[nvswitch6..11] nvswitch6..11 -nvlink2x6-> gpu8");
  // The planes bundled: 6 links x 25 GB/s x 0.9701 into the switches, 48 trunk links between boards.
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::raw) == Approx(6 * 25e9 * 0.9701));
  // Latency: 3 NVLink hops x 0.2 us + 2 switch traversals x 0.2403 us = 1.0806 us.
  CHECK(path_latency_s(t, r.path) == Approx(1.0806e-6));
  Route same_board = find_route(t, 0, 1, RouteOptions{});
  CHECK(text(t, same_board) == "gpu0 -nvlink2x6-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink2x6-> gpu1");
}

TEST_CASE("routing: DGX H100 stripes 5/4/4/5 over its four NVSwitches as one bundle of 18 links") {
  Topology t = bundled("dgx-h100");
  Route r = find_route(t, 2, 6, RouteOptions{});
  CHECK(r.nvlinks == 18);
  CHECK(r.planes == 4);
  CHECK(text(t, r) == "gpu2 -nvlink4x18-> nvswitch0..3 [nvswitch0..3] nvswitch0..3 -nvlink4x18-> gpu6");
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::raw) == Approx(18 * 25e9 * 0.837));
}

TEST_CASE("routing: unevenly wired switch planes are refused") {
  // GPU0 puts 2 links into nvswitch0 and 1 into nvswitch1, GPU1 the opposite: striping by the
  // source's links would overload GPU1's single link into nvswitch0.
  std::string path = write_temp("uneven.json", R"({"name": "uneven", "description": "d",
    "devices": [{"id": "gpu0", "type": "gpu", "model": "a100"}, {"id": "gpu1", "type": "gpu", "model": "a100"},
                {"id": "sw0", "type": "nvswitch", "model": "nvswitch-gen2"}, {"id": "sw1", "type": "nvswitch", "model": "nvswitch-gen2"},
                {"id": "cpu0", "type": "cpu", "model": "epyc-7742"}],
    "links": [{"a": "gpu0", "b": "sw0", "model": "nvlink3", "count": 2}, {"a": "gpu0", "b": "sw1", "model": "nvlink3"},
              {"a": "gpu1", "b": "sw0", "model": "nvlink3"}, {"a": "gpu1", "b": "sw1", "model": "nvlink3", "count": 2},
              {"a": "gpu0", "b": "cpu0", "model": "pcie4-x16"}, {"a": "gpu1", "b": "cpu0", "model": "pcie4-x16"}]})");
  Topology t = Topology::build(load_topology_spec(path), catalog());
  std::string message = input_error([&] { find_route(t, 0, 1, RouteOptions{}); });
  CHECK(message.find("NVSwitch planes between gpu0 and gpu1 are wired unevenly (plane 0 carries 0.666667 of the bytes "
                     "but has 0.333333 of the capacity at stage 2)") != std::string::npos);
}

TEST_CASE("routing: with P2P disabled DGX A100 stages through the socket's memory") {
  Topology t = bundled("dgx-a100");
  RouteOptions off;
  off.peer_access = false;
  Route r = find_route(t, 0, 1, off);
  CHECK(r.kind == RouteKind::host_staged);
  CHECK(text(t, r) == "gpu0 -pcie4-x16-> pcie0 [pcie0] pcie0 -pcie4-x16-> cpu0 [cpu0 memory] cpu0 -pcie4-x16-> "
                      "pcie0 [pcie0] pcie0 -pcie4-x16-> gpu1");
}

TEST_CASE("routing: GeForce boards without peer access stage even under one switch") {
  Topology t = bundled("pcie-8x-rtx4090");
  Route r = find_route(t, 0, 1, RouteOptions{});
  CHECK(r.kind == RouteKind::host_staged);
  // The RTX 4090 publishes no staging limit: the narrowest hop is a PCIe Gen4 x16 link at
  // 31.508 GB/s x 0.7617 (assumed: NCCL's PCIe figure as a fraction).
  CHECK(path_bandwidth_Bps(t, r.path, TransferMode::copy_engine) == Approx(31.508e9 * 0.7617));
}

TEST_CASE("routing: GPUs that allow peer access use PCIe inside one socket") {
  std::string path = tiny_with("{\"a\": \"gpu0\", \"b\": \"gpu1\", \"model\": \"nvlink2\", \"count\": 2},\n", "");
  Topology t = Topology::build(load_topology_spec(path), catalog());
  Route r = find_route(t, 1, 0, RouteOptions{});
  CHECK(r.kind == RouteKind::pcie_peer);
  CHECK(text(t, r) == "gpu1 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> gpu0");
}

TEST_CASE("routing: copy-engine transfers cross both GPUs' copy engines") {
  Topology t = bundled("dgx-a100");
  Route r = find_route(t, 0, 1, copies());
  CHECK(text(t, r) ==
        "[gpu0 copy engines] gpu0 -nvlink3x12-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink3x12-> gpu1 [gpu1 copy engines]");
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
    int planes;
    const char* path;
  };
  const Expect cases[] = {
      {"dgx1-p100", 0, 4, RouteKind::nvlink, 1, 1, "gpu0 -nvlink1-> gpu4"},
      {"dgx1-p100", 1, 6, RouteKind::host_staged, 0, 1,
       "gpu1 -pcie3-x16-> pcie0 [pcie0] pcie0 -pcie3-x16-> cpu0 [cpu0 memory] cpu0 -qpi-9.6x2-> cpu1 [cpu1] cpu1 "
       "-pcie3-x16-> pcie3 [pcie3] pcie3 -pcie3-x16-> gpu6"},
      {"dgx1-v100", 1, 5, RouteKind::nvlink, 2, 1, "gpu1 -nvlink2x2-> gpu5"},
      {"dgx2", 15, 7, RouteKind::nvlink, 6, 6,
       "gpu15 -nvlink2x6-> nvswitch6..11 [nvswitch6..11] nvswitch6..11 -nvlink2x48-> nvswitch0..5 [nvswitch0..5] "
       "nvswitch0..5 -nvlink2x6-> gpu7"},
      {"dgx-a100", 3, 4, RouteKind::nvlink, 12, 6,
       "gpu3 -nvlink3x12-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink3x12-> gpu4"},
      {"hgx-a800", 0, 7, RouteKind::nvlink, 8, 6, "gpu0 -nvlink3x8-> nvswitch0..5 [nvswitch0..5] nvswitch0..5 -nvlink3x8-> gpu7"},
      {"dgx-h100", 0, 7, RouteKind::nvlink, 18, 4,
       "gpu0 -nvlink4x18-> nvswitch0..3 [nvswitch0..3] nvswitch0..3 -nvlink4x18-> gpu7"},
      {"hgx-h800", 0, 7, RouteKind::nvlink, 8, 4, "gpu0 -nvlink4x8-> nvswitch0..3 [nvswitch0..3] nvswitch0..3 -nvlink4x8-> gpu7"},
      {"dgx-station-v100", 2, 3, RouteKind::nvlink, 2, 1, "gpu2 -nvlink2x2-> gpu3"},
      {"pcie-8x-rtx4090", 3, 4, RouteKind::host_staged, 0, 1,
       "gpu3 -pcie4-x16-> pcie0 [pcie0] pcie0 -pcie4-x16-> cpu0 [cpu0 memory] cpu0 -upi-11.2x3-> cpu1 [cpu1] cpu1 "
       "-pcie4-x16-> pcie1 [pcie1] pcie1 -pcie4-x16-> gpu4"},
  };
  for (const Expect& e : cases) {
    INFO(e.topology << " GPU" << e.src << " -> GPU" << e.dst);
    Topology t = bundled(e.topology);
    Route r = find_route(t, e.src, e.dst, RouteOptions{});
    CHECK(r.kind == e.kind);
    CHECK(r.nvlinks == e.nvlinks);
    CHECK(r.planes == e.planes);
    CHECK(text(t, r) == e.path);
  }
}

TEST_CASE("routing: a route table finds each route once and its entries outlive its growth") {
  Topology t = replicated("dgx-h100", 4);  // 32 GPUs: 992 GPU pairs, then 992 more through NIC 0
  RouteOptions options;
  options.mode = TransferMode::sm;
  RouteTable table(t, options);
  const RouteTable::Entry& first = table.route(0, 9);
  std::vector<std::size_t> first_resources;
  for (const ResourceUse& u : first.uses) first_resources.push_back(u.resource);
  // Enough routes to grow the table's index many times over (it starts at 64 slots).
  for (int s = 0; s < t.gpu_count(); ++s)
    for (int d = 0; d < t.gpu_count(); ++d)
      if (s != d) {
        table.route(s, d);
        if (t.node_of(s) != t.node_of(d)) table.route(s, d, 8 * t.node_of(s), 8 * t.node_of(d));
      }
  CHECK(&table.route(0, 9) == &first);
  std::vector<std::size_t> after;
  for (const ResourceUse& u : first.uses) after.push_back(u.resource);
  CHECK(after == first_resources);
  // Keyed by all four ordinals: through NIC 0 of each server is another entry than NCCL's nearest.
  CHECK(&table.route(0, 9, 0, 8) != &first);
  CHECK(&table.route(0, 9, 0, 8) == &table.route(0, 9, 0, 8));
  // The same route as a fresh table finds, hop for hop: gpu0's SMs, then out of server 0.
  Route direct = find_route(t, 0, 9, options);
  CHECK(first.kind == RouteKind::network);
  CHECK(first.latency_s == Approx(path_latency_s(t, direct.path)).epsilon(1e-12));
  CHECK(first.bottleneck_Bps == Approx(path_bandwidth_Bps(t, direct.path, TransferMode::sm)).epsilon(1e-12));
}
