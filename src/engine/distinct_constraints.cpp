#include "engine/distinct_constraints.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <stdexcept>
#include <utility>

namespace topsim {

std::vector<bool> distinct_constraints(const std::vector<std::vector<ConstraintKey>>& routes,
                                       const std::vector<double>& capacity_Bps, const std::vector<bool>& pinned) {
  const std::size_t keys = capacity_Bps.size();
  if (pinned.size() != keys) throw std::invalid_argument("distinct_constraints: pinned and capacities differ in size");
  // Each key's users, (route, times crossed) with routes ascending, as compressed rows: the
  // constraint's left-hand side. A vector per key was a heap block per constraint.
  using User = std::pair<std::uint32_t, std::uint32_t>;
  std::vector<std::size_t> begin(keys + 1, 0);
  for (std::size_t r = 0; r < routes.size(); ++r)
    for (ConstraintKey key : routes[r]) {
      if (key >= keys) throw std::invalid_argument("distinct_constraints: key out of range");
      ++begin[key + 1];  // crossings for now; counted again as users below
    }
  for (std::size_t k = 0; k < keys; ++k) begin[k + 1] += begin[k];
  std::vector<User> users(begin[keys]);
  std::vector<std::size_t> end(begin.begin(), begin.end() - 1);  ///< one past each row's last user
  for (std::size_t r = 0; r < routes.size(); ++r)
    for (ConstraintKey key : routes[r]) {
      std::size_t& at = end[key];
      if (at > begin[key] && users[at - 1].first == r)
        ++users[at - 1].second;
      else
        users[at++] = User{static_cast<std::uint32_t>(r), 1};
    }
  struct Row {
    const User* first;
    const User* last;
    bool operator==(const Row& o) const { return std::equal(first, last, o.first, o.last); }
  };
  std::vector<bool> keep(keys, false);
  // Hashed: only which key each distinct left-hand side keeps matters, not their order, and a
  // 131,072-GPU tree has millions of them to compare.
  struct RowHash {
    std::size_t operator()(const Row& u) const {
      std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the (route, times) words
      for (const User* it = u.first; it != u.last; ++it) {
        h = (h ^ it->first) * 0x100000001b3ULL;
        h = (h ^ it->second) * 0x100000001b3ULL;
      }
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<Row, ConstraintKey, RowHash> narrowest;
  narrowest.reserve(keys);
  for (ConstraintKey key = 0; key < keys; ++key) {
    if (pinned[key]) {
      keep[key] = true;
      continue;
    }
    if (end[key] == begin[key]) continue;
    auto [it, inserted] = narrowest.emplace(Row{users.data() + begin[key], users.data() + end[key]}, key);
    if (!inserted && capacity_Bps[key] < capacity_Bps[it->second]) it->second = key;
  }
  for (const auto& entry : narrowest) keep[entry.second] = true;
  return keep;
}

}  // namespace topsim
