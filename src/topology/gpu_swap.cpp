#include "topology/gpu_swap.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// One GPU's NVLink connections: indices into spec.links, in file order.
struct GpuLinks {
  std::string id;
  std::vector<std::size_t> links;
  int board = 0;  ///< NVLinks the board wires to it
};

std::string gb_per_s(double Bps) { return fixed(Bps / 1e9, 0) + " GB/s"; }

// What else the swap changes besides NVLinks, for the note a what-if owes its user: "--gpu a800
// replaces a100: memory 40.0 -> 80.0 GiB, memory bandwidth 1555 -> 2039 GB/s" (SMs, dense 16- and 8-bit tensor
// math and board power likewise); "" when `from` is `to`. Figures as models/gpus.json gives them.
std::string other_differences(const GpuModel& from, const GpuModel& to) {
  if (from.name == to.name) return "";
  std::vector<std::string> parts;
  auto differ = [&](const std::string& what, double a, double b, double unit, int digits, const std::string& suffix) {
    if (fixed(a / unit, digits) != fixed(b / unit, digits))
      parts.push_back(what + " " + fixed(a / unit, digits) + " -> " + fixed(b / unit, digits) + suffix);
  };
  differ("memory", from.memory_B, to.memory_B, 1024.0 * 1024 * 1024, 1, " GiB");
  differ("memory bandwidth", from.memory_Bps, to.memory_Bps, 1e9, 0, " GB/s");
  differ("SMs", from.sms, to.sms, 1, 0, "");
  // The dense 16-bit and 8-bit tensor peaks, what training and serving run on; the full table is
  // `topsim topo diff` and `models list gpus`.
  for (const std::string dtype : {"fp16_tensor", "fp8_tensor"}) {
    auto a = from.math.find(dtype), b = to.math.find(dtype);
    if (a != from.math.end() && b != to.math.end())
      differ(dtype + " dense", a->second.dense_flops_per_s, b->second.dense_flops_per_s, 1e12, 0, " TFLOP/s");
  }
  differ("board power", from.tdp_W, to.tdp_W, 1, 0, " W");
  const std::string head = "--gpu " + to.name + " replaces " + from.name + ": ";
  return parts.empty() ? head + "the same memory, memory bandwidth, SMs, tensor math and board power; only its NVLinks may differ"
                       : head + join(parts, ", ");
}

// A device id without its server prefix ("n0.gpu0" -> "gpu0"): a note then reads the same for
// one server and for the cluster of them that train builds next, and is shown once.
std::string board_id(const std::string& id) {
  std::size_t dot = id.find('.');
  bool prefixed = dot != std::string::npos && dot > 1 && id[0] == 'n' &&
                  id.find_first_not_of("0123456789", 1) == dot;
  return prefixed ? id.substr(dot + 1) : id;
}

// The catalog's GPU models whose NVLinks are `generation`: the ones a board of it can hold.
std::string fitting_gpus(const Catalog& catalog, const std::string& generation) {
  std::vector<std::string> names;
  for (const auto& [name, gpu] : catalog.gpus())
    if (gpu.nvlink_count > 0 && gpu.nvlink_model == generation) names.push_back(name);
  return names.empty() ? "none in models/gpus.json" : join(names, ", ");
}

// "1 of 2 to nvswitch2, nvswitch3", one group per (dropped, wired) pair in first-seen order.
std::string dropped_text(const TopologySpec& spec, const GpuLinks& g, const std::vector<int>& kept) {
  std::vector<std::pair<std::pair<int, int>, std::vector<std::string>>> groups;
  for (std::size_t k = 0; k < g.links.size(); ++k) {
    const LinkSpec& l = spec.links[g.links[k]];
    int dropped = l.count - kept[k];
    if (dropped == 0) continue;
    std::pair<int, int> key{dropped, l.count};
    auto found = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == key; });
    if (found == groups.end()) found = groups.insert(groups.end(), {key, {}});
    found->second.push_back(board_id(l.a == g.id ? l.b : l.a));
  }
  std::vector<std::string> parts;
  for (const auto& [key, ends] : groups)
    parts.push_back(std::to_string(key.first) + " of " + std::to_string(key.second) + " to " +
                    (ends.size() > 1 ? "each of " : "") + join(ends, ", "));
  return join(parts, "; ");
}


