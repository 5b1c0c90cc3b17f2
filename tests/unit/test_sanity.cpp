// Physical sanity of collective predictions on every bundled server: busbw within what links
// carry, time above the analytical lower bound, more bandwidth never slower, bytes conserved.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {


// What one GPU can push out at most under NCCL: the sum of its links' capacities.
double out_capacity_Bps(const Topology& t, int gpu) {
  double total = 0;
  Vertex v = t.gpu(gpu);
  for (Edge e : boost::make_iterator_range(boost::out_edges(v, t.graph()))) {
    const Link& link = t.link(e);
    Hop hop;
    hop.kind = Hop::Kind::link;
    hop.links.push_back(LinkUse{link.index, link.a == v});
    total += *hop_capacity_Bps(t, hop, TransferMode::sm);
  }
  return total;
}

// Records the schedules a communicator asks for, runs them nowhere.
class Recorder : public Runner {
 public:
  std::vector<Schedule> seen;
  std::vector<OpTiming> run(const Schedule& s) override {
    seen.push_back(s);
    return std::vector<OpTiming>(s.ops.size(), OpTiming{0, 1});
  }
};

}  // namespace

TEST_CASE("sanity: busbw within the links, time above the lower bound, on every server") {
  Simulator sim;
  sim.check_invariants(true);  // every run: lower bounds, bytes conserved, links within capacity
  const std::vector<std::string> names = {"dgx1-p100", "dgx1-v100", "dgx2", "dgx-a100", "hgx-a800",
                                          "dgx-h100", "hgx-h800", "dgx-station-v100", "pcie-8x-rtx4090"};
  std::vector<Topology> topologies;
  for (const auto& name : names) topologies.push_back(bundled(name));
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<PlatformRunner> runners;
  std::vector<std::vector<CollRequest>> requests(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    comms.push_back(std::make_unique<Communicator>(topologies[i], all_gpus(topologies[i]), nccl()));
    for (CollOp op : all_ops())
      for (double size : {8.0, 1048576.0, kGiB}) {
        CollRequest r;
        r.op = op;
        r.size_B = size;
        requests[i].push_back(r);
      }
    RouteOptions options;
    options.mode = TransferMode::sm;
    runners.emplace_back(sim, sim.add_platform(topologies[i], options, comms[i]->needs(requests[i])));
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Topology& t = topologies[i];
    double out = out_capacity_Bps(t, 0);
    for (int g = 1; g < t.gpu_count(); ++g) out = std::min(out, out_capacity_Bps(t, g));
    for (const CollRequest& req : requests[i]) {
      CollResult r = comms[i]->run(req, runners[i]);
      INFO(names[i] << " " << to_string(req.op) << " " << req.size_B << " " << to_string(r.algo) << "/"
                    << to_string(r.proto));
      CHECK(r.time_s > 0);
      if (r.size.size_B == 0) continue;
      // Every GPU sends at least busbw x time bytes over its own links (NVLS reduces in the
      // switches and is exempt: its busbw counts bytes the GPUs never send).
      if (r.algo != Algo::nvls) CHECK(r.busbw_Bps <= out * (1 + 1e-9));
      // Lower bound: NCCL's base latency, and the bytes one GPU must send at full link rate.
      double must_send = r.busbw_Bps > 0 ? r.size.size_B * busbw_factor(req.op, t.gpu_count()) : 0;
      if (r.algo != Algo::nvls) CHECK(r.time_s >= must_send / out * (1 - 1e-9));
    }
  }
}

TEST_CASE("sanity: more bandwidth never makes a collective slower") {
  // The same DGX-1 V100 with every link 50% faster: no operation at any size takes longer.
  TopologySpec spec = load_topology_spec(data_path("topologies/dgx1-v100.json"));
  Topology base = Topology::build(spec, catalog());
  for (LinkSpec& link : spec.links) link.bandwidth_Bps = catalog().link(link.model, {}).bandwidth_Bps * 1.5;
  Topology faster = Topology::build(spec, catalog());
  Simulator sim;
  sim.check_invariants(true);  // every run: lower bounds, bytes conserved, links within capacity
  Communicator slow_comm(base, all_gpus(base), nccl()), fast_comm(faster, all_gpus(faster), nccl());
  std::vector<CollRequest> requests;
  for (CollOp op : all_ops())
    for (double size : {8.0, 65536.0, 16777216.0, kGiB}) {
      CollRequest r;
      r.op = op;
      r.size_B = size;
      requests.push_back(r);
    }
  RouteOptions options;
  options.mode = TransferMode::sm;
  PlatformRunner slow(sim, sim.add_platform(base, options, slow_comm.needs(requests)));
  PlatformRunner fast(sim, sim.add_platform(faster, options, fast_comm.needs(requests)));
  for (const CollRequest& r : requests) {
    INFO(to_string(r.op) << " " << r.size_B);
    CHECK(fast_comm.run(r, fast).time_s <= slow_comm.run(r, slow).time_s * (1 + 1e-9));
  }
}

TEST_CASE("sanity: the per-step reference sends what it receives and moves 2(n-1) S in allreduce") {
  Topology t = bundled("dgx1-v100");
  Communicator comm(t, all_gpus(t), nccl());
  CollRequest r;
  r.op = CollOp::allreduce;
  r.size_B = 8 * 1048576.0;
  r.model = CollModel::steps;
  r.algo = Algo::ring;
  r.proto = Proto::simple;
  comm.needs({r});
  Recorder recorder;
  comm.run(r, recorder);
  REQUIRE(recorder.seen.size() == 1);
  std::vector<double> sent(8, 0), received(8, 0);
  double total = 0;
  for (const Op& op : recorder.seen[0].ops)
    if (op.kind == Op::Kind::transfer) {
      sent[op.src_gpu] += op.size_B;
      received[op.dst_gpu] += op.size_B;
      total += op.size_B;
    }
  for (int g = 0; g < 8; ++g) CHECK(sent[g] == Approx(received[g]));
  // Ring allreduce: every rank sends 2(n-1)/n of the buffer, 2(n-1) S in all.
  // (each step's bytes are rounded to whole bytes: 48 transfers of 174762.67 B per ring order)
  CHECK(total == Approx(2 * 7 * r.size_B).epsilon(1e-5));
}
