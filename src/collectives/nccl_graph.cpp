// NCCL's ring search inside one server, transcribed as behaviour from src/graph/topo.cc
// (links and their bandwidths), paths.cc (ncclTopoSetPaths, ncclTopoCheckP2p, addInterStep),
// search.cc (ncclTopoCompute, ncclTopoSearchRec, ncclTopoSearchRecGpu, followPath,
// ncclTopoCompareGraphs, ncclTopoSearchNextGpuSort) at the tags models/nccl_versions.json
// names; every constant comes from the line's graph_search data.
#include "collectives/nccl_graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "util/bytes.hpp"
#include "util/error.hpp"

namespace topsim {

const char* to_string(PathType type) {
  switch (type) {
    case PathType::loc: return "LOC";
    case PathType::nvl: return "NVL";
    case PathType::nvb: return "NVB";
    case PathType::pix: return "PIX";
    case PathType::pxb: return "PXB";
    case PathType::pxn: return "PXN";
    case PathType::phb: return "PHB";
    case PathType::sys: return "SYS";
  }
  return "?";
}

namespace {

enum class NcclNodeKind { gpu, pci, nvs, cpu };

struct NcclNode {
  NcclNodeKind kind = NcclNodeKind::gpu;
  int rank = -1;             ///< gpu: its rank in the communicator
  std::string arch;          ///< gpu: architecture
  std::string cpu_family;    ///< cpu: intel, intel_skylake, amd, arm, other
  std::vector<int> out;      ///< links leaving this node
};

struct NcclLink {
  int from = 0, to = 0;
  PathType type = PathType::nvl;  ///< LINK_NVL, LINK_PCI (as PIX) or LINK_SYS, as path types
  double bw = 0;                  ///< remaining during the search, bytes/s
};

struct NcclPath {
  std::vector<int> links;  ///< from the node towards the base
  double bw = 0;           ///< 0: no path
  PathType type = PathType::loc;
};

// PCIe signalling rate (GT/s, as kvDictPciGen's keys) from a link's per-lane line rate.
std::string pcie_rate(double lane_Bps) {
  static const std::vector<std::pair<double, std::string>> rates = {
      {0.25e9, "2.5"}, {0.5e9, "5"}, {0.985e9, "8"}, {1.969e9, "16"}, {3.938e9, "32"}, {7.877e9, "64"}};
  std::string best;
  double distance = std::numeric_limits<double>::infinity();
  for (const auto& [Bps, name] : rates) {
    double d = std::abs(std::log(lane_Bps / Bps));
    if (d < distance) distance = d, best = name;
  }
  return best;
}

std::string cpu_family(const CpuModel& cpu, const NcclGraphData& data) {
  // NCCL's CPU type (topo.cc): the x86 vendor string, and for Intel family 6 the newest family
  // the line tells apart whose first model the CPU's is at or past.
  if (cpu.cpuid_vendor == "GenuineIntel") {
    std::string family = "intel";
    int first = 0;
    int model = cpu.cpuid_models.empty() ? 0 : cpu.cpuid_models.front();
    for (const auto& [name, from] : data.intel_first_model)
      if (cpu.cpuid_family == 6 && model >= from && from > first) family = "intel_" + name, first = from;
    return family;
  }
  if (cpu.cpuid_vendor == "AuthenticAMD") return "amd";
  if (cpu.cpuid_vendor == "ARM") return "arm";
  return "other";
}

class RingSearch {
 public:
  RingSearch(const Topology& t, const std::vector<int>& gpus, const NcclVersion& v) : data_(v.graph), version_(v) {
    build(t, gpus, v);
  }

  /// Everything run() reads besides the release line: the graph build() made, in its order.
  std::string signature(bool peer_access) const;
  NcclRingGraph run(bool peer_access) {
    compute_paths(peer_access);
    return run();
  }

 private:
  NcclRingGraph run();

  struct Graph {
    int channels = 0;
    std::vector<std::vector<int>> intra;  ///< GPU indices per channel
    double bw = 0;
    PathType type = PathType::nvl;
    bool same_channels = true;
    int hops = 0;
    int min_channels = 1, max_channels = 16;
  };

