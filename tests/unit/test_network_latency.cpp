// The network's latency path: every step across servers costs NCCL's kernel-side network hop
// plus the rail NIC's per-message cost, and a Simple receive by GPUDirect RDMA its flush where the
// NCCL line flushes on those GPUs. Times are differences of fixed terms (Candidate::latency_s)
// derived by hand, so that one-server terms (bases, NVLink hops) cancel.
#include <catch2/catch.hpp>

#include <memory>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::vector<int> net_ranks(int n) {
  std::vector<int> gpus(n);
  for (int i = 0; i < n; ++i) gpus[i] = i;
  return gpus;
}

// Forced 8-byte allreduces on several servers, all declared before the engine runs any (SimGrid
// takes every platform before the first run); latency_s(i) is the i-th case's fixed terms.
class FixedTerms {
 public:
  int add(const Topology& t, int gpus, Algo algo, Proto proto, const NcclVersion& version, bool gpu_direct = true) {
    RouteOptions routes;
    routes.gpu_direct = gpu_direct;
    comms_.push_back(std::make_unique<Communicator>(t, net_ranks(gpus), version, routes));
    CollRequest r;
    r.op = CollOp::allreduce;
    r.size_B = 8;
    r.algo = algo;
    r.proto = proto;
    requests_.push_back(r);
    runners_.emplace_back(sim_, sim_.add_platform(t, comms_.back()->routes(), comms_.back()->needs({r})));
    return static_cast<int>(requests_.size()) - 1;
  }
  double latency_s(int i) {
    CollResult result = comms_[i]->run(requests_[i], runners_[i]);
    for (const Candidate& c : result.candidates)
      if (c.algo == requests_[i].algo && c.proto == requests_[i].proto) return c.latency_s;
    FAIL("no such candidate");
    return 0;
  }

 private:
  Simulator sim_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::vector<CollRequest> requests_;
  std::vector<PlatformRunner> runners_;
};

}  // namespace

TEST_CASE("network latency: NIC models carry their transport and per-message costs") {
  const NicModel& ib = catalog().nic("connectx6-hdr", {});
  CHECK(ib.transport == "ib_verbs");
  CHECK(ib.message_latency_s == Approx(4e-6));
  CHECK(ib.flush_latency_s == Approx(2e-6));
  const NicModel& efa = catalog().nic("aws-efa-4x100g", {});
  CHECK(efa.transport == "efa");
  CHECK(efa.message_latency_s == Approx(75e-6));  // aws-ofi-nccl's p5 figure
  CHECK(catalog().nic("aws-efa-2x200g", {}).message_latency_s == Approx(35e-6));
  CHECK(catalog().nic("connectx7-400gbe", {}).transport == "roce");
}

TEST_CASE("network latency: a tree's network steps cost the NIC's message latency") {
  // 2 x DGX A100 (ConnectX-6 HDR, 4 us a message), tree over 2 servers: height log2(2) = 1, so
  // 2 x 1 network steps. Over 100G EFA (75 us a message) instead, the fixed terms grow by
  // 2 x (75 - 4) = 142 us; nothing inside the servers changes.
  Topology hdr = replicated("dgx-a100", 2);
  Topology efa = replicated("dgx-a100", 2, "aws-efa-100g");
  FixedTerms f;
  int on_hdr = f.add(hdr, 16, Algo::tree, Proto::ll, nccl());
  int on_efa = f.add(efa, 16, Algo::tree, Proto::ll, nccl());
  CHECK(f.latency_s(on_efa) - f.latency_s(on_hdr) == Approx(142e-6).epsilon(1e-9));
}

TEST_CASE("network latency: the GPUDirect flush of Simple receives, per GPU and NCCL line") {
  // A100 (compute capability 8.0) flushes in every line: with GPUDirect the 2 network steps of
  // the 2-server tree each wait for a 2 us flush, 4 us in all; without GPUDirect (host buffers)
  // there is nothing to flush. LL never flushes.
  Topology a100 = replicated("dgx-a100", 2);
  Topology h100 = replicated("dgx-h100", 2);
  FixedTerms f;
  int gdr = f.add(a100, 16, Algo::tree, Proto::simple, nccl(), true);
  int host = f.add(a100, 16, Algo::tree, Proto::simple, nccl(), false);
  int ll_gdr = f.add(a100, 16, Algo::tree, Proto::ll, nccl(), true);
  int ll_host = f.add(a100, 16, Algo::tree, Proto::ll, nccl(), false);
  int v218 = f.add(h100, 16, Algo::tree, Proto::simple, catalog().nccl_version("2.18"));
  int v228 = f.add(h100, 16, Algo::tree, Proto::simple, catalog().nccl_version("2.28"));
  CHECK(f.latency_s(gdr) - f.latency_s(host) == Approx(4e-6).epsilon(1e-9));
  CHECK(f.latency_s(ll_gdr) == Approx(f.latency_s(ll_host)).epsilon(1e-12));
  // H100 (9.0): NCCL 2.18 still flushes (NCCL_NET_FORCE_FLUSH defaults to 1), 2.21 and later
  // do not (net_flush_below_cc 90): 2 steps x 2 us = 4 us between the lines.
  CHECK(f.latency_s(v218) - f.latency_s(v228) == Approx(4e-6).epsilon(1e-9));
}

TEST_CASE("network latency: ring steps across servers cost the NIC's message latency") {
  // Ring allreduce on 2 x 8 ranks: 2(n-1) = 30 steps, a share m/n = 2/16 across the network:
  // 3.75 network steps. EFA (75 us) against HDR (4 us): 3.75 x 71 = 266.25 us more.
  Topology hdr = replicated("dgx-a100", 2);
  Topology efa = replicated("dgx-a100", 2, "aws-efa-100g");
  FixedTerms f;
  int on_hdr = f.add(hdr, 16, Algo::ring, Proto::ll, nccl());
  int on_efa = f.add(efa, 16, Algo::ring, Proto::ll, nccl());
  CHECK(f.latency_s(on_efa) - f.latency_s(on_hdr) == Approx(266.25e-6).epsilon(1e-9));
}
