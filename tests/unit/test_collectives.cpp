// Collectives: nccl-tests arithmetic, ring search, hand-derived times, the flow model against
// the per-step reference, and physical sanity. Engine tests: one SimGrid engine per process,
// so every TEST_CASE that simulates builds its own Simulator.
#include <catch2/catch.hpp>

#include "collectives/communicator.hpp"
#include "engine/simulator.hpp"
#include "helpers.hpp"
#include "util/units.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::vector<int> first(int n) {
  std::vector<int> gpus(n);
  for (int i = 0; i < n; ++i) gpus[i] = i;
  return gpus;
}

CollRequest request(CollOp op, double size_B) {
  CollRequest r;
  r.op = op;
  r.size_B = size_B;
  return r;
}

// Runs requests on one communicator in a fresh platform.
std::vector<CollResult> run_all(Simulator& sim, const Topology& t, Communicator& comm,
                                const std::vector<CollRequest>& requests) {
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs(requests)));
  std::vector<CollResult> out;
  for (const auto& r : requests) out.push_back(comm.run(r, runner));
  return out;
}

// Every ring visits each rank once, and crosses each arc no more often than capacity allows.
void check_rings(Communicator& comm) {
  const RingSet& rings = comm.rings();
  for (const auto& order : rings.orders) {
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == first(comm.ranks()));
  }
}

}  // namespace

TEST_CASE("collectives: nccl-tests sizes, counts and bus-bandwidth factors") {
  DataType f = parse_dtype("float");
  CHECK(f.size_B == 4);
  CHECK(parse_dtype("bf16").name == "bfloat16");
  CHECK_THROWS_WITH(parse_dtype("float128"),
                    "unknown data type 'float128'; known: bfloat16, double, f8e4m3, f8e5m2, "
                    "float, half, int32, int64, int8, uint32, uint64, uint8");
  CHECK(busbw_factor(CollOp::allreduce, 8) == Approx(14.0 / 8));
  CHECK(busbw_factor(CollOp::allgather, 8) == Approx(7.0 / 8));
  CHECK(busbw_factor(CollOp::broadcast, 8) == 1);
  // allgather of 1000 bytes of floats on 8 ranks: 250 elements, 31 per rank, 31 x 8 x 4 = 992 B.
  CollSize s = nccl_tests_size(CollOp::allgather, 1000, f, 8);
  CHECK(s.count == 31);
  CHECK(s.size_B == 992);
  CHECK(nccl_tests_size(CollOp::allreduce, 1000, f, 8).count == 250);
  CHECK(parse_op("all_reduce") == CollOp::allreduce);
  CHECK_THROWS_WITH(parse_op("allreduse"), "unknown operation 'allreduse' (did you mean 'allreduce'?); known: allgather, "
                                           "allreduce, alltoall, broadcast, reduce, reducescatter, sendrecv");
}

TEST_CASE("collectives: ring search on the DGX-1 cube meshes") {
  // NCCL's search (search.cc ncclTopoCompute, default line's graph_search). V100: SM70 NVLinks
  // at 20 GB/s (topo.h), NV2 pairs 40 GB/s, so maxBw = 40 and each GPU's 6 links total 120. At
  // 40 and 30 no ring closes on double links alone; at 20, six arc-disjoint rings use every
  // link once (6 x 20 = 120 = totalBw: the search stops). bwIntra 20 < 25: no duplication;
  // init doubles the 6 into 12 channels. topsim's ring speed is NCCL's 20 rescaled to its
  // NVLink (25 x 0.8 = 20): 20 GB/s.
  Topology v100 = bundled("dgx1-v100");
  Communicator comm(v100, first(8), nccl());
  CHECK(comm.rings().nccl_search);
  CHECK(comm.rings().rings() == 6);
  CHECK(comm.rings().speed_Bps == Approx(20e9));
  CHECK(comm.rings().channels() == 12);
  CHECK(comm.rings().type_intra == "NVL");
  check_rings(comm);
  // P100: four single NVLinks per GPU at SM60's 18 GB/s: four rings at 18 fill 4 x 18 = 72.
  // topsim's NVLink1 is 20 x 0.8643 = 17.286 GB/s (fitted), so each ring runs at that.
  Topology p100 = bundled("dgx1-p100");
  Communicator all(p100, first(8), nccl());
  CHECK(all.rings().rings() == 4);
  CHECK(all.rings().speed_Bps == Approx(20e9 * 0.8643));
  // GPUs 0-3 are fully connected, but the complete digraph on 4 vertices has no decomposition
  // into Hamiltonian cycles (Tillson): at 18 only two rings fit (36); at 9 (9/18 > .49, the
  // search goes on) six do, 6 x 9 = 54 = totalBw (3 links x 18).
  Communicator quad(p100, first(4), nccl());
  CHECK(quad.rings().rings() == 6);
  CHECK(quad.rings().nccl_bw_intra_Bps == Approx(9e9));
  // GPUs 0-4: GPU4's only NVLink neighbour in the set is GPU0. No NVL ring closes; at typeIntra
  // NVB the path 3 -> 0 -> 4 goes through GPU0 (paths.cc, one NVLink hop through a GPU), and
  // one ring at 18 takes both directions of the 0-4 link, so there is one.
  Communicator subset(p100, first(5), nccl());
  CHECK(subset.rings().rings() == 1);
  CHECK(subset.rings().type_intra == "NVB");
  CHECK(subset.rings().channels() == 2);
}