  void build(const Topology& t, const std::vector<int>& gpus, const NcclVersion& v);
  int node_for(const Topology& t, Vertex vx, const std::set<int>& servers, const std::map<int, int>& rank_of,
               std::map<Vertex, int>& ids);
  void connect(int a, int b, PathType type, double bw);
  void compute_paths(bool peer_access);
  void set_paths(int base);
  bool follow(const NcclPath& path, int start, double bw, int& steps);
  bool follow_path(int from, int to, int sign);
  void search_rec(long& time);
  void rec_gpu(int g, int step, int forced, long& time);
  void try_gpu(int step, int forced, long& time, int from, int g);
  void compare_and_save(long& time);
  std::vector<int> next_gpus(int g) const;
  /// ncclTopoGetInterCpuBw: the QPI figure of the Intel family, AMD's, ARM's, else LOC_BW.
  double inter_cpu_Bps(const std::string& family) const;
  int max_search_channels() const { return version_.max_channels / data_.search_channels_divisor; }

  const NcclGraphData& data_;  // version_.graph
  const NcclVersion& version_;
  std::vector<NcclNode> nodes_;
  std::vector<NcclLink> links_;
  std::vector<int> gpu_nodes_;   ///< node ids of the GPUs in PCI (ordinal) order
  std::vector<int> cpu_nodes_;
  bool has_nvs_ = false;  ///< system->nodes[NVS].count > 0
  std::map<std::pair<int, int>, NcclPath> paths_;  ///< (node, base) -> path from node to base
  std::vector<std::uint64_t> used_;             ///< per GPU index: channels it is in
  Graph tmp_, best_;
  std::vector<double> speed_list_;
};

int RingSearch::node_for(const Topology& t, Vertex vx, const std::set<int>& servers, const std::map<int, int>& rank_of,
                         std::map<Vertex, int>& ids) {
  auto it = ids.find(vx);
  if (it != ids.end()) return it->second;
  const Device& d = t.device(vx);
  // An NVSwitch outside the servers (a GB200 tray's NVLink switch trays) is still an NVS to
  // NCCL: NVML names the far end of every NVLink, and an end the host cannot see is taken for
  // an NVSwitch (xml.cc:866-871@v2.28.9-1).
  if (!servers.count(d.node) && d.type != DeviceType::nvswitch) return -1;
  NcclNode n;
  switch (d.type) {
    case DeviceType::gpu: {
      auto r = rank_of.find(d.gpu_index);
      if (r == rank_of.end()) return -1;  // NCCL's system holds the communicator's GPUs only
      n.kind = NcclNodeKind::gpu;
      n.rank = r->second;
      n.arch = d.gpu().architecture;
      break;
    }
    case DeviceType::nvswitch: {
      // NCCL sees every NVSwitch of a server as one NVS node (topo.cc).
      for (const auto& [v, id] : ids)
        if (nodes_[static_cast<std::size_t>(id)].kind == NcclNodeKind::nvs) return ids[vx] = id;
      n.kind = NcclNodeKind::nvs;
      has_nvs_ = true;
      break;
    }
    case DeviceType::pcie_switch: n.kind = NcclNodeKind::pci; break;
    case DeviceType::cpu:
      n.kind = NcclNodeKind::cpu;
      n.cpu_family = cpu_family(d.cpu(), data_);
      break;
    default: return -1;  // NICs: one server's communicator has no NET (ncclTopoTrimSystem)
  }
  nodes_.push_back(n);
  int id = static_cast<int>(nodes_.size()) - 1;
  ids[vx] = id;
  if (n.kind == NcclNodeKind::cpu) cpu_nodes_.push_back(id);
  return id;
}

void RingSearch::connect(int a, int b, PathType type, double bw) {
  for (int l : nodes_[static_cast<std::size_t>(a)].out) {
    NcclLink& link = links_[static_cast<std::size_t>(l)];
    if (link.to == b && link.type == type) {
      link.bw += bw;  // parallel links add up (ncclTopoConnectNodes)
      return;
    }
  }
  links_.push_back({a, b, type, bw});
  nodes_[static_cast<std::size_t>(a)].out.push_back(static_cast<int>(links_.size()) - 1);
}

void RingSearch::build(const Topology& t, const std::vector<int>& gpus, const NcclVersion& v) {
  std::map<int, int> rank_of;
  for (std::size_t r = 0; r < gpus.size(); ++r) rank_of[gpus[r]] = static_cast<int>(r);
  // One server, or under MNNVL the servers of one NVLink domain, whose systems NCCL fuses into
  // one (the caller decides which applies).
  std::set<int> servers;
  for (int g : gpus) servers.insert(t.node_of(g));
  std::map<Vertex, int> ids;
  std::vector<std::pair<int, int>> ordered;  // (ordinal, node)
  for (int g : gpus) ordered.push_back({g, node_for(t, t.gpu(g), servers, rank_of, ids)});
  std::sort(ordered.begin(), ordered.end());
  for (const auto& [ordinal, node] : ordered) gpu_nodes_.push_back(node);
  // Links with an end in these servers, server by server in the file's order: nodes are
  // numbered as met. A link between two of them is met twice and taken once.
  std::set<std::size_t> seen;
  for (int server : servers)
  for (std::size_t index : t.server_links(server)) {
    if (!seen.insert(index).second) continue;
    const Link& link = t.link(index);
    int a = node_for(t, link.a, servers, rank_of, ids), b = node_for(t, link.b, servers, rank_of, ids);
    if (a < 0 || b < 0 || a == b) continue;
    const NcclNode &na = nodes_[static_cast<std::size_t>(a)], &nb = nodes_[static_cast<std::size_t>(b)];
    double bw = 0;
    PathType type = PathType::nvl;
    if (link.kind == LinkKind::nvlink) {
      if (na.kind == NcclNodeKind::nvs && nb.kind == NcclNodeKind::nvs) continue;
      const Device& gpu = t.device(na.kind == NcclNodeKind::gpu ? link.a : link.b);
      if (gpu.type != DeviceType::gpu) continue;
      auto per_link = v.nvlink_Bps.find(gpu.gpu().architecture);
      if (per_link == v.nvlink_Bps.end()) continue;
      bw = link.count * per_link->second;
    } else if (link.kind == LinkKind::pcie) {
      int lanes = std::max(link.lanes, 1);
      auto rate = data_.pci_lane_rate.find(pcie_rate(link.bandwidth_Bps / lanes));
      if (rate == data_.pci_lane_rate.end()) continue;
      bw = link.count * lanes * rate->second / data_.pci_lane_divisor * 1e9;
      type = PathType::pix;
    } else if (link.kind == LinkKind::socket || link.kind == LinkKind::numa) {
      if (na.kind != NcclNodeKind::cpu || nb.kind != NcclNodeKind::cpu) continue;
      bw = inter_cpu_Bps(na.cpu_family);
      type = PathType::sys;
    } else {
      continue;
    }
    connect(a, b, type, bw);
    connect(b, a, type, bw);
  }
  used_.assign(gpu_nodes_.size(), 0);
}

void RingSearch::set_paths(int base) {
  NcclPath& own = paths_[{base, base}];
  own = {{}, data_.link_Bps.at("loc"), PathType::loc};
  std::vector<int> frontier = {base};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int node : frontier) {
      const NcclPath path = paths_[{node, base}];
      const NcclNode& n = nodes_[static_cast<std::size_t>(node)];
      for (int l : n.out) {
        const NcclLink& link = links_[static_cast<std::size_t>(l)];
        int rem = link.to;
        const NcclNode& r = nodes_[static_cast<std::size_t>(rem)];
        // Through a GPU only as one NVLink hop between GPUs (PATH_NVB), where the line has it.
        if (node != base && n.kind == NcclNodeKind::gpu &&
            (!data_.nvlink_bounce || link.type != PathType::nvl || r.kind != NcclNodeKind::gpu || path.links.size() > 1))
          continue;
        double bw = std::min(path.bw, link.bw);
        NcclPath& rem_path = paths_[{rem, base}];
        if (!((rem_path.bw == 0 || rem_path.links.size() > path.links.size()) && rem_path.bw < bw)) continue;
        int back = -1;
        for (int rl : r.out)
          if (links_[static_cast<std::size_t>(rl)].to == node && links_[static_cast<std::size_t>(rl)].type == link.type) back = rl;
        rem_path.links = {back};
        rem_path.links.insert(rem_path.links.end(), path.links.begin(), path.links.end());
        rem_path.bw = bw;
        PathType type = link.type;
        if (n.kind == NcclNodeKind::pci && r.kind == NcclNodeKind::pci) type = PathType::pxb;
        if (link.type == PathType::pix && (n.kind == NcclNodeKind::cpu || r.kind == NcclNodeKind::cpu)) type = PathType::phb;
        if (n.kind == NcclNodeKind::gpu && path.type == PathType::nvl && type == PathType::nvl && rem_path.links.size() > 1)
          type = PathType::nvb;
        rem_path.type = std::max(path.type, type);
        if (std::find(next.begin(), next.end(), rem) == next.end()) next.push_back(rem);
      }
    }
    frontier = next;
  }
}