// The board's NVLinks as the GPUs see them. A cluster has up to 2^18 GPUs and millions of
// links: one pass over each, lookups hashed.
struct Board {
  std::vector<GpuLinks> gpus;
  std::set<std::string> generations;  ///< link models of NVLinks with a GPU end
  bool to_switches = false;           ///< some GPU NVLink ends on an NVSwitch
  bool nvlink_network = false;        ///< NVSwitch-NVSwitch NVLinks (servers joined over NVLink)
  int nvlinks = 0;                    ///< most NVLinks one GPU has
};

Board board_of(const TopologySpec& spec, const Catalog& catalog) {
  Board board;
  std::unordered_map<std::string, std::size_t> gpu_index;
  std::unordered_set<std::string> nvswitches;
  for (const DeviceSpec& d : spec.devices) {
    if (d.type == DeviceType::gpu) {
      gpu_index.emplace(d.id, board.gpus.size());
      board.gpus.push_back(GpuLinks{d.id, {}, 0});
    } else if (d.type == DeviceType::nvswitch) {
      nvswitches.insert(d.id);
    }
  }
  std::unordered_map<std::string, bool> is_nvlink;  // by link model name
  for (std::size_t i = 0; i < spec.links.size(); ++i) {
    const LinkSpec& l = spec.links[i];
    auto kind = is_nvlink.find(l.model);
    if (kind == is_nvlink.end())
      kind = is_nvlink.emplace(l.model, catalog.link(l.model, l.where).kind == LinkKind::nvlink).first;
    if (!kind->second) continue;
    bool touches_gpu = false;
    for (const std::string* end : {&l.a, &l.b}) {
      auto g = gpu_index.find(*end);
      if (g == gpu_index.end()) continue;
      board.gpus[g->second].links.push_back(i);
      board.gpus[g->second].board += l.count;
      touches_gpu = true;
    }
    bool a_switch = nvswitches.count(l.a) > 0, b_switch = nvswitches.count(l.b) > 0;
    if (!touches_gpu) {
      board.nvlink_network = board.nvlink_network || (a_switch && b_switch);
      continue;
    }
    board.generations.insert(l.model);
    board.to_switches = board.to_switches || a_switch || b_switch;
  }
  for (const GpuLinks& g : board.gpus) board.nvlinks = std::max(board.nvlinks, g.board);
  return board;
}

// Links kept, by index into spec.links: each GPU's water_fill share of each of its connections,
// a GPU-GPU link the smaller of its two ends' shares.
std::unordered_map<std::size_t, int> kept_links(const TopologySpec& spec, const Board& board, int keep) {
  std::unordered_map<std::size_t, int> kept;
  for (const GpuLinks& g : board.gpus) {
    std::vector<int> counts;
    for (std::size_t i : g.links) counts.push_back(spec.links[i].count);
    const std::vector<int> share = water_fill(counts, keep);
    for (std::size_t k = 0; k < g.links.size(); ++k) {
      auto [it, fresh] = kept.emplace(g.links[k], share[k]);
      if (!fresh) it->second = std::min(it->second, share[k]);
    }
  }
  return kept;
}

// What each GPU keeps (after the other ends' shares): the most, and on the first GPU that lost
// links, which ("gpu0 drops 1 of 2 to each of nvswitch2, ..."), and whether every GPU lost alike.
struct Drops {
  int kept_nvlinks = 0;
  std::string first;
  bool alike = true;
};