TEST_CASE("collectives: ring search on NVSwitch systems gives NCCL's channel counts") {
  // A100: 12 NVLinks into the switches, one GPU->NVS link of 12 x 20 = 240 GB/s to NCCL. The
  // default array starts at 40: six rings fill 240 (stop). 40 >= 25: duplicated to 12 at 20;
  // init doubles to 24 channels. All rings cross the one NVS node: one order.
  Topology a100_topology = bundled("dgx-a100");
  Communicator a100(a100_topology, first(8), nccl());
  CHECK(a100.rings().rings() == 12);
  CHECK(a100.rings().orders.size() == 1);
  CHECK(a100.rings().channels() == 24);
  // H100 (2.21+: SM90 NVLink 20.6 GB/s): 18 x 20.6 = 370.8. The sm90 array starts at 60: six
  // rings (360); 50 gives seven (350), 40 nine (360, more hops), 30 twelve (360, more hops),
  // 24/60 < .49 stops. Six at 60, duplicated (60 is not below 50) to 12 at 30: 24 channels.
  // topsim's ring speed: 30 x (25 x e) / 20.6 GB/s, e the fitted hopper NVLink efficiency.
  Topology h100_topology = bundled("dgx-h100");
  Communicator h100(h100_topology, first(8), nccl());
  CHECK(h100.rings().rings() == 12);
  CHECK(h100.rings().channels() == 24);
  const double hopper_nvlink = *catalog().nccl_models().at("hopper").nvlink_efficiency;
  CHECK(h100.rings().speed_Bps == Approx(30e9 * 25 * hopper_nvlink / 20.6));
}

TEST_CASE("collectives: what NCCL's tuner sees of NVSwitch servers, in NCCL's per-link figures") {
  // A100: 12 rings of one NVLink each; NCCL counts an SM80 NVLink as 20 GB/s: 12 x 20 = 240 GB/s
  // over 2 x 12 = 24 channels. No NVLS on Ampere.
  Topology a100_topology = bundled("dgx-a100");
  Communicator a100(a100_topology, first(8), nccl());
  const TunerTopology& a = a100.tuner_topology();
  CHECK(a.ranks == 8);
  CHECK(a.nodes == 1);
  CHECK(a.architecture == "ampere");
  CHECK(a.nvlink_intra);
  CHECK(a.ring_Bps == Approx(240e9));
  CHECK(a.channels == 24);
  CHECK(a.nvls_Bps == 0);
  // H100: ringGraph 12 channels x bwIntra 30 (the search above) = 360 GB/s over 24 channels;
  // NVLS sees all 18 links of 20.6 GB/s.
  Topology h100_topology = bundled("dgx-h100");
  Communicator h100(h100_topology, first(8), nccl());
  const TunerTopology& h = h100.tuner_topology();
  CHECK(h.ring_Bps == Approx(12 * 30e9));
  CHECK(h.channels == 24);
  CHECK(h.nvls_Bps == Approx(18 * 20.6e9));
}