void RingSearch::compute_paths(bool peer_access) {
  for (int c : cpu_nodes_) set_paths(c);
  for (int g : gpu_nodes_) set_paths(g);
  // ncclTopoCheckP2p: P2P up to the CPU family's level, or not at all under NCCL_P2P_DISABLE;
  // other pairs go through the CPU nearest the destination.
  std::string family = cpu_nodes_.empty() ? "other" : nodes_[static_cast<std::size_t>(cpu_nodes_.front())].cpu_family;
  const auto& levels = gpu_nodes_.size() <= 2 && data_.p2p_level_two_gpus.count(family) ? data_.p2p_level_two_gpus
                                                                                          : data_.p2p_level;
  auto level_it = levels.find(family);
  std::string level_name = level_it == levels.end() ? data_.p2p_level.at("other") : level_it->second;
  PathType level = !peer_access ? PathType::loc : level_name == "PXB" ? PathType::pxb : PathType::sys;
  for (int g : gpu_nodes_) {
    int cpu = -1;
    std::size_t hops = 0;
    for (int c : cpu_nodes_) {
      const NcclPath& p = paths_[{g, c}];
      if (p.bw > 0 && (cpu < 0 || p.links.size() < hops)) cpu = c, hops = p.links.size();
    }
    for (int p : gpu_nodes_) {
      if (p == g || cpu < 0) continue;
      NcclPath& direct = paths_[{p, g}];
      if (direct.bw > 0 && direct.type <= level) continue;
      const NcclPath &to_cpu = paths_[{p, cpu}], &from_cpu = paths_[{cpu, g}];
      if (to_cpu.bw == 0 || from_cpu.bw == 0) continue;
      NcclPath via;
      via.links = to_cpu.links;
      via.links.insert(via.links.end(), from_cpu.links.begin(), from_cpu.links.end());
      via.type = std::max(to_cpu.type, from_cpu.type);
      via.bw = std::min(to_cpu.bw, from_cpu.bw);
      direct = via;
    }
  }
}

