#include "engine/distinct_constraints.hpp"

#include <map>
#include <stdexcept>
#include <utility>

namespace topsim {

std::vector<bool> distinct_constraints(const std::vector<std::vector<ConstraintKey>>& routes,
                                       const std::vector<double>& capacity_Bps, const std::vector<bool>& pinned) {
  const std::size_t keys = capacity_Bps.size();
  if (pinned.size() != keys) throw std::invalid_argument("distinct_constraints: pinned and capacities differ in size");
  // users[key]: (route, times crossed), routes ascending: the constraint's left-hand side.
  using Users = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  std::vector<Users> users(keys);
  for (std::size_t r = 0; r < routes.size(); ++r)
    for (ConstraintKey key : routes[r]) {
      if (key >= keys) throw std::invalid_argument("distinct_constraints: key out of range");
      Users& u = users[key];
      if (!u.empty() && u.back().first == r)
        ++u.back().second;
      else
        u.emplace_back(static_cast<std::uint32_t>(r), 1);
    }
  std::vector<bool> keep(keys, false);
  std::map<Users, ConstraintKey> narrowest;
  for (ConstraintKey key = 0; key < keys; ++key) {
    if (pinned[key]) {
      keep[key] = true;
      continue;
    }
    if (users[key].empty()) continue;
    auto [it, inserted] = narrowest.emplace(std::move(users[key]), key);
    if (!inserted && capacity_Bps[key] < capacity_Bps[it->second]) it->second = key;
  }
  for (const auto& entry : narrowest) keep[entry.second] = true;
  return keep;
}

}  // namespace topsim
