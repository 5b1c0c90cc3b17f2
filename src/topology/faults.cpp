#include "topology/faults.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Examples listed when a name is unknown: enough to show the forms, not a cluster's thousands.
constexpr std::size_t kExamples = 6;

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

bool is_host_side(DeviceType type) { return type == DeviceType::pcie_switch || type == DeviceType::cpu; }

class Names {
 public:
  explicit Names(const TopologySpec& spec) : spec_(spec) {
    for (std::size_t i = 0; i < spec.devices.size(); ++i) devices_[spec.devices[i].id] = i;
    for (std::size_t i = 0; i < spec.links.size(); ++i) {
      links_[std::minmax(spec.links[i].a, spec.links[i].b)] = i;
    }
  }

  std::optional<std::size_t> device(const std::string& id) const {
    auto it = devices_.find(id);
    if (it == devices_.end()) return std::nullopt;
    return it->second;
  }

  /// The link `name` names ("A-B" or "#N"), or nullopt when it names none.
  std::optional<std::size_t> link(const std::string& name, const std::string& flag) const {
    if (!name.empty() && name[0] == '#') {
      std::size_t used = 0;
      long index = -1;
      try {
        index = std::stol(name.substr(1), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used + 1 != name.size() || index < 0 || index >= static_cast<long>(spec_.links.size()))
        throw UsageError(flag + " " + name + ": no link has that index; " + spec_.name + " has links #0 to #" +
                         std::to_string(spec_.links.size() - 1));
      return static_cast<std::size_t>(index);
    }
    // Ids may contain '-' themselves: try every split into two known devices.
    for (std::size_t at = name.find('-'); at != std::string::npos; at = name.find('-', at + 1)) {
      std::string a = name.substr(0, at), b = name.substr(at + 1);
      if (!device(a) || !device(b)) continue;
      auto it = links_.find(std::minmax(a, b));
      if (it == links_.end()) throw UsageError(flag + " " + name + ": no link joins " + a + " and " + b);
      return it->second;
    }
    return std::nullopt;
  }

  [[noreturn]] void unknown(const std::string& flag, const std::string& name, bool devices_allowed,
                            bool links_allowed) const {
    std::vector<std::string> ids;
    for (const DeviceSpec& d : spec_.devices)
      if (devices_allowed || d.type == DeviceType::gpu) ids.push_back(d.id);
    std::vector<std::string> candidates = ids;
    if (links_allowed)
      for (const LinkSpec& l : spec_.links) candidates.push_back(l.a + "-" + l.b);
    std::string message = flag + " " + name + ": " + spec_.name + " has no " +
                          (links_allowed && devices_allowed ? "device or link"
                           : links_allowed                  ? "link"
                                                            : "GPU") +
                          " of that name";
    std::string close = closest_match(name, candidates);
    if (!close.empty()) message += " (did you mean '" + close + "'?)";
    // One device of each kind (a GPU, a switch, a NIC...), then the two forms of a link name.
    std::vector<std::string> examples;
    std::set<DeviceType> shown;
    for (const DeviceSpec& d : spec_.devices) {
      if (!(devices_allowed || !links_allowed) || (!devices_allowed && d.type != DeviceType::gpu)) continue;
      bool fresh = devices_allowed ? shown.insert(d.type).second : examples.size() < kExamples;
      if (fresh) examples.push_back(d.id);
    }
    if (links_allowed && !spec_.links.empty()) {
      const LinkSpec& first = spec_.links.front();
      examples.push_back(first.a + "-" + first.b);
      examples.push_back("#0");
    }
    message += "; valid names include " + join(examples, ", ");
    message += devices_allowed || !links_allowed ? " (" + std::to_string(ids.size()) + " " +
                                                       (devices_allowed ? "devices" : "GPUs") +
                                                       "; `topsim topo show` lists them)"
                                                 : "";
    throw UsageError(message);
  }

 private:
  const TopologySpec& spec_;
  std::map<std::string, std::size_t> devices_;
  std::map<std::pair<std::string, std::string>, std::size_t> links_;
};

// Union-find over devices, to tell which GPUs can still reach each other.
std::size_t root_of(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

void check_connected(const TopologySpec& spec, const std::string& what) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < spec.devices.size(); ++i) index[spec.devices[i].id] = i;
  std::vector<std::size_t> parent(spec.devices.size());
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  for (const LinkSpec& l : spec.links)
    parent[root_of(parent, index.at(l.a))] = root_of(parent, index.at(l.b));
  const DeviceSpec* first = nullptr;
  std::vector<std::string> cut;
  for (std::size_t i = 0; i < spec.devices.size(); ++i) {
    if (spec.devices[i].type != DeviceType::gpu) continue;
    if (first == nullptr) first = &spec.devices[i];
    else if (root_of(parent, i) != root_of(parent, index.at(first->id))) cut.push_back(spec.devices[i].id);
  }
  if (cut.empty()) return;
  std::string list = cut.size() <= kExamples ? join(cut, ", ")
                                             : join(std::vector<std::string>(cut.begin(), cut.begin() + kExamples), ", ") +
                                                   " and " + std::to_string(cut.size() - kExamples) + " more";
  throw UsageError(what + ": " + first->id + " and " + cut.front() + " cannot reach each other without it; " +
                   std::to_string(cut.size()) + " GPU" + (cut.size() == 1 ? " is" : "s are") + " cut off from " +
                   first->id + " (" + list + ")");
}

}  // namespace

