// topsim_p2p_reference: what topsim's engine predicts for the copies topsim_simgrid_p2p times on
// an exported platform, at full precision (topsim p2p prints two decimals). A copy's time is
// P2pBench::copy_time_s minus P2pBench::overhead_s: the wire time (route latency plus bytes over
// the route's share), because a SimGrid platform has no per-copy software cost.
//
//   topsim_p2p_reference TOPOLOGY.json [--nodes N] [--no-p2p] [--size BYTES[,BYTES...]]
//
// Output: the CSV rows of topsim_simgrid_p2p (src, dst, size_B, time_s, uni_GBps), hosts named
// by device id, pairs in the same order.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "engine/simulator.hpp"
#include "io/io.hpp"
#include "p2p/p2p.hpp"
#include "topology/cluster.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

#ifndef TOPSIM_DATA_DIR
#error "TOPSIM_DATA_DIR must name the directory holding models/"
#endif

using namespace topsim;

namespace {
}  // namespace

int main(int argc, char** argv) {
  try {
    std::string path;
    ScaleOut scale;
    P2pOptions options;
    std::vector<double> sizes_B = {kDefaultP2pSize_B};
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--nodes") scale.nodes = std::stoi(value());
      else if (arg == "--no-p2p") options.peer_access = false;
      else if (arg == "--size") {
        sizes_B.clear();
        for (const std::string& part : split(value(), ',')) sizes_B.push_back(std::stod(part));
      } else if (path.empty()) path = arg;
      else throw UsageError("unknown argument '" + arg + "'");
    }
    if (path.empty()) throw UsageError("name a topology file");
    Catalog models = load_catalog(std::string(TOPSIM_DATA_DIR) + "/models");
    TopologySpec spec = load_topology_spec(path);
    Topology t = Topology::build(scale.any() ? replicate_server(spec, scale, models) : spec, models);
    Simulator simulator;
    PlatformRunner runner(simulator, simulator.add_platform(t, route_options(options)));
    P2pBench bench(t, runner, options);
    std::printf("src,dst,size_B,time_s,uni_GBps\n");
    for (double size_B : sizes_B)
      for (int s = 0; s < t.gpu_count(); ++s)
        for (int d = 0; d < t.gpu_count(); ++d) {
          if (s == d) continue;
          double time_s = bench.copy_time_s(s, d, size_B) - bench.overhead_s(s, d);
          std::printf("%s,%s,%.0f,%.17g,%.17g\n", t.device(t.gpu(s)).id.c_str(), t.device(t.gpu(d)).id.c_str(), size_B,
                      time_s, size_B / time_s / kGB);
        }
  } catch (const std::exception& e) {
    std::cerr << "topsim_p2p_reference: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