TEST_CASE("collectives: a two-GPU allreduce derived by hand") {
  // tests/data/tiny.json: two V100 joined by two NVLinks. NCCL on Volta moves 25 x 0.8 = 20 GB/s
  // per link, 40 GB/s each way. Ring allreduce on 2 ranks: each hop carries 2(n-1)/n x S = S.
  // Simple latency: base 8.4 us + 2(n-1) = 2 steps x 3.4 us = 15.2 us.
  // time = 15.2e-6 + 2^30 / 40e9 = 15.2e-6 + 0.0268435456 = 0.0268587456 s; busbw = algbw.
  Topology t = Topology::build(load_topology_spec(test_data("tiny.json")), catalog());
  Simulator sim;
  Communicator comm(t, first(2), nccl());
  auto results = run_all(sim, t, comm, {request(CollOp::allreduce, kGiB)});
  const CollResult& r = results[0];
  CHECK(r.algo == Algo::ring);
  CHECK(r.proto == Proto::simple);
  CHECK(r.time_s == Approx(0.0268587456).epsilon(1e-9));
  CHECK(r.busbw_Bps == Approx(kGiB / 0.0268587456).epsilon(1e-9));
  CHECK(r.bound == "gpu0 -nvlink2x2-> gpu1 (100%)");
}

TEST_CASE("collectives: small messages cost NCCL's latency terms") {
  // DGX A100, 8 B allreduce: LL, base 6.6 us + 2 x 7 steps x 0.6 us = 15.0 us; the bytes add
  // next to nothing.
  Topology t = bundled("dgx-a100");
  Simulator sim;
  Communicator comm(t, first(8), nccl());
  auto results = run_all(sim, t, comm, {request(CollOp::allreduce, 8), request(CollOp::allgather, 8)});
  CHECK(results[0].proto == Proto::ll);
  CHECK(results[0].time_s == Approx(15.0e-6).epsilon(1e-3));
  CHECK(results[0].bound == "latency");
  // allgather: n-1 = 7 steps, 6.6 + 7 x 0.6 = 10.8 us.
  CHECK(results[1].time_s == Approx(10.8e-6).epsilon(1e-3));
}

TEST_CASE("collectives: one thread driving several GPUs bounds an iteration by their launches") {
  // DGX A100, 8 B allreduce: the kernels take 6.6 + 14 x 0.6 = 15.0 us (above). The host
  // launches one GPU's kernel in host_launch = 4 us (models/nccl.json, ampere). One GPU per
  // thread: 1 x 4 = 4 us < 15 us, the kernels' time stands; two: 8 us < 15 us, still; eight
  // (nccl-tests -g 8): 8 x 4 = 32 us > 15 us, the launches set the iteration. At 1 GiB the
  // kernels take milliseconds: -g 8 changes nothing.
  Topology t = bundled("dgx-a100");
  Simulator sim;
  Communicator comm(t, first(8), nccl());
  CollRequest one = request(CollOp::allreduce, 8), two = one, eight = one;
  two.gpus_per_thread = 2;
  eight.gpus_per_thread = 8;
  CollRequest big = request(CollOp::allreduce, kGiB), big_eight = big;
  big_eight.gpus_per_thread = 8;
  CollRequest nine = one;
  nine.gpus_per_thread = 9;
  PlatformRunner runner(sim, sim.add_platform(t, comm.routes(), comm.needs({one, two, eight, big, big_eight, nine})));
  std::vector<CollResult> results;
  for (const CollRequest& r : {one, two, eight, big, big_eight}) results.push_back(comm.run(r, runner));
  CHECK(comm.nccl().host_launch_s == Approx(4e-6));
  CHECK(results[0].time_s == Approx(15.0e-6).epsilon(1e-3));
  CHECK(results[0].bound_class == "latency");
  CHECK(results[1].time_s == Approx(15.0e-6).epsilon(1e-3));
  CHECK(results[2].time_s == Approx(32.0e-6).epsilon(1e-9));
  CHECK(results[2].bound == "host launch (8 GPUs per thread x 4.0 us)");
  CHECK(results[2].bound_class == "host");
  CHECK(results[4].time_s == Approx(results[3].time_s).epsilon(1e-9));
  CHECK(results[4].bound == results[3].bound);
  CHECK_THROWS_WITH(comm.run(nine, runner),
                    "GPUs per thread (nccl-tests -g) must be 1-8, the communicator's GPUs; got 9");
}

