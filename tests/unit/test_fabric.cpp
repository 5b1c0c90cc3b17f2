// Fabrics at scale and routing modes: three-tier fat-trees, rail-only and multi-plane networks,
// and how ideal, ECMP and adaptive routing spread flows over equal-cost links, with engine
// times derived by hand. Every TEST_CASE runs in its own process (SimGrid: one engine each).
#include <catch2/catch.hpp>

#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "routing/route.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

constexpr double kUplink_Bps = 10e9;  // every network link in the fixture, one direction
constexpr double kFlow_B = 1e9;

// Two servers, each two P100s with a NIC beside each on its own PCIe switch; server k's NICs on
// leaf k; both leaves under a core by a bundle of two links. Network links 10 GB/s, PCIe
// 100 GB/s, efficiency 1, no link latency: a flow alone moves at 10 GB/s (its NIC's link).
//
//   n0.gpu0 - n0.pcie0 - n0.nic0 \                      / n1.nic0 - n1.pcie0 - n1.gpu0
//                                 leaf0 =2= core =2= leaf1
//   n0.gpu1 - n0.pcie1 - n0.nic1 /                      \ n1.nic1 - n1.pcie1 - n1.gpu1
Topology two_leaves() {
  TopologySpec spec;
  spec.file = "two-leaves";
  spec.name = "two-leaves";
  spec.description = "two servers on two leaves under a core";
  spec.nodes = 2;
  auto device = [&](const std::string& id, DeviceType type, const std::string& model, int node) {
    DeviceSpec d;
    d.id = id;
    d.type = type;
    d.model = model;
    d.node = node;
    spec.devices.push_back(d);
  };
  auto link = [&](const std::string& a, const std::string& b, const std::string& model, double bandwidth_Bps, int count) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.model = model;
    l.count = count;
    l.bandwidth_Bps = bandwidth_Bps;
    l.latency_s = 0.0;
    l.efficiency = 1.0;
    spec.links.push_back(l);
  };
  for (int k = 0; k < 2; ++k) {
    std::string n = "n" + std::to_string(k) + ".";
    for (int i = 0; i < 2; ++i) device(n + "gpu" + std::to_string(i), DeviceType::gpu, "p100", k);
    device(n + "cpu0", DeviceType::cpu, "xeon-e5-2698v4", k);
    for (int i = 0; i < 2; ++i) {
      std::string s = std::to_string(i);
      device(n + "pcie" + s, DeviceType::pcie_switch, "pcie3-switch", k);
      device(n + "nic" + s, DeviceType::nic, "connectx4-edr", k);
      link(n + "gpu" + s, n + "pcie" + s, "pcie3-x16", 100e9, 1);
      link(n + "nic" + s, n + "pcie" + s, "pcie3-x16", 100e9, 1);
      link(n + "pcie" + s, n + "cpu0", "pcie3-x16", 100e9, 1);
    }
  }
  device("leaf0", DeviceType::network_switch, "sb7800", -1);
  device("leaf1", DeviceType::network_switch, "sb7800", -1);
  device("core", DeviceType::network_switch, "fabric-core", -1);
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 2; ++i)
      link("n" + std::to_string(k) + ".nic" + std::to_string(i), "leaf" + std::to_string(k), "ib-edr", kUplink_Bps, 1);
  link("leaf0", "core", "ib-edr", kUplink_Bps, 2);
  link("leaf1", "core", "ib-edr", kUplink_Bps, 2);
  return Topology::build(spec, catalog());
}

// The member of the leaf0 -> core bundle a route takes (-1: the whole bundle).
int uplink_member(const Topology& t, const Route& r) {
  for (const Hop& hop : r.path.hops)
    for (const LinkUse& use : hop.links)
      if (t.device(t.link(use.link).a).id == "leaf0" && t.device(t.link(use.link).b).id == "core") return use.member;
  FAIL("the route does not cross leaf0 -> core");
  return -2;
}