// followPath: takes `bw` on each link of the path in turn (PCIe links more through an Intel
// root complex on a PHB path); stops at the first link without room, saying how far it got.
bool RingSearch::follow(const NcclPath& path, int start, double bw, int& steps) {
  double pci_bw = bw;
  if (path.type == PathType::phb && nodes_[static_cast<std::size_t>(start)].kind == NcclNodeKind::gpu)
    for (int l : path.links) {
      const NcclNode& n = nodes_[static_cast<std::size_t>(links_[static_cast<std::size_t>(l)].to)];
      if (n.kind == NcclNodeKind::cpu && n.cpu_family.compare(0, 5, "intel") == 0)
        pci_bw = bw * data_.intel_p2p_overhead;
    }
  for (std::size_t step = 0; step < static_cast<std::size_t>(steps); ++step) {
    NcclLink& link = links_[static_cast<std::size_t>(path.links[step])];
    double take = link.type == PathType::pix ? pci_bw : bw;
    // NCCL rounds to 1/1000 of its GB/s unit after each subtraction (SUB_ROUND).
    if (link.bw < take - 0.5e6) {
      steps = static_cast<int>(step);
      return false;
    }
    link.bw = std::round((link.bw - take) / 1e6) * 1e6;
  }
  return true;
}

// ncclTopoFollowPath between two GPUs (indices): +1 takes bwIntra along the path, -1 gives it
// back. False when the path is deeper than typeIntra or lacks room (nothing is then taken).
bool RingSearch::follow_path(int from, int to, int sign) {
  const int a = gpu_nodes_[static_cast<std::size_t>(from)], b = gpu_nodes_[static_cast<std::size_t>(to)];
  const NcclPath& path = paths_[{a, b}];
  if (path.links.empty()) return true;
  if (sign > 0 && path.type > tmp_.type) return false;
  int steps = static_cast<int>(path.links.size());
  if (!follow(path, a, sign * tmp_.bw, steps)) {
    int done = steps;
    follow(path, a, -sign * tmp_.bw, done);
    return false;
  }
  tmp_.hops += sign * static_cast<int>(path.links.size());
  return true;
}

