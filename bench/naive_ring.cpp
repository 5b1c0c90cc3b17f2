// The baseline issue 15 measures topsim against: a ring allreduce written the way a SimGrid user
// would write it first, one actor per GPU and one message per pipeline step and hop. Each of the
// N ranks sends S/N bytes to its successor in each of the 2(N-1) steps and may start step k+1 only
// when it has received step k from its predecessor, so the run is 2(N-1) x N messages, each a
// SimGrid communication with its own actor switches and max-min solve.
//
//   naive_ring N SIZE_B BANDWIDTH_BPS LATENCY_S
//
// The platform is a star: every rank has its own split-duplex link of the given bandwidth and
// latency to one non-blocking switch (the rails of a DGX A100 cluster as one ring sees them:
// each hop crosses the sender's and the receiver's NIC link). The network model is the one topsim
// runs (CM02, TCP corrections off), so only the way the ring is simulated differs. Prints the
// simulated time and the bus bandwidth it implies; bench/README.md and the README's Speed table
// say how it is timed against `topsim coll dgx-a100 --nodes 128 --algo ring --proto simple`.
// This program links SimGrid directly: it is a measuring stick outside topsim's layers, not part
// of them.
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Ring {
  int ranks = 0;
  double chunk_B = 0;
  std::vector<sg4::Mailbox*> inbox;  ///< by rank: where its predecessor's chunks arrive
};

void rank_actor(const Ring& ring, int rank) {
  const int steps = 2 * (ring.ranks - 1);
  sg4::Mailbox* out = ring.inbox[static_cast<std::size_t>((rank + 1) % ring.ranks)];
  sg4::Mailbox* in = ring.inbox[static_cast<std::size_t>(rank)];
  static char token;  // payloads carry no data: only their simulated size matters
  for (int step = 0; step < steps; ++step) {
    sg4::CommPtr send = out->put_async(&token, static_cast<uint64_t>(ring.chunk_B));
    in->get<char>();
    send->wait();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: naive_ring N SIZE_B BANDWIDTH_BPS LATENCY_S\n");
    return 2;
  }
  const int ranks = std::atoi(argv[1]);
  const double size_B = std::atof(argv[2]), bandwidth_Bps = std::atof(argv[3]), latency_s = std::atof(argv[4]);
  if (ranks < 2 || !(size_B > 0) || !(bandwidth_Bps > 0) || !(latency_s >= 0)) {
    std::fprintf(stderr, "naive_ring: N >= 2, SIZE_B > 0, BANDWIDTH_BPS > 0, LATENCY_S >= 0\n");
    return 2;
  }
  char program[] = "naive_ring";
  char quiet[] = "--log=root.thresh:critical";
  char* engine_argv[] = {program, quiet, nullptr};
  int engine_argc = 2;
  sg4::Engine engine(&engine_argc, engine_argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");

  auto* zone = sg4::create_star_zone("ring");
  Ring ring;
  ring.ranks = ranks;
  ring.chunk_B = size_B / ranks;
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < ranks; ++r) {
    std::string name = "gpu" + std::to_string(r);
    sg4::Host* host = zone->create_host(name, 1e9);
    sg4::Link* link = zone->create_split_duplex_link(name + ".nic", bandwidth_Bps)->set_latency(latency_s)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(host);
    ring.inbox.push_back(sg4::Mailbox::by_name(name));
  }
  zone->seal();
  for (int r = 0; r < ranks; ++r) sg4::Actor::create("rank" + std::to_string(r), hosts[static_cast<std::size_t>(r)], rank_actor, std::cref(ring), r);
  engine.run();
  const double time_s = sg4::Engine::get_clock();
  const double busbw_Bps = size_B / time_s * 2.0 * (ranks - 1) / ranks;
  std::printf("naive ring: %d ranks, %.0f B, %d messages, %.6f s simulated, busbw %.2f GB/s\n", ranks, size_B,
              2 * (ranks - 1) * ranks, time_s, busbw_Bps / 1e9);
  return 0;
}