void apply_faults(TopologySpec& spec, const Faults& faults) {
  if (!faults.any()) return;
  Names names(spec);
  std::set<std::size_t> failed_devices, failed_links;
  for (const std::string& name : faults.failed) {
    if (auto d = names.device(name)) {
      if (spec.devices[*d].type == DeviceType::gpu)
        throw UsageError("--fail " + name + ": a failed GPU takes its rank out of the job; fail its links instead "
                         "(e.g. " + name + "-<switch>), or leave it out with --devices or -g");
      failed_devices.insert(*d);
    } else if (auto l = names.link(name, "--fail")) {
      failed_links.insert(*l);
    } else {
      names.unknown("--fail", name, true, true);
    }
  }
  std::map<std::size_t, double> fractions;
  for (const LinkDegrade& degrade : faults.degraded) {
    std::string flag = "--degrade " + degrade.link + "=" + number_text(degrade.fraction);
    if (!(degrade.fraction > 0 && degrade.fraction <= 1))
      throw UsageError(flag + ": the fraction of bandwidth kept must be above 0 and at most 1 (use --fail for a "
                       "link that carries nothing)");
    auto l = names.link(degrade.link, "--degrade");
    if (!l) names.unknown("--degrade", degrade.link, false, true);
    auto [it, fresh] = fractions.emplace(*l, degrade.fraction);
    if (!fresh) it->second *= degrade.fraction;  // two degrades of one link compound
  }
  std::map<std::size_t, double> slowdowns;
  for (const Straggler& s : faults.stragglers) {
    std::string flag = "--straggler " + s.gpu + "=" + number_text(s.factor);
    if (!(s.factor >= 1) || !std::isfinite(s.factor))
      throw UsageError(flag + ": a straggler runs FACTOR times slower, FACTOR 1 or more");
    auto d = names.device(s.gpu);
    if (!d || spec.devices[*d].type != DeviceType::gpu) names.unknown("--straggler", s.gpu, false, false);
    slowdowns[*d] = s.factor;
  }

  for (const auto& [link, fraction] : fractions) spec.links[link].bandwidth_fraction *= fraction;
  for (const auto& [device, factor] : slowdowns) spec.devices[device].slowdown = factor;
  if (failed_devices.empty() && failed_links.empty()) return;

  // Remove, then sweep what became useless: NICs with no network link, devices with no link.
  std::set<std::string> gone;
  for (std::size_t d : failed_devices) gone.insert(spec.devices[d].id);
  std::vector<LinkSpec> kept;
  for (std::size_t i = 0; i < spec.links.size(); ++i)
    if (!failed_links.count(i) && !gone.count(spec.links[i].a) && !gone.count(spec.links[i].b))
      kept.push_back(spec.links[i]);
  std::map<std::string, DeviceType> type;
  for (const DeviceSpec& d : spec.devices) type[d.id] = d.type;
  struct Degree {
    int all = 0, host = 0, network = 0;
  };
  auto degrees = [&](const std::vector<LinkSpec>& links) {
    std::map<std::string, Degree> degree;
    for (const LinkSpec& l : links)
      for (const auto& [end, other] : {std::make_pair(l.a, l.b), std::make_pair(l.b, l.a)}) {
        ++degree[end].all;
        if (is_host_side(type[other])) ++degree[end].host;
        else if (type[end] == DeviceType::nic) ++degree[end].network;
      }
    return degree;
  };
  const std::map<std::string, Degree> before = degrees(spec.links);
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, Degree> now = degrees(kept);
    for (const DeviceSpec& d : spec.devices) {
      if (gone.count(d.id)) continue;
      bool lost_host = now[d.id].host == 0 && before.count(d.id) && before.at(d.id).host > 0;
      if (d.type == DeviceType::gpu && lost_host)
        throw UsageError("--fail " + join(faults.failed, ",") + ": " + d.id +
                         " loses its PCIe link; a GPU reaches host memory and the network only through it");
      // Only what the failures changed: a NIC that had network links and lost them all.
      bool had_network = before.count(d.id) && before.at(d.id).network > 0;
      bool useless = (d.type == DeviceType::nic && (lost_host || (had_network && now[d.id].network == 0))) ||
                     (d.type != DeviceType::gpu && now[d.id].all == 0);
      if (!useless) continue;
      gone.insert(d.id);
      changed = true;
    }
    if (changed) {
      std::vector<LinkSpec> still;
      for (const LinkSpec& l : kept)
        if (!gone.count(l.a) && !gone.count(l.b)) still.push_back(l);
      kept = std::move(still);
    }
  }
  std::vector<DeviceSpec> devices;
  for (const DeviceSpec& d : spec.devices)
    if (!gone.count(d.id)) devices.push_back(d);
  spec.devices = std::move(devices);
  spec.links = std::move(kept);
  check_connected(spec, "--fail " + join(faults.failed, ","));
}

std::string faults_text(const Faults& faults) {
  std::vector<std::string> parts;
  if (!faults.failed.empty()) parts.push_back("--fail " + join(faults.failed, ","));
  for (const LinkDegrade& d : faults.degraded) parts.push_back("--degrade " + d.link + "=" + number_text(d.fraction));
  for (const Straggler& s : faults.stragglers) parts.push_back("--straggler " + s.gpu + "=" + number_text(s.factor));
  return join(parts, ", ");
}

}  // namespace topsim