Drops drops_of(const TopologySpec& spec, const Board& board, const std::unordered_map<std::size_t, int>& kept_count) {
  Drops drops;
  std::vector<int> first_pattern;
  for (std::size_t g = 0; g < board.gpus.size(); ++g) {
    const GpuLinks& gpu = board.gpus[g];
    std::vector<int> kept, pattern;
    int total = 0;
    for (std::size_t i : gpu.links) {
      kept.push_back(kept_count.at(i));
      pattern.push_back(spec.links[i].count - kept.back());
      total += kept.back();
    }
    drops.kept_nvlinks = std::max(drops.kept_nvlinks, total);
    if (g == 0) first_pattern = pattern;
    drops.alike = drops.alike && pattern == first_pattern;
    if (drops.first.empty() && total < gpu.board) drops.first = board_id(gpu.id) + " drops " + dropped_text(spec, gpu, kept);
  }
  return drops;
}

// Links stay in file order; one left with no lane goes (--fail "#N" then counts what is left).
void trim_links(TopologySpec& spec, const std::unordered_map<std::size_t, int>& kept_count) {
  std::vector<LinkSpec> links;
  links.reserve(spec.links.size());
  for (std::size_t i = 0; i < spec.links.size(); ++i) {
    auto kept = kept_count.find(i);
    if (kept != kept_count.end() && kept->second == 0) continue;
    links.push_back(std::move(spec.links[i]));
    if (kept != kept_count.end()) links.back().count = kept->second;
  }
  spec.links = std::move(links);
}

// Removes the NVSwitches trimming left without a link (a30's 4 links reach 4 of DGX A100's 6):
// a switch no GPU reaches carries nothing. Their ids without the server prefix, once each.
std::vector<std::string> drop_idle_switches(TopologySpec& spec) {
  std::unordered_set<std::string> linked;
  for (const LinkSpec& l : spec.links) {
    linked.insert(l.a);
    linked.insert(l.b);
  }
  std::vector<std::string> idle;
  std::vector<DeviceSpec> devices;
  devices.reserve(spec.devices.size());
  for (DeviceSpec& d : spec.devices) {
    if (d.type == DeviceType::nvswitch && linked.count(d.id) == 0) {
      std::string id = board_id(d.id);
      if (std::find(idle.begin(), idle.end(), id) == idle.end()) idle.push_back(id);
      continue;
    }
    devices.push_back(std::move(d));
  }
  spec.devices = std::move(devices);
  return idle;
}

// The board's NVLink generation when `model` fits it; UsageError naming both sides otherwise.
void check_fits(const TopologySpec& spec, const Board& board, const GpuModel& model, const Catalog& catalog) {
  const std::string& generation = *board.generations.begin();
  const std::string sides = spec.name + (board.to_switches ? "'s NVSwitches speak " : "'s GPUs are joined by ") + generation +
                            "; GPUs that fit this board: " + fitting_gpus(catalog, generation);
  // An SXM board holds SXM GPUs: a GPU without NVLink (a PCIe card) has no place on it.
  if (model.nvlink_model.empty() || model.nvlink_count == 0)
    throw UsageError("--gpu " + model.name + " has no NVLink; " + sides);
  if (board.generations.size() > 1 || model.nvlink_model != generation)
    throw UsageError("--gpu " + model.name + " speaks " + model.nvlink_model + "; " + sides);
}

}  // namespace

std::string GpuSwap::text() const {
  if (kept_nvlinks < board_nvlinks)
    return gpu + " (" + std::to_string(kept_nvlinks) + " of " + std::to_string(board_nvlinks) + " NVLinks)";
  if (board_nvlinks > 0 && gpu_nvlinks > board_nvlinks)
    return gpu + " (" + std::to_string(board_nvlinks) + " NVLinks wired of its " + std::to_string(gpu_nvlinks) + ")";
  return gpu;
}

std::vector<int> water_fill(const std::vector<int>& counts, int keep) {
  std::vector<int> share(counts.size(), 0);
  bool placed = true;
  while (keep > 0 && placed) {
    placed = false;
    for (std::size_t k = 0; k < counts.size() && keep > 0; ++k)
      if (share[k] < counts[k]) {
        ++share[k];
        --keep;
        placed = true;
      }
  }
  return share;
}