std::vector<int> RingSearch::next_gpus(int g) const {
  // ncclTopoSearchNextGpuSort inside a server: most bandwidth, then fewest hops, then the order
  // after the current GPU.
  struct Score {
    int g, start, hops;
    long bw;
  };
  const int n = static_cast<int>(gpu_nodes_.size());
  const std::uint64_t flag = 1ULL << tmp_.channels;
  auto open = [&](int h) {
    const NcclPath& p = paths_.at({gpu_nodes_[static_cast<std::size_t>(g)], gpu_nodes_[static_cast<std::size_t>(h)]});
    return !p.links.empty() && !(used_[static_cast<std::size_t>(h)] & flag);
  };
  if (data_.nvswitch_neighbours_first && has_nvs_) {
    // Behind NVSwitches only the ring neighbours are tried: NCCL sorts the candidates, moves
    // the next GPU to the front, then the previous one before it, and drops the rest
    // (search.cc:282-307@v2.28.9-1), so the sort never shows: previous first, then next.
    std::vector<int> out;
    const int next = (g + 1) % n, prev = (g - 1 + n) % n;
    if (open(prev)) out.push_back(prev);
    if (next != prev && open(next)) out.push_back(next);
    return out;
  }
  std::vector<Score> scores;
  for (int i = 1; i < n; ++i) {
    int h = (g + i) % n;
    if (!open(h)) continue;
    const NcclPath& p = paths_.at({gpu_nodes_[static_cast<std::size_t>(g)], gpu_nodes_[static_cast<std::size_t>(h)]});
    scores.push_back({h, i, static_cast<int>(p.links.size()), static_cast<long>(p.bw / 1e9)});  // NCCL keeps an int GB/s
  }
  std::stable_sort(scores.begin(), scores.end(), [](const Score& x, const Score& y) {
    if (x.bw != y.bw) return x.bw > y.bw;
    if (x.hops != y.hops) return x.hops < y.hops;
    return x.start < y.start;
  });
  std::vector<int> out;
  for (const Score& s : scores) out.push_back(s.g);
  return out;
}

void RingSearch::compare_and_save(long& time) {
  // ncclTopoCompareGraphs: enough channels, then more total bandwidth, then fewer hops.
  bool copy = false;
  if (tmp_.channels >= tmp_.min_channels) {
    double mine = tmp_.channels * tmp_.bw, theirs = best_.channels * best_.bw;
    if (mine > theirs * (1 + 1e-9)) copy = true;
    else if (mine >= theirs * (1 - 1e-9) && tmp_.hops < best_.hops) copy = true;
  }
  if (copy) {
    best_ = tmp_;
    best_.intra.resize(static_cast<std::size_t>(tmp_.channels));
    if (tmp_.channels == tmp_.max_channels) time = -1;
  }
}

void RingSearch::rec_gpu(int g, int step, int forced, long& time) {
  if (time <= 0) return;
  --time;
  const int n = static_cast<int>(gpu_nodes_.size());
  if (step == n) {
    ++tmp_.channels;
    compare_and_save(time);
    if (tmp_.channels < tmp_.max_channels) search_rec(time);
    --tmp_.channels;
    return;
  }
  auto& ring = tmp_.intra[static_cast<std::size_t>(tmp_.channels)];
  ring[static_cast<std::size_t>(step)] = g;
  if (step < n - 1) {
    std::vector<int> next;
    if (forced == 1) next = {step + 1};  // PCI order
    else if (forced == 2) next = {tmp_.intra[static_cast<std::size_t>(tmp_.channels - 1)][static_cast<std::size_t>(step + 1)]};
    else next = next_gpus(g);
    for (int h : next) try_gpu(step + 1, forced, time, g, h);
  } else {
    int first = ring.front();
    if (follow_path(g, first, +1)) {
      rec_gpu(first, n, forced, time);
      follow_path(g, first, -1);
    }
  }
}

void RingSearch::try_gpu(int step, int forced, long& time, int from, int g) {
  if (from >= 0 && !follow_path(from, g, +1)) return;
  const std::uint64_t flag = 1ULL << tmp_.channels;
  used_[static_cast<std::size_t>(g)] ^= flag;
  rec_gpu(g, step, forced, time);
  used_[static_cast<std::size_t>(g)] ^= flag;
  if (from >= 0) follow_path(from, g, -1);
}