TEST_CASE("collectives: forced choices and what cannot run") {
  Topology t = bundled("dgx-a100");
  Communicator comm(t, first(8), nccl());
  CHECK(comm.unavailable(CollOp::allreduce, Algo::nvls) == "NVLS needs Hopper-class NVSwitches; NCCL offers none on ampere");
  CHECK(comm.unavailable(CollOp::allgather, Algo::tree) == "allgather runs ring, not tree");
  CHECK(comm.unavailable(CollOp::alltoall, Algo::direct).empty());
  Topology p100 = bundled("dgx1-p100");
  Communicator pascal(p100, first(2), nccl());
  CHECK(pascal.nccl().protocols.size() == 1);
  CHECK_THROWS_WITH(Communicator(t, {0, 0}, nccl()), "GPU 0 is listed twice");
  CHECK_THROWS_WITH(Communicator(t, {9}, nccl()), "GPU 9 does not exist: dgx-a100 has 8 GPUs (0-7)");
}

TEST_CASE("collectives: the flow model agrees with the per-step reference") {
  // Rings: one flow per ring order against every step of every hop as its own transfer. They
  // agree to rounding on symmetric and asymmetric fabrics alike. Long chains (broadcast of many
  // chunks) pipeline through rings that share links at different moments; the flow model sees
  // the contention as constant, within 10% of the reference. (Short chains run step by step in
  // both models.)
  Simulator sim;
  struct Case {
    const char* topology;
    std::vector<int> gpus;
  };
  std::vector<Topology> topologies = {bundled("dgx1-v100"), bundled("dgx-a100"), bundled("dgx1-p100")};
  std::vector<std::vector<int>> sets = {first(8), first(8), first(5)};
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<std::vector<CollRequest>> requests(3);
  std::vector<PlatformRunner> runners;
  for (int i = 0; i < 3; ++i) {
    comms.push_back(std::make_unique<Communicator>(topologies[i], sets[i], nccl()));
    for (CollOp op : {CollOp::allreduce, CollOp::allgather, CollOp::broadcast})
      for (double size : {1048576.0, 33554432.0, kGiB})
        for (CollModel model : {CollModel::flow, CollModel::steps}) {
          CollRequest r = request(op, size);
          r.model = model;
          r.algo = Algo::ring;
          requests[i].push_back(r);
        }
    RouteOptions options;
    options.mode = TransferMode::sm;
    runners.emplace_back(sim, sim.add_platform(topologies[i], options, comms[i]->needs(requests[i])));
  }
  for (int i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < requests[i].size(); k += 2) {
      INFO(topologies[i].name() << " " << to_string(requests[i][k].op) << " " << requests[i][k].size_B);
      double flow = comms[i]->run(requests[i][k], runners[i]).time_s;
      double steps = comms[i]->run(requests[i][k + 1], runners[i]).time_s;
      double tolerance = requests[i][k].op == CollOp::broadcast ? 0.10 : 0.01;
      CHECK(std::abs(flow - steps) / steps <= tolerance);
    }
}

TEST_CASE("collectives: link usage of a ring allreduce conserves bytes and stays within capacity") {
  Simulator sim;
  sim.track_links();
  Topology t = bundled("dgx-a100");
  Communicator comm(t, first(8), nccl());
  CollRequest r = request(CollOp::allreduce, kGiB);
  r.algo = Algo::ring;
  r.proto = Proto::simple;
  run_all(sim, t, comm, {r});
  LinkUsage u = sim.link_usage(50);
  // A ring allreduce sends 2 (n - 1) / n of the buffer out of every GPU and into every GPU:
  // 2 x 7/8 x 1 GiB = 1879048192 B over each GPU's NVSwitch bundle, each direction (Simple's
  // efficiency is 1 on the wire, models/nccl.json).
  int gpu_links = 0;
  for (const LinkLoad& l : u.links) {
    for (double v : l.utilisation) CHECK(v <= 1 + 1e-9);
    if (l.link.find("nvlink3x12") != std::string::npos) {
      ++gpu_links;
      CHECK(l.bytes_B == Approx(1879048192.0).epsilon(1e-9));
      // Bytes in the bins add up to the total.
      double binned = 0;
      for (double v : l.utilisation) binned += v * l.capacity_Bps * u.bin_s;
      CHECK(binned == Approx(l.bytes_B).epsilon(1e-9));
    }
  }
  CHECK(gpu_links == 16);  // 8 GPUs x 2 directions
}

