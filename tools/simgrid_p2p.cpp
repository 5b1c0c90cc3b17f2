// topsim_simgrid_p2p: point-to-point bandwidth between the hosts of any SimGrid platform file,
// using SimGrid alone (no topsim library), so that it shows what the file by itself makes SimGrid
// do. Each message runs alone: the unidirectional figure of p2pBandwidthLatencyTest, without the
// copy's fixed software cost (a platform has no notion of it; see docs/export.md).
//
//   topsim_simgrid_p2p PLATFORM.xml [--size BYTES[,BYTES...]] [--hosts A,B,...] [--matrix]
//
// Hosts: those given, else those with a topsim.gpu prop in that order (what topsim topo export
// writes), else every host whose name starts with "gpu", by name. Output: CSV rows src, dst,
// size_B, time_s (17 significant digits) and uni_GBps (1e9 bytes/s), or with --matrix a matrix of
// uni_GBps per size. SimGrid's own --cfg=... and --log=... arguments are honoured.
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kGB = 1e9;

struct Args {
  std::string platform;
  std::vector<std::uint64_t> sizes_B{160000000};  // p2pBandwidthLatencyTest's 40M ints
  std::vector<std::string> hosts;
  bool matrix = false;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--size") {
      args.sizes_B.clear();
      for (const std::string& part : split_commas(value())) {
        std::size_t used = 0;
        unsigned long long bytes = std::stoull(part, &used);
        if (used != part.size() || bytes == 0) throw std::invalid_argument("--size: '" + part + "' is not a byte count");
        args.sizes_B.push_back(bytes);
      }
    } else if (arg == "--hosts") {
      args.hosts = split_commas(value());
    } else if (arg == "--matrix") {
      args.matrix = true;
    } else if (!arg.empty() && arg[0] != '-' && args.platform.empty()) {
      args.platform = arg;
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (args.platform.empty()) throw std::invalid_argument("name a platform file");
  return args;
}

std::vector<sg4::Host*> chosen_hosts(const sg4::Engine& engine, const Args& args) {
  std::vector<sg4::Host*> hosts;
  if (!args.hosts.empty()) {
    for (const std::string& name : args.hosts) {
      sg4::Host* host = engine.host_by_name_or_null(name);
      if (host == nullptr) throw std::invalid_argument("no host '" + name + "' in " + args.platform);
      hosts.push_back(host);
    }
    return hosts;
  }
  std::vector<std::pair<long, sg4::Host*>> ranked;
  for (sg4::Host* host : engine.get_all_hosts())
    if (const char* gpu = host->get_property("topsim.gpu")) ranked.emplace_back(std::stol(gpu), host);
  if (ranked.empty()) {
    std::vector<sg4::Host*> all = engine.get_all_hosts();
    std::sort(all.begin(), all.end(), [](const sg4::Host* a, const sg4::Host* b) { return a->get_name() < b->get_name(); });
    for (sg4::Host* host : all)
      if (host->get_name().rfind("gpu", 0) == 0) hosts.push_back(host);
  } else {
    std::sort(ranked.begin(), ranked.end());
    for (const auto& entry : ranked) hosts.push_back(entry.second);
  }
  if (hosts.size() < 2) throw std::invalid_argument(args.platform + ": fewer than two GPU hosts; name them with --hosts");
  return hosts;
}

// Time of one message of `size_B` bytes from `src` to `dst` with nothing else running.
double message_time_s(sg4::Engine& engine, sg4::Host* src, sg4::Host* dst, std::uint64_t size_B) {
  double start_s = sg4::Engine::get_clock();
  sg4::CommPtr comm = sg4::Comm::sendto_init(src, dst)->set_payload_size(size_B);
  comm->start();
  engine.run();
  return sg4::Engine::get_clock() - start_s;
}

}  // namespace

int main(int argc, char** argv) {
  // SimGrid reports every <config> prop it applies; keep that off unless asked (a later --log wins).
  std::vector<char*> sg_argv(argv, argv + argc);
  std::string quiet = "--log=root.thresh:warning";
  sg_argv.insert(sg_argv.begin() + 1, quiet.data());
  sg_argv.push_back(nullptr);
  int sg_argc = argc + 1;
  sg4::Engine engine(&sg_argc, sg_argv.data());
  try {
    Args args = parse(sg_argc, sg_argv.data());
    engine.load_platform(args.platform);
    std::vector<sg4::Host*> hosts = chosen_hosts(engine, args);
    if (!args.matrix) std::printf("src,dst,size_B,time_s,uni_GBps\n");
    for (std::uint64_t size_B : args.sizes_B) {
      if (args.matrix) {
        std::printf("Unidirectional bandwidth (GB/s), %llu B messages\n   D\\D", static_cast<unsigned long long>(size_B));
        for (std::size_t d = 0; d < hosts.size(); ++d) std::printf(" %6zu", d);
        std::printf("\n");
      }
      for (std::size_t s = 0; s < hosts.size(); ++s) {
        if (args.matrix) std::printf("%6zu", s);
        for (std::size_t d = 0; d < hosts.size(); ++d) {
          if (s == d) {
            if (args.matrix) std::printf(" %6s", "-");
            continue;
          }
          double time_s = message_time_s(engine, hosts[s], hosts[d], size_B);
          double uni_GBps = static_cast<double>(size_B) / time_s / kGB;
          if (args.matrix)
            std::printf(" %6.2f", uni_GBps);
          else
            std::printf("%s,%s,%llu,%.17g,%.17g\n", hosts[s]->get_cname(), hosts[d]->get_cname(),
                        static_cast<unsigned long long>(size_B), time_s, uni_GBps);
        }
        if (args.matrix) std::printf("\n");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "topsim_simgrid_p2p: " << e.what() << "\n"
              << "usage: topsim_simgrid_p2p PLATFORM.xml [--size BYTES[,BYTES...]] [--hosts A,B,...] [--matrix]\n";
    return 2;
  }
  return 0;
}