void RingSearch::search_rec(long& time) {
  if (tmp_.intra.size() <= static_cast<std::size_t>(tmp_.channels))
    tmp_.intra.resize(static_cast<std::size_t>(tmp_.channels) + 1, std::vector<int>(gpu_nodes_.size(), 0));
  if (tmp_.channels == 0) try_gpu(0, 1, time, -1, 0);
  else try_gpu(0, 2, time, -1, tmp_.intra[static_cast<std::size_t>(tmp_.channels - 1)][0]);
  if (!tmp_.same_channels || tmp_.channels == 0)
    for (int g = 0; g < static_cast<int>(gpu_nodes_.size()); ++g) try_gpu(0, 0, time, -1, g);
}

double RingSearch::inter_cpu_Bps(const std::string& family) const {
  const std::string intel = "intel_";
  std::string link = family == "intel"                  ? "qpi"
                     : family.rfind(intel, 0) == 0     ? intel_qpi_link(family.substr(intel.size()))
                     : family == "amd" || family == "arm" ? family
                                                          : "";
  auto bw = data_.link_Bps.find(link);
  return bw == data_.link_Bps.end() ? data_.link_Bps.at("loc") : bw->second;
}

NcclRingGraph RingSearch::run() {
  const int n = static_cast<int>(gpu_nodes_.size());
  // system->maxBw: the widest GPU-to-GPU path; totalBw: a GPU's NVLinks together, or its PCIe link.
  double max_bw = 0, total_bw = 0;
  for (int g : gpu_nodes_) {
    for (int h : gpu_nodes_)
      if (h != g) max_bw = std::max(max_bw, paths_[{g, h}].bw);
    double nvlink = 0, pci = 0;
    for (int l : nodes_[static_cast<std::size_t>(g)].out) {
      const NcclLink& link = links_[static_cast<std::size_t>(l)];
      if (link.type == PathType::nvl) nvlink += link.bw;
      if (link.type == PathType::pix) pci = link.bw;
    }
    total_bw = std::max(total_bw, std::max(nvlink, pci));
  }
  // The speeds tried: the array of the GPUs' tuner row (NCCL picks it by ccMin; the rows
  // follow the same compute capabilities).
  const std::string& arch = nodes_[static_cast<std::size_t>(gpu_nodes_.front())].arch;
  auto row = version_.architecture_rows.find(arch);
  auto array = row == version_.architecture_rows.end() ? data_.speed_intra_Bps.end() : data_.speed_intra_Bps.find(row->second);
  speed_list_ = array == data_.speed_intra_Bps.end() ? data_.speed_intra_Bps.at("default") : array->second;
  const int nspeeds = static_cast<int>(speed_list_.size());
  tmp_ = Graph{};
  tmp_.type = n == 1 ? PathType::loc : PathType::nvl;
  tmp_.max_channels = max_search_channels();
  best_ = tmp_;
  best_.bw = 0;
  int index = 0;
  while ((speed_list_[static_cast<std::size_t>(index)] > max_bw + 1 ||
          speed_list_[static_cast<std::size_t>(index)] * tmp_.min_channels > total_bw + 1) &&
         index < nspeeds - 1)
    ++index;
  tmp_.bw = speed_list_[static_cast<std::size_t>(index)];
  long global = data_.search_global_timeout;
  while (true) {
    long time = tmp_.same_channels ? data_.search_timeout_same_channels : data_.search_timeout;
    tmp_.channels = 0;
    tmp_.intra.clear();
    global -= time;
    search_rec(time);
    if (time == -1) break;                                  // optimal
    if (best_.channels * best_.bw >= total_bw - 1) break;   // every link full
    if (tmp_.same_channels) {
      tmp_.same_channels = false;
      continue;
    }
    tmp_.same_channels = true;
    if (time != -1) global += time;
    if (global < 0 && best_.channels) break;
    if (tmp_.type < PathType::sys && (best_.channels == 0 || tmp_.type < best_.type)) {
      tmp_.type = static_cast<PathType>(static_cast<int>(tmp_.type) + 1);
      continue;
    }
    tmp_.type = n == 1 ? PathType::loc : PathType::nvl;
    if (index < nspeeds - 1 &&
        (best_.channels == 0 || speed_list_[static_cast<std::size_t>(index + 1)] / best_.bw > data_.lower_speed_ratio)) {
      tmp_.bw = speed_list_[static_cast<std::size_t>(++index)];
      continue;
    }
    break;
  }
  NcclRingGraph out;
  if (best_.channels == 0) {
    // NCCL's fallback: the PCI order, one channel at 0.1 GB/s over SYS.
    out.fallback = true;
    std::vector<int> order;
    for (int g = 0; g < n; ++g) order.push_back(nodes_[static_cast<std::size_t>(gpu_nodes_[static_cast<std::size_t>(g)])].rank);
    out.rings = {order};
    out.bw_intra_Bps = 0.1e9;
    out.type_intra = PathType::sys;
    return out;
  }
  for (int c = 0; c < best_.channels; ++c) {
    std::vector<int> order;
    for (int g : best_.intra[static_cast<std::size_t>(c)])
      order.push_back(nodes_[static_cast<std::size_t>(gpu_nodes_[static_cast<std::size_t>(g)])].rank);
    out.rings.push_back(order);
  }
  out.bw_intra_Bps = best_.bw;
  out.type_intra = best_.type;
  // Duplicate the channels when each is fast (search.cc, end of ncclTopoCompute).
  const auto& capped = data_.duplicate_cap_architectures;
  bool duplicate = best_.bw >= data_.duplicate_min_Bps - 1 &&
                   !(std::find(capped.begin(), capped.end(), arch) != capped.end() && best_.bw < data_.duplicate_cap_Bps - 1 &&
                     best_.channels > data_.duplicate_cap_channels);
  if (duplicate) {
    // The first dup - n channels run once more; each channel's bandwidth is divided by
    // DIVUP(dup, n), so a partial duplication still halves it.
    int dup = std::min(best_.channels * 2, max_search_channels());
    int factor = (dup + best_.channels - 1) / best_.channels;
    out.bw_intra_Bps /= factor;
    for (int c = 0; c < dup - best_.channels; ++c) out.rings.push_back(out.rings[static_cast<std::size_t>(c)]);
  }
  return out;
}

}  // namespace