// Two flows of kFlow_B at once: n0.gpu0 -> n1.gpu0 (NIC 0 -> 2) and n0.gpu1 -> n1.gpu1 (NIC 1 -> 3).
// Links have no latency, but each route passes two PCIe switches (pcie3-switch, 0.15 us each):
// 0.3 us, the same for both flows, added to each time.
double latency_s(const Topology& t) { return path_latency_s(t, find_route(t, 0, 2, RouteOptions{}).path); }

std::vector<OpTiming> two_flows(const Topology& t, const RouteOptions& options) {
  Simulator sim;
  PlatformNeeds needs;
  needs.all_pairs = false;
  needs.pairs = {{0, 2}, {1, 3}};
  std::size_t p = sim.add_platform(t, options, needs);
  Schedule s;
  s.transfer(0, 2, kFlow_B);
  s.transfer(1, 3, kFlow_B);
  return sim.run(p, s);
}

}  // namespace

TEST_CASE("routing modes: the fixture's flows leave by different NICs") {
  Topology t = two_leaves();
  CHECK(nearest_nic(t, 0) == 0);
  CHECK(nearest_nic(t, 1) == 1);
  CHECK(nearest_nic(t, 2) == 2);
  CHECK(nearest_nic(t, 3) == 3);
  // Ideal: both bundle members at once, one resource of 2 x 10 GB/s.
  Route r = find_route(t, 0, 2, RouteOptions{});
  CHECK(uplink_member(t, r) == -1);
  CHECK(describe(t, r.path).find("leaf0 -ib-edrx2-> core core -ib-edrx2-> leaf1") != std::string::npos);
}

TEST_CASE("routing modes: ECMP hashes two flows onto one uplink and each gets half of it") {
  Topology t = two_leaves();
  // The first seed whose hash puts both flows on the same member of leaf0 -> core (stage 1 of
  // nic -> leaf0 -> core -> leaf1 -> nic): ecmp_hash(src NIC, dst NIC, seed, 1) % 2 equal.
  unsigned long long seed = 0;
  while (ecmp_hash(0, 2, seed, 1) % 2 != ecmp_hash(1, 3, seed, 1) % 2) ++seed;
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  ecmp.seed = seed;
  int a = uplink_member(t, find_route(t, 0, 2, ecmp)), b = uplink_member(t, find_route(t, 1, 3, ecmp));
  CHECK(a >= 0);
  CHECK(a == b);
  CHECK(a == static_cast<int>(ecmp_hash(0, 2, seed, 1) % 2));
  auto timings = two_flows(t, ecmp);
  // One member link of 10 GB/s shared by two flows: 5 GB/s each, 1e9 B / 5e9 B/s = 0.2 s (no
  // latency; every other link of each route carries one flow at >= 10 GB/s).
  CHECK(timings[0].finish_s == Approx(0.2 + latency_s(t)).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.2 + latency_s(t)).epsilon(1e-9));
}

