#include "topology/gpu_swap.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
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

  // A cluster has up to 2^18 GPUs and millions of links: one pass over each, lookups hashed.
  std::unordered_map<std::string, std::size_t> gpu_index;
  std::unordered_map<std::string, DeviceType> type_of;
  std::vector<GpuLinks> gpus;
  for (const DeviceSpec& d : spec.devices) {
    if (d.type == DeviceType::gpu) {
      gpu_index.emplace(d.id, gpus.size());
      gpus.push_back(GpuLinks{d.id, {}, 0});
    } else if (d.type == DeviceType::nvswitch) {
      type_of.emplace(d.id, d.type);
    }
  }
  std::unordered_map<std::string, bool> is_nvlink;  // by link model name
  std::set<std::string> generations;
  bool to_switches = false;
  bool nvlink_network = false;
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
      gpus[g->second].links.push_back(i);
      gpus[g->second].board += l.count;
      touches_gpu = true;
    }
    if (!touches_gpu) {
      // NVSwitch to NVSwitch: an NVLink network joining servers (NVLink Switch System).
      if (type_of.count(l.a) > 0 && type_of.count(l.b) > 0) nvlink_network = true;
      continue;
    }
    generations.insert(l.model);
    to_switches = to_switches || type_of.count(l.a) > 0 || type_of.count(l.b) > 0;
  }
  for (const GpuLinks& g : gpus) swap.board_nvlinks = std::max(swap.board_nvlinks, g.board);

  const std::string on = "--gpu " + gpu_model;
  // A board without NVLink (a PCIe server) takes any GPU as a PCIe card, without a note: its GPUs
  // talk over PCIe whatever their model could do (compare's buying scenarios swap many such).
  if (!generations.empty()) {
    const std::string generation = *generations.begin();
    const std::string board = spec.name + (to_switches ? "'s NVSwitches speak " : "'s GPUs are joined by ") + generation;
    const std::string fit = "; GPUs that fit this board: " + fitting_gpus(catalog, generation);
    // An SXM board holds SXM GPUs: a GPU without NVLink (a PCIe card) has no place on it.
    if (swap.gpu_nvlinks == 0)
      throw UsageError("--gpu " + gpu_model + " has no NVLink; " + board + fit);
    if (generations.size() > 1 || model->nvlink_model != generation)
      throw UsageError("--gpu " + gpu_model + " speaks " + model->nvlink_model + "; " + board + fit);
    const double link_Bps = catalog.link(generation, {}).bandwidth_Bps * 2;

    // Each GPU's share of each of its connections; a GPU-GPU link keeps the smaller share.
    std::unordered_map<std::size_t, int> kept_count;  // by link index
    std::vector<std::vector<int>> shares(gpus.size());
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      std::vector<int> counts;
      for (std::size_t i : gpus[g].links) counts.push_back(spec.links[i].count);
      shares[g] = water_fill(counts, swap.gpu_nvlinks);
      for (std::size_t k = 0; k < gpus[g].links.size(); ++k) {
        auto [it, fresh] = kept_count.emplace(gpus[g].links[k], shares[g][k]);
        if (!fresh) it->second = std::min(it->second, shares[g][k]);
      }
    }
    // What each GPU keeps (after the other ends' shares) and, on the first that loses links,
    // which; the note says whether every GPU lost the same.
    std::string first_drop;
    std::vector<int> first_pattern;
    bool alike = true;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      std::vector<int> kept;
      int total = 0;
      for (std::size_t i : gpus[g].links) {
        kept.push_back(kept_count.at(i));
        total += kept.back();
      }
      swap.kept_nvlinks = std::max(swap.kept_nvlinks, total);
      std::vector<int> pattern;
      for (std::size_t k = 0; k < kept.size(); ++k) pattern.push_back(spec.links[gpus[g].links[k]].count - kept[k]);
      if (g == 0) first_pattern = pattern;
      alike = alike && pattern == first_pattern;
      if (first_drop.empty() && total < gpus[g].board) first_drop = board_id(gpus[g].id) + " drops " + dropped_text(spec, gpus[g], kept);
    }
    swap.kept_Bps = swap.kept_nvlinks * link_Bps;
    swap.board_Bps = swap.board_nvlinks * link_Bps;
    // The NVLink network's external ports are sized for the board's GPUs, switch by switch; a
    // trimmed GPU spreads its links otherwise, and topsim routes striped NVLink planes only when
    // every stage splits alike (routing/route.cpp). Refused, not simulated on a fabric no one built.
    if (!first_drop.empty() && nvlink_network)
      throw UsageError("--gpu " + gpu_model + " keeps " + std::to_string(swap.kept_nvlinks) + " of " +
                       std::to_string(swap.board_nvlinks) + " NVLinks per GPU, but " + spec.name +
                       " joins its servers' NVSwitches over NVLink, its external ports sized for all " +
                       std::to_string(swap.board_nvlinks) + "; swap it on a server topology instead (its NICs join the servers) or write a cluster file of a "
                       "server that holds " + gpu_model);
    if (!first_drop.empty()) {
      swap.notes.push_back(on + ": each GPU keeps " + std::to_string(swap.kept_nvlinks) + " of the board's " +
                           std::to_string(swap.board_nvlinks) + " " + generation + " ports (" + gb_per_s(swap.kept_Bps) +
                           " of " + gb_per_s(swap.board_Bps) + "); " + first_drop +
                           (alike ? ", every GPU alike" : "; the other GPUs keep the smaller share of each GPU-GPU link"));
    } else if (swap.gpu_nvlinks > swap.board_nvlinks) {
      swap.notes.push_back(on + ": the board wires " + std::to_string(swap.board_nvlinks) + " of " + gpu_model + "'s " +
                           std::to_string(swap.gpu_nvlinks) + " " + generation + " ports (" + gb_per_s(swap.board_Bps) +
                           " of " + gb_per_s(swap.gpu_nvlinks * link_Bps) + "); the other " +
                           std::to_string(swap.gpu_nvlinks - swap.board_nvlinks) + " go unused");
    }
    // Links stay in file order; one left with no lane goes (--fail "#N" then counts what is left).
    std::vector<LinkSpec> links;
    links.reserve(spec.links.size());
    for (std::size_t i = 0; i < spec.links.size(); ++i) {
      auto kept = kept_count.find(i);
      if (kept == kept_count.end()) {
        links.push_back(std::move(spec.links[i]));
      } else if (kept->second > 0) {
        links.push_back(std::move(spec.links[i]));
        links.back().count = kept->second;
      }
    }
    spec.links = std::move(links);
  }
  for (DeviceSpec& d : spec.devices)
    if (d.type == DeviceType::gpu) d.model = gpu_model;
  return swap;
}

}  // namespace topsim