std::string RingSearch::signature(bool peer_access) const {
  // Bytes, not text: bandwidths compare exactly, as the search compares them.
  ByteWriter out;
  out.put(peer_access);
  out.put(nodes_.size());
  for (const NcclNode& n : nodes_) {
    out.put(n.kind);
    out.put(n.rank);
    out.put(n.arch);
    out.put(n.cpu_family);
    out.put(n.out);
  }
  out.put(links_.size());
  for (const NcclLink& l : links_) {
    out.put(l.from);
    out.put(l.to);
    out.put(l.type);
    out.put(l.bw);
  }
  out.put(gpu_nodes_);
  out.put(cpu_nodes_);
  return out.take();
}

int nccl_search_rank_limit(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version) {
  const int searched = 32;  // topsim's bound on a search without NCCL's NVSwitch shortcut
  if (!version.graph.nvswitch_neighbours_first || version.graph.topo_max_nodes <= 0) return searched;
  for (int g : gpus) {
    bool nvswitch = false;
    const Vertex v = topology.gpu(g);
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, topology.graph())))
      nvswitch |= topology.link(e).kind == LinkKind::nvlink &&
                  topology.device(topology.other_end(e, v)).type == DeviceType::nvswitch;
    if (!nvswitch) return searched;
  }
  // The search recurses one level per rank: past one NVL72 domain (72 ranks) its depth overflowed
  // the stack under the sanitizers (the 256-GPU NVLink Switch System). Beyond it topsim's own
  // ring search runs, as it does for any communicator past NCCL's limit.
  constexpr int kDeepestSearch = 72;
  return std::min(kDeepestSearch, std::max(searched, version.graph.topo_max_nodes));
}

NcclRingGraph nccl_ring_graph(const Topology& topology, const std::vector<int>& gpus, const NcclVersion& version,
                              bool peer_access, NcclRingGraphCache* cache) {
  if (!version.graph.searchable)
    throw UsageError("NCCL line " + version.name + " in models/nccl_versions.json has no graph_search data");
  RingSearch search(topology, gpus, version);
  if (!cache) return search.run(peer_access);
  auto key = std::make_pair(version.name, search.signature(peer_access));
  auto found = cache->graphs_.find(key);
  if (found != cache->graphs_.end()) return found->second;
  return cache->graphs_.emplace(std::move(key), search.run(peer_access)).first->second;
}

}  // namespace topsim
