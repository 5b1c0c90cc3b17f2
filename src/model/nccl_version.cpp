#include "model/nccl_version.hpp"

#include <sstream>
#include <stdexcept>

namespace topsim {

namespace {

std::vector<long> parts_of(const std::string& version) {
  std::vector<long> parts;
  std::stringstream in(version);
  std::string part;
  while (std::getline(in, part, '.')) {
    try {
      parts.push_back(std::stol(part));
    } catch (const std::exception&) {
      parts.push_back(-1);  // not a number: sorts first, matches nothing
    }
  }
  return parts;
}

}  // namespace

int compare_versions(const std::string& a, const std::string& b) {
  std::vector<long> x = parts_of(a), y = parts_of(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    long u = i < x.size() ? x[i] : 0, v = i < y.size() ? y[i] : 0;
    if (u != v) return u < v ? -1 : 1;
  }
  return 0;
}

bool NcclVersion::covers(const std::string& version) const {
  // Only major.minor decides: "2.20.5" is covered by a line that ends at "2.20".
  std::vector<long> parts = parts_of(version);
  if (parts.size() < 2 || parts[0] < 0 || parts[1] < 0) return false;
  std::string minor = std::to_string(parts[0]) + "." + std::to_string(parts[1]);
  return compare_versions(name, minor) == 0;
}

double NcclVersion::factor(const std::string& key) const {
  auto it = factors.find(key);
  if (it == factors.end()) throw std::logic_error("NCCL " + name + ": no tuner factor '" + key + "'");
  return it->second;
}

double NcclVersion::factor_or(const std::string& key, double none) const {
  auto it = factors.find(key);
  return it == factors.end() ? none : it->second;
}

int NcclVersion::nvls_channel_count(const std::string& architecture, int nodes) const {
  for (const std::string& key : {nodes == 1 ? architecture + "_one_node" : std::string(), architecture, std::string("default")}) {
    auto it = nvls_channels.find(key);
    if (!key.empty() && it != nvls_channels.end()) return it->second;
  }
  return 0;
}

}  // namespace topsim
