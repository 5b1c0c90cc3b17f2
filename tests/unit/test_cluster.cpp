// Clusters: servers replicated under a fabric (fat-tree, rail, NVLink planes), the routes
// between their GPUs (GPUDirect or host bounce through the NICs), and what-if errors.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "routing/route.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

int count_of(const Topology& t, DeviceType type, const std::string& model = "") {
  int n = 0;
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    n += t.device(v).type == type && (model.empty() || t.device(v).model_name == model);
  return n;
}

std::string usage_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cluster: two DGX-1 on one EDR switch") {
  Topology one = bundled("dgx1-v100");
  Topology t = replicated("dgx1-v100", 2);
  // A DGX-1 has 8 GPUs, 4 PCIe switches, 2 CPUs and 4 NICs (18 devices); two of them put 8 NIC
  // ports on one 36-port SB7800, so the fabric is that one leaf: 2 x 18 + 1 devices, and each
  // NIC adds one link to it.
  CHECK(t.gpu_count() == 16);
  CHECK(t.node_count() == 2);
  CHECK(boost::num_vertices(t.graph()) == 37);
  CHECK(t.links().size() == 2 * one.links().size() + 8);
  CHECK(count_of(t, DeviceType::network_switch, "sb7800") == 1);
  CHECK(t.device(t.gpu(8)).id == "n1.gpu0");
  CHECK(t.node_of(7) == 0);
  CHECK(t.node_of(8) == 1);
}

TEST_CASE("cluster: a rail fabric fills 20-port halves of QM8700 leaves, rail by rail") {
  // 40-port QM8700 at 1:1 keeps 20 ports down and 20 up. Each of the 8 rails has 30 NICs: two
  // leaves (20 + 10), so 16 leaves under the aggregated core, each with 20 uplinks.
  Topology t = replicated("dgx-a100", 30);
  CHECK(count_of(t, DeviceType::network_switch, "qm8700") == 16);
  CHECK(count_of(t, DeviceType::network_switch, "fabric-core") == 1);
  int uplinks = 0;
  for (const Link& l : t.links())
    if (t.device(l.b).model_name == "fabric-core") {
      CHECK(l.count == 20);
      ++uplinks;
    }
  CHECK(uplinks == 16);
}

TEST_CASE("cluster: GB200 NVL72 spreads each GPU over 18 switch planes") {
  Topology t = replicated("gb200-tray", 18);
  CHECK(t.gpu_count() == 72);
  CHECK(count_of(t, DeviceType::nvswitch, "nvswitch-gen4") == 18);
  Route r = find_route(t, 0, 71, RouteOptions{});
  CHECK(r.kind == RouteKind::nvlink);
  CHECK(r.planes == 18);
  // 72 ports per chip: the 73rd GPU (the first of a 19th tray) has no port left on any plane.
  CHECK(input_error([] { replicated("gb200-tray", 19); }).find("would use 73 NVLink ports; its model nvswitch-gen4 has 72") !=
        std::string::npos);
}

TEST_CASE("cluster: what-ifs name what is wrong") {
  CHECK(usage_error([] { replicated("dgx-a100", 2, "", 9); }) == "--nics-per-node 9: dgx-a100 has 8 NICs");
  CHECK(usage_error([] { replicated("dgx-station-v100", 2); }).find("dgx-station-v100 has no default scale-out fabric") == 0);
  CHECK(usage_error([] { replicated("dgx-a100", 2, "hdr300"); }).find("unknown NIC 'hdr300'") == 0);
  // Ethernet NICs cannot sit on InfiniBand leaves: the fabric takes a switch that speaks them.
  Topology eth = replicated("dgx-a100", 2, "100gbe");
  CHECK(count_of(eth, DeviceType::network_switch, "sn2700") == 1);
  CHECK(eth.device(eth.nics().front()).model_name == "connectx6-dx-100g");
  // Keeping 2 NICs of 8 leaves 2 x 2 NIC ports.
  Topology two = replicated("dgx-a100", 2, "", 2);
  CHECK(two.nics().size() == 4);
}

TEST_CASE("cluster routes: GPUDirect RDMA through the PCIe switch, or a bounce through host memory") {
  Topology t = replicated("dgx-a100", 2);
  RouteOptions sm;
  sm.mode = TransferMode::raw;
  Route r = find_route(t, 0, 8, sm);
  CHECK(r.kind == RouteKind::network);
  // Network switches are non-blocking: no crossbar resource of their own.
  CHECK(describe(t, r.path) ==
        "n0.gpu0 -pcie4-x16-> n0.pcie0 [n0.pcie0] n0.pcie0 -pcie4-x16-> n0.mlx5_0 n0.mlx5_0 -ib-hdr-> fabric.leaf0 "
        "fabric.leaf0 -ib-hdr-> n1.mlx5_0 n1.mlx5_0 -pcie4-x16-> n1.pcie0 [n1.pcie0] n1.pcie0 -pcie4-x16-> n1.gpu0");
  RouteOptions bounce = sm;
  bounce.gpu_direct = false;
  std::string text = describe(t, find_route(t, 0, 8, bounce).path);
  CHECK(text.find("[n0.cpu0 memory]") != std::string::npos);
  CHECK(text.find("[n1.cpu0 memory]") != std::string::npos);
  // GPU0 and GPU1 share NIC0 and NIC1 at the same distance: they take one each.
  CHECK(nearest_nic(t, 0) == 0);
  CHECK(nearest_nic(t, 1) == 1);
}

TEST_CASE("cluster: the GPU limit is what the machine's memory holds at 16 KiB a GPU (issue 51)") {
  const double gib = 1024.0 * 1024 * 1024;
  // 131,072 DGX H100 = 1,048,576 GPUs x 16 KiB = 16 GiB: fits 24 GiB, not 8 GiB. 8 GiB holds
  // 8 GiB / 16 KiB = 524,288 GPUs, 65,536 servers of 8.
  CHECK(cluster_too_big(131072, 8, 35, "dgx-h100", 24 * gib).empty());
  CHECK(cluster_too_big(131072, 8, 35, "dgx-h100", 8 * gib) ==
        "131072 servers x 8 GPUs (dgx-h100) = 1048576 GPUs would need about 16.0 GiB (16 KiB per GPU), more than this "
        "machine's 8.0 GiB of memory: give at most 65536 servers");
  // The device limit comes first and is the same on every machine: 300,000 x 28 = 8.4 million
  // devices > 2^23 = 8,388,608, which holds 299,593 such servers.
  CHECK(cluster_too_big(300000, 8, 28, "dgx-a100", 1e18) ==
        "300000 servers of 28 devices (dgx-a100) make 8400000 devices; a cluster may have at most 8388608 (299593 of "
        "these servers)");
  // Memory unknown (0): only the device limit.
  CHECK(cluster_too_big(200000, 8, 35, "dgx-h100", 0).empty());
}
