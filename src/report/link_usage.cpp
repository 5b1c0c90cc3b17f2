#include "report/link_usage.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

namespace topsim {

namespace {

// To `digits` decimals; dividing (not multiplying by 1e-digits) gives the double nearest the decimal.
double rounded(double v, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace

std::string link_usage_json(const LinkUsage& usage) {
  // One link per line: readable, and diffs show which link moved.
  std::string text = "{\"link_usage\": {\n  \"source\": " + nlohmann::json(usage.source).dump() +
                     ",\n  \"duration_s\": " + nlohmann::json(usage.duration_s).dump() +
                     ",\n  \"bin_s\": " + nlohmann::json(usage.bin_s).dump() + ",\n  \"links\": [";
  for (std::size_t i = 0; i < usage.links.size(); ++i) {
    const LinkLoad& l = usage.links[i];
    nlohmann::ordered_json bins = nlohmann::ordered_json::array();
    for (double u : l.utilisation) bins.push_back(rounded(u, 4));
    nlohmann::ordered_json link = {{"link", l.link},
                                   {"capacity_GBps", rounded(l.capacity_Bps / 1e9, 3)},
                                   {"bytes_B", std::llround(l.bytes_B)},
                                   {"mean_utilisation", rounded(l.mean_utilisation(), 4)},
                                   {"peak_utilisation", rounded(l.peak_utilisation(), 4)},
                                   {"utilisation", bins}};
    text += (i == 0 ? "\n    " : ",\n    ") + link.dump();
  }
  return text + "\n  ]\n}}\n";
}

HeatMap heat_map(const LinkUsage& usage, std::size_t max_rows) {
  std::vector<std::size_t> busy;
  for (std::size_t i = 0; i < usage.links.size(); ++i)
    if (usage.links[i].bytes_B > 0) busy.push_back(i);
  std::size_t idle = usage.links.size() - busy.size(), dropped = 0;
  if (busy.size() > max_rows) {
    std::vector<std::size_t> by_bytes = busy;
    std::stable_sort(by_bytes.begin(), by_bytes.end(),
                     [&](std::size_t a, std::size_t b) { return usage.links[a].bytes_B > usage.links[b].bytes_B; });
    by_bytes.resize(max_rows);
    std::sort(by_bytes.begin(), by_bytes.end());
    dropped = busy.size() - max_rows;
    busy = by_bytes;
  }
  HeatMap map;
  map.title = "link utilisation: " + usage.source;
  std::string left_out;
  if (dropped > 0) left_out += std::to_string(dropped) + " less busy";
  if (idle > 0) left_out += (left_out.empty() ? "" : ", ") + std::to_string(idle) + " idle";
  if (!left_out.empty()) map.title += " (" + left_out + " not shown)";
  map.x_label = "time (ms), " + std::to_string(usage.links.empty() ? 0 : usage.links.front().utilisation.size()) +
                " bins; colour: bytes / (capacity x bin)";
  map.x_max = usage.duration_s * 1e3;
  for (std::size_t i : busy) {
    const LinkLoad& l = usage.links[i];
    map.rows.push_back(l.link);
    map.values.push_back(l.utilisation);
  }
  return map;
}

}  // namespace topsim
