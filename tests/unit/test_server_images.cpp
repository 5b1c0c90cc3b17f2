// A cluster described once (issue 51): servers built alike are translated copies of a model
// server (Topology::server_image), and a RouteTable finds each route inside a server and each
// GPU-NIC segment once per model, translating it to the copies. These tests check which servers
// are copies, and that the translated routes are the searched ones: the same resources, latency
// and bottleneck route by route, and the same collective times (1e-9 relative) and bound where
// symmetry breaks (a failed NIC, a straggler, a degraded cable, ECMP, no GPUDirect). Each
// TEST_CASE builds its own Simulator (one engine per process).
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "routing/route_table.hpp"
#include "topology/faults.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

Topology faulty_cluster(TopologySpec spec, const Faults& faults) {
  apply_faults(spec, faults);
  return Topology::build(spec, catalog());
}

RouteOptions without_templates(RouteOptions options) {
  options.server_templates = false;
  return options;
}

// Every GPU pair's route, and every GPU-to-GPU route through each pair of rail NICs, equal with
// and without templates: kind, latency, bottleneck, and resources by name in crossing order.
void check_routes_equal(const Topology& t, const RouteOptions& options) {
  RouteTable described(t, options), searched(t, without_templates(options));
  auto same = [&](const RouteTable::Entry& a, const RouteTable::Entry& b) {
    CHECK(a.kind == b.kind);
    CHECK(a.latency_s == b.latency_s);
    CHECK(a.bottleneck_Bps == b.bottleneck_Bps);
    REQUIRE(a.uses.size() == b.uses.size());
    for (std::size_t i = 0; i < a.uses.size(); ++i) {
      CHECK(described.name(described.key(a.uses[i])) == searched.name(searched.key(b.uses[i])));
      CHECK(a.uses[i].up == b.uses[i].up);
    }
  };
  for (int s = 0; s < t.gpu_count(); ++s)
    for (int d = 0; d < t.gpu_count(); ++d) {
      if (s == d) continue;
      INFO(t.device(t.gpu(s)).id << " -> " << t.device(t.gpu(d)).id);
      same(described.route(s, d), searched.route(s, d));
      int a = t.node_of(s), b = t.node_of(d);
      if (a == b) continue;
      const auto& from = t.server_nics(a);
      const auto& to = t.server_nics(b);
      for (std::size_t r = 0; r < std::min(from.size(), to.size()); ++r) {
        int src_nic = t.device(from[r]).nic_index, dst_nic = t.device(to[r]).nic_index;
        same(described.route(s, d, src_nic, dst_nic), searched.route(s, d, src_nic, dst_nic));
      }
    }
}

// The same requests on two platforms of one engine: templates on and off.
void check_runs_equal(const Topology& t, const RouteOptions& options, const std::vector<CollRequest>& requests) {
  Simulator sim;
  Communicator described(t, all_gpus(t), nccl(), options);
  Communicator searched(t, all_gpus(t), nccl(), without_templates(options));
  PlatformRunner a(sim, sim.add_platform(t, described.routes(), described.needs(requests)));
  PlatformRunner b(sim, sim.add_platform(t, searched.routes(), searched.needs(requests)));
  for (const CollRequest& request : requests) {
    CollResult x = described.run(request, a);
    CollResult y = searched.run(request, b);
    INFO(t.name() << " " << to_string(request.op) << " " << request.size_B << " B");
    CHECK(x.algo == y.algo);
    CHECK(x.proto == y.proto);
    CHECK(x.time_s == Approx(y.time_s).epsilon(1e-9));
    CHECK(x.bound == y.bound);
  }
}