TEST_CASE("collectives: the bound is the busiest resource on the critical path, dgx1-v100 sendrecv by hand") {
  // sendrecv: rank r sends 1 GiB to r + 1 (plan_direct.cpp), eight flows at once after NCCL's
  // latency. On dgx1-v100 (topologies/dgx1-v100.json) six pairs have NVLink 2.0 at 25 GB/s x
  // Volta's NCCL efficiency 0.8 (models/nccl.json) = 20 GB/s per link:
  //   0->1 and 4->5 NV1, 20 GB/s: busy 2^30 / 20e9 = 0.0536870912 s;
  //   1->2, 2->3, 5->6, 6->7 NV2, 40 GB/s: busy 0.0268435456 s.
  // 3->4 and 7->0 have none: gpu3 -> pcie1 -> cpu0 -> QPI -> cpu1 -> pcie2 -> gpu4, and
  // gpu7 -> pcie3 -> cpu1 -> QPI -> cpu0 -> pcie0 -> gpu0. Each of their 8 PCIe Gen3 x16 link
  // directions carries one flow at 15.754 GB/s x NCCL's PCIe efficiency 0.7617 = 11.9998218 GB/s:
  // busy 2^30 / 11.9998218e9 = 0.0894798141 s; each QPI direction (2 x 19.2 = 38.4 GB/s) one
  // flow, busy 0.0279616 s. Simple's wire efficiency is 1, so wire bytes are payload bytes.
  // Latency: Simple's base 8.4 us + its PCIe hop 5.7 us = 14.1 us, plus the first p2p chunk's
  // extra stage. Not every pair is NVLink, so the chunk is NCCL_P2P_PCI_CHUNKSIZE, 128 KiB, and
  // every pair runs on 2 channels (the PCIe pairs ask for 2, so 2 per peer). An NVLink pair's
  // channel carries the NVLink rings' rate over their channels, 6 x 20 GB/s / 12 = 10 GB/s; a
  // PCIe pair's, half its path, 11.9998218 / 2 GB/s, the slowest: 131072 / 5.9999109e9 =
  // 21.8457 us. The caps (2 channels each) do not bind below the links. The PCIe flows alone
  // set the end: time = 14.1e-6 + 21.8457e-6 + 0.0894798141 s.
  // Critical path: the start delay, then 3->4 and 7->0 (the last to finish). On it the eight
  // PCIe directions tie at 0.0894798141 s of busy time; the first in resource order (in which
  // the p2p flows, declared as capped composites, put their hops): cpu1 -> pcie2, busy for
  // 0.0894798141 / 0.0895157598 = 99.96% of the operation: "(100%)". Per-flow average rates
  // (the bound before issue 47) called every link its own flow saturated 100% busy and named
  // gpu5 -> gpu6, busy 0.0268435456 / 0.0894939141 = 30% of the time; the NV1 links were 60%.
  Simulator sim;
  sim.track_links();
  Topology t = bundled("dgx1-v100");
  Communicator comm(t, first(8), nccl());
  auto results = run_all(sim, t, comm, {request(CollOp::sendrecv, kGiB)});
  const CollResult& r = results[0];
  const double pcie_Bps = 15.754e9 * 0.7617, busy_s = kGiB / pcie_Bps, time_s = 14.1e-6 + 131072 / (pcie_Bps / 2) + busy_s;
  CHECK(r.channels == 2);
  CHECK(r.time_s == Approx(time_s).epsilon(1e-6));
  CHECK(r.bound_class == "pcie");
  CHECK(r.bound == "cpu1 -pcie3-x16-> pcie2 (100%)");
  // --link-usage tells the same busy time by construction (bytes over capacity), per direction.
  LinkUsage u = sim.link_usage(10);
  int pcie = 0;
  for (const LinkLoad& l : u.links) {
    INFO(l.link);
    if (l.bytes_B == 0) continue;  // the unused direction of a link the flows cross
    if (l.link.find("pcie3-x16") != std::string::npos) {
      ++pcie;
      CHECK(l.bytes_B == kGiB);
      CHECK(l.busy_s() == Approx(busy_s).epsilon(1e-9));
      CHECK(l.mean_utilisation() == Approx(busy_s / time_s).epsilon(1e-6));
    } else if (l.link == "gpu0 -nvlink2-> gpu1" || l.link == "gpu4 -nvlink2-> gpu5") {
      CHECK(l.busy_s() == Approx(kGiB / 20e9).epsilon(1e-9));
      CHECK(l.mean_utilisation() == Approx(kGiB / 20e9 / time_s).epsilon(1e-6));
    } else if (l.link.find("qpi") != std::string::npos) {
      CHECK(l.busy_s() == Approx(kGiB / 38.4e9).epsilon(1e-9));
    }
  }
  CHECK(pcie == 8);
}