GpuSwap swap_gpu(TopologySpec& spec, const std::string& gpu_model, const Catalog& catalog) {
  const GpuModel* model = nullptr;
  try {
    model = &catalog.gpu(gpu_model, {});
  } catch (const InputError& e) {
    throw UsageError("--gpu: " + e.message());
  }
  GpuSwap swap;
  swap.gpu = gpu_model;
  swap.gpu_nvlinks = model->nvlink_model.empty() ? 0 : model->nvlink_count;
  const Board board = board_of(spec, catalog);
  swap.board_nvlinks = board.nvlinks;
  // A board without NVLink (a PCIe server) takes any GPU as a PCIe card, without a note: its GPUs
  // talk over PCIe whatever their model could do (compare's buying scenarios swap many such).
  if (!board.generations.empty()) {
    check_fits(spec, board, *model, catalog);
    const std::string& generation = *board.generations.begin();
    swap.nvlink_model = generation;
    const double link_Bps = catalog.link(generation, {}).bandwidth_Bps * 2;
    const std::unordered_map<std::size_t, int> kept = kept_links(spec, board, swap.gpu_nvlinks);
    const Drops drops = drops_of(spec, board, kept);
    swap.kept_nvlinks = drops.kept_nvlinks;
    swap.kept_Bps = swap.kept_nvlinks * link_Bps;
    swap.board_Bps = swap.board_nvlinks * link_Bps;
    // The NVLink network's external ports are sized for the board's GPUs, switch by switch; a
    // trimmed GPU spreads its links otherwise, and topsim routes striped NVLink planes only when
    // every stage splits alike (routing/route.cpp). Refused, not simulated on a fabric no one built.
    if (!drops.first.empty() && board.nvlink_network)
      throw UsageError("--gpu " + gpu_model + " keeps " + std::to_string(swap.kept_nvlinks) + " of " +
                       std::to_string(swap.board_nvlinks) + " NVLinks per GPU, but " + spec.name +
                       " joins its servers' NVSwitches over NVLink, its external ports sized for all " +
                       std::to_string(swap.board_nvlinks) +
                       "; swap it on a server topology instead (its NICs join the servers) or write a cluster file of a "
                       "server that holds " + gpu_model);
    const std::string on = "--gpu " + gpu_model;
    if (!drops.first.empty()) {
      swap.notes.push_back(on + ": each GPU keeps " + std::to_string(swap.kept_nvlinks) + " of the board's " +
                           std::to_string(swap.board_nvlinks) + " " + generation + " ports (" + gb_per_s(swap.kept_Bps) +
                           " of " + gb_per_s(swap.board_Bps) + "); " + drops.first +
                           (drops.alike ? ", every GPU alike" : "; the other GPUs keep the smaller share of each GPU-GPU link"));
    } else if (swap.gpu_nvlinks > swap.board_nvlinks) {
      swap.notes.push_back(on + ": the board wires " + std::to_string(swap.board_nvlinks) + " of " + gpu_model + "'s " +
                           std::to_string(swap.gpu_nvlinks) + " " + generation + " ports (" + gb_per_s(swap.board_Bps) +
                           " of " + gb_per_s(swap.gpu_nvlinks * link_Bps) + "); the other " +
                           std::to_string(swap.gpu_nvlinks - swap.board_nvlinks) + " go unused");
    }
    trim_links(spec, kept);
    std::vector<std::string> idle = drop_idle_switches(spec);
    if (!idle.empty())
      swap.notes.push_back(on + ": " + join(idle, ", ") + (idle.size() > 1 ? " are" : " is") +
                           " left without a GPU and removed");
  }
  std::set<std::string> replaced;
  for (DeviceSpec& d : spec.devices)
    if (d.type == DeviceType::gpu && d.model != gpu_model) replaced.insert(std::exchange(d.model, gpu_model));
  for (const std::string& from : replaced) swap.notes.push_back(other_differences(catalog.gpu(from, {}), *model));
  return swap;
}

}  // namespace topsim