TEST_CASE("routing modes: ECMP flows hashed apart do not share") {
  Topology t = two_leaves();
  // A seed whose hashes part the flows on both bundles (stages 1 and 2).
  unsigned long long seed = 0;
  while (ecmp_hash(0, 2, seed, 1) % 2 == ecmp_hash(1, 3, seed, 1) % 2 ||
         ecmp_hash(0, 2, seed, 2) % 2 == ecmp_hash(1, 3, seed, 2) % 2)
    ++seed;
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  ecmp.seed = seed;
  auto timings = two_flows(t, ecmp);
  // Each flow alone on its links: 1e9 B / 10e9 B/s = 0.1 s.
  CHECK(timings[0].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
}

TEST_CASE("routing modes: adaptive puts the second flow on the idle uplink") {
  Topology t = two_leaves();
  RouteOptions adaptive;
  adaptive.routing = RoutingMode::adaptive;
  adaptive.placement = std::make_shared<FlowPlacement>();
  // The first flow takes member 0 (no flows anywhere, ties to the lowest); the second finds
  // member 0 carrying one flow and member 1 none.
  CHECK(uplink_member(t, find_route(t, 0, 2, adaptive)) == 0);
  CHECK(uplink_member(t, find_route(t, 1, 3, adaptive)) == 1);
  // Asked again, a NIC pair keeps its placement.
  CHECK(uplink_member(t, find_route(t, 0, 2, adaptive)) == 0);
  adaptive.placement = std::make_shared<FlowPlacement>();
  auto timings = two_flows(t, adaptive);
  // Each flow has a 10 GB/s member of its own: 1e9 B / 10e9 B/s = 0.1 s.
  CHECK(timings[0].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
}

TEST_CASE("routing modes: ideal splits both flows over the bundle") {
  Topology t = two_leaves();
  auto timings = two_flows(t, RouteOptions{});
  // Both flows on one 2 x 10 GB/s resource: 10 GB/s each, which their own NIC links also allow:
  // 1e9 B / 10e9 B/s = 0.1 s.
  CHECK(timings[0].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
  CHECK(timings[1].finish_s == Approx(0.1 + latency_s(t)).epsilon(1e-9));
}

namespace {

// `nodes` DGX-1 (4 EDR NICs each, one per PCIe switch) under `fabric`.
Topology dgx1_cluster(int nodes, const FabricSpec& fabric) {
  ClusterSpec cluster;
  cluster.file = "test-cluster.json";
  cluster.name = "test-cluster";
  cluster.nodes = nodes;
  cluster.fabric = fabric;
  cluster.fabric.where = SourceRef{"test-cluster.json", "/fabric"};
  cluster.where = SourceRef{"test-cluster.json", ""};
  TopologySpec node = load_topology_spec(data_path("topologies/dgx1-v100.json"));
  return Topology::build(expand_cluster(cluster, node, catalog()), catalog());
}

int switches_named(const Topology& t, const std::string& prefix) {
  int n = 0;
  for (Vertex v : boost::make_iterator_range(boost::vertices(t.graph())))
    n += t.device(v).type == DeviceType::network_switch && t.device(v).id.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("three-tier fat-tree: pods of leaves and spines under a core") {
  FabricSpec f;
  f.kind = "rail";
  f.switch_model = "sb7800";
  f.tiers = 3;
  f.spines_per_pod = 2;
  f.leaves_per_pod = 2;
  Topology t = dgx1_cluster(10, f);
  // 36-port SB7800 at 1:1: 18 down, 18 up. 40 NIC ports do not fit one switch; each of the 4
  // rails has 10: one leaf per rail (4 leaves); pods of 2 leaves (2 pods), 2 spines each (4), every leaf sending 18 / 2 = 9
  // links to each spine of its pod; each spine takes 2 x 9 = 18 down and sends ceil(18 / 1) = 18
  // up to the core.
  CHECK(switches_named(t, "fabric.leaf") == 4);
  CHECK(switches_named(t, "fabric.spine") == 4);
  CHECK(switches_named(t, "fabric.core") == 1);
  CHECK(t.device(*t.find("fabric.leaf0")).tier == 1);
  CHECK(t.device(*t.find("fabric.spine3")).tier == 2);
  CHECK(t.device(*t.find("fabric.core")).tier == 3);
  // n0.gpu0 (NIC 0, rail 0, pod 0) to n1.gpu4 (NIC 2, rail 2, pod 1): up through both spines
  // of pod 0, the core, down through both spines of pod 1. Ideal stripes each stage.
  Route r = find_route(t, 0, 12, RouteOptions{});
  CHECK(describe(t, r.path).find("n0.mlx5_0 -ib-edr-> fabric.leaf0 fabric.leaf0 -ib-edrx18-> fabric.spine0..1 "
                                 "fabric.spine0..1 -ib-edrx36-> fabric.core fabric.core -ib-edrx36-> fabric.spine2..3 "
                                 "fabric.spine2..3 -ib-edrx18-> fabric.leaf2 fabric.leaf2 -ib-edr-> n1.mlx5_2") !=
        std::string::npos);
  // ECMP: one spine and one member link per stage.
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  std::string text = describe(t, find_route(t, 0, 12, ecmp).path);
  CHECK(text.find("fabric.leaf0 -ib-edr#") != std::string::npos);
  CHECK(text.find("..") == std::string::npos);
}

TEST_CASE("three-tier fat-tree: impossible shapes name the key") {
  FabricSpec f;
  f.kind = "rail";
  f.switch_model = "sb7800";
  f.tiers = 3;
  f.spines_per_pod = 4;  // 18 up ports are not 4 equal bundles
  CHECK(input_error([&] { dgx1_cluster(10, f); }) ==
        "test-cluster.json:/fabric/spines_per_pod: 4 spines per pod do not divide the 18 up ports of a sb7800 leaf; give a "
        "divisor of 18");
  f.spines_per_pod = 2;
  f.leaves_per_pod = 3;  // a spine has 18 down ports, 9 per leaf: 2 leaves
  CHECK(input_error([&] { dgx1_cluster(10, f); }).find("/fabric/leaves_per_pod: 3 leaves per pod need 27 down ports") !=
        std::string::npos);
  f.leaves_per_pod = 0;
  f.planes = 3;
  CHECK(input_error([&] { dgx1_cluster(10, f); }) ==
        "test-cluster.json:/fabric/planes: 3 planes do not divide the 4 NICs of each server; give a divisor of 4");
}

TEST_CASE("rail-only: rails are separate networks; PXN crosses NVLink to the right rail") {
  FabricSpec f;
  f.kind = "rail-only";
  f.switch_model = "sb7800";
  Topology t = dgx1_cluster(2, f);
  // One network per rail (4), each one leaf for its 2 NIC ports.
  CHECK(switches_named(t, "fabric.plane") == 4);
  CHECK(t.device(*t.find("n0.mlx5_0")).island != t.device(*t.find("n0.mlx5_2")).island);
  CHECK(t.device(*t.find("n0.mlx5_2")).island == t.device(*t.find("n1.mlx5_2")).island);
  // n0.gpu0 (beside NIC 0) to n1.gpu4 (beside NIC 2): over NVLink to n0.gpu4, beside n0's NIC 2.
  Route r = find_route(t, 0, 12, RouteOptions{});
  CHECK(r.kind == RouteKind::network);
  std::string text = describe(t, r.path);
  CHECK(text.rfind("n0.gpu0 -nvlink2", 0) == 0);
  CHECK(text.find("-> n0.gpu4 n0.gpu4 -pcie3-x16-> ") != std::string::npos);
  CHECK(text.find("fabric.plane2.leaf0") != std::string::npos);
  // DGX-1's GPU0 has no NVLink to GPU6 or GPU7, the GPUs beside NIC 3: no path.
  CHECK(input_error([&] { find_route(t, 0, 14, RouteOptions{}); }) ==
        "test-cluster.json: n0.gpu0 cannot reach n1.gpu6: their nearest NICs are on separate networks (rail-only or "
        "multi-plane fabric) and no NVLink joins n0.gpu0 to n0.gpu6 (beside n0.mlx5_3) or n0.gpu7 (beside n0.mlx5_3)");
}

TEST_CASE("multi-plane: NIC i on plane i % planes, each plane its own tree") {
  FabricSpec f;
  f.kind = "fat-tree";
  f.switch_model = "sb7800";
  f.planes = 2;
  Topology t = dgx1_cluster(2, f);
  CHECK(switches_named(t, "fabric.plane0.") == 1);
  CHECK(switches_named(t, "fabric.plane1.") == 1);
  CHECK(t.device(*t.find("n0.mlx5_0")).island == t.device(*t.find("n1.mlx5_2")).island);
  CHECK(t.device(*t.find("n0.mlx5_0")).island != t.device(*t.find("n1.mlx5_1")).island);
}
