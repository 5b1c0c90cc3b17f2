#include "engine/distinct_constraints.hpp"

#include <cstdint>
#include <unordered_map>
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
  // Hashed: only which key each distinct left-hand side keeps matters, not their order, and a
  // 131,072-GPU tree has millions of them to compare.
  struct UsersHash {
    std::size_t operator()(const Users& u) const {
      std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the (route, times) words
      for (const auto& [route, times] : u) {
        h = (h ^ route) * 0x100000001b3ULL;
        h = (h ^ times) * 0x100000001b3ULL;
      }
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<Users, ConstraintKey, UsersHash> narrowest;
  narrowest.reserve(keys);
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