std::vector<CollRequest> requests() {
  std::vector<CollRequest> out;
  for (CollOp op : {CollOp::allreduce, CollOp::allgather, CollOp::alltoall})
    for (double size_B : {65536.0, 256.0 * kMiB}) {
      CollRequest r;
      r.op = op;
      r.size_B = size_B;
      out.push_back(r);
    }
  CollRequest ring;
  ring.size_B = 1 * kGiB;
  ring.algo = Algo::ring;
  ring.proto = Proto::simple;
  out.push_back(ring);
  CollRequest tree = ring;
  tree.algo = Algo::tree;
  out.push_back(tree);
  return out;
}

}  // namespace

TEST_CASE("server images: servers built alike are copies of the first, shifted by whole servers") {
  // dgx-a100 replicated: each server's devices and own links lie together, so server k is server
  // 0 shifted by k servers' devices and k servers' own links.
  Topology t = replicated("dgx-a100", 3);
  const Topology::ServerImage* zero = t.server_image(0);
  const Topology::ServerImage* two = t.server_image(2);
  REQUIRE(zero != nullptr);
  REQUIRE(two != nullptr);
  CHECK(zero->model == 0);
  CHECK(zero->vertex_shift == 0);
  CHECK(two->model == 0);
  Vertex gpu0 = t.gpu(0), gpu16 = t.gpu(16);
  CHECK(static_cast<std::ptrdiff_t>(gpu16) - static_cast<std::ptrdiff_t>(gpu0) == two->vertex_shift);
  CHECK(t.in_server(2, gpu16));
  CHECK_FALSE(t.in_server(1, gpu16));
  CHECK(t.server_image(-1) == nullptr);
  CHECK(t.server_image(3) == nullptr);
}

TEST_CASE("server images: a failed NIC, a straggler or a degraded cable makes a server its own model") {
  Faults faults;
  faults.failed = {"n1.mlx5_3"};
  faults.stragglers = {{"n2.gpu5", 1.5}};
  faults.degraded = {{"n3.mlx5_0-fabric.leaf0", 0.5}};
  Topology t = faulty_cluster(replicated_spec("dgx-a100", 5), faults);
  CHECK(t.server_image(1)->model == 1);
  CHECK(t.server_image(2)->model == 2);
  CHECK(t.server_image(3)->model == 3);
  // Server 4 is a copy of server 0 again, though server 1 has one device fewer: its shift is
  // whatever lies between them.
  CHECK(t.server_image(4)->model == 0);
  CHECK(t.server_image(4)->vertex_shift ==
        static_cast<std::ptrdiff_t>(t.gpu(32)) - static_cast<std::ptrdiff_t>(t.gpu(0)));
}

TEST_CASE("server images: translated routes are the searched ones, route by route") {
  Faults faults;
  faults.failed = {"n1.mlx5_3"};
  faults.stragglers = {{"n2.gpu5", 1.5}};
  Topology t = faulty_cluster(replicated_spec("dgx-a100", 4), faults);
  check_routes_equal(t, RouteOptions{});
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  ecmp.seed = 7;
  check_routes_equal(t, ecmp);
  RouteOptions bounce;  // no GPUDirect: segments through host memory
  bounce.gpu_direct = false;
  check_routes_equal(t, bounce);
  RouteOptions sm;
  sm.mode = TransferMode::sm;
  check_routes_equal(t, sm);
}

TEST_CASE("server images: collectives on the described cluster equal the searched one where symmetry breaks") {
  Faults faults;
  faults.failed = {"n1.mlx5_3"};
  faults.stragglers = {{"n2.gpu5", 1.5}};
  Topology t = faulty_cluster(replicated_spec("dgx-h100", 4), faults);
  check_runs_equal(t, RouteOptions{}, requests());
  RouteOptions ecmp;
  ecmp.routing = RoutingMode::ecmp;
  ecmp.seed = 3;
  check_runs_equal(t, ecmp, requests());
}

TEST_CASE("server images: a PCIe-only server's host routes translate too") {
  Topology t = replicated("pcie-8x-l40s", 3);
  CHECK(t.server_image(2)->model == 0);
  check_routes_equal(t, RouteOptions{});
  check_runs_equal(t, RouteOptions{}, requests());
}
