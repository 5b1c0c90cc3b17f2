#include "engine/representatives.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace topsim {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// Separates an op's predecessor colours from its crossings in its signature.
constexpr std::uint64_t kSeparator = std::numeric_limits<std::uint64_t>::max();

std::uint64_t bits(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Colours by signature, equal signatures one colour, numbered in order of first appearance.
// Signatures are compared whole (a hash only finds candidates), so distinct ones never merge.
class Palette {
 public:
  std::uint32_t colour(const std::vector<std::uint64_t>& signature) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a offset basis, over 64-bit words
    for (std::uint64_t w : signature) h = (h ^ w) * 1099511628211ULL;
    auto [first, last] = by_hash_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      std::size_t begin = offsets_[it->second], end = offsets_[it->second + 1];
      if (end - begin == signature.size() && std::equal(signature.begin(), signature.end(), words_.begin() + begin))
        return it->second;
    }
    auto id = static_cast<std::uint32_t>(offsets_.size() - 1);
    words_.insert(words_.end(), signature.begin(), signature.end());
    offsets_.push_back(words_.size());
    by_hash_.emplace(h, id);
    return id;
  }
  std::size_t size() const { return offsets_.size() - 1; }

 private:
  std::unordered_multimap<std::uint64_t, std::uint32_t> by_hash_;
  std::vector<std::uint64_t> words_;
  std::vector<std::size_t> offsets_{0};
};

using Crossing = std::pair<std::uint32_t, std::uint32_t>;  ///< (index, times)
using Crossings = std::vector<Crossing>;                    ///< index ascending

/// Crossings of many items in one array (compressed rows): a cluster's tree crosses a million
/// constraints, and a vector each cost a heap block per constraint.
struct CrossingRows {
  std::vector<std::size_t> begin{0};  ///< row r is [begin[r], begin[r + 1])
  std::vector<Crossing> all;
  struct Row {
    const Crossing* first;
    const Crossing* last;
    const Crossing* begin() const { return first; }
    const Crossing* end() const { return last; }
  };
  Row operator[](std::size_t r) const { return Row{all.data() + begin[r], all.data() + begin[r + 1]}; }
};

// Appends (colour of each entry, summed times) to `signature`, colours ascending.
template <typename Range>
void append_by_colour(const Range& crossings, const std::vector<std::uint32_t>& colour_of,
                      std::vector<std::pair<std::uint32_t, std::uint64_t>>& scratch, std::vector<std::uint64_t>& signature) {
  scratch.clear();
  for (const auto& [index, times] : crossings) scratch.emplace_back(colour_of[index], times);
  std::sort(scratch.begin(), scratch.end());
  for (std::size_t i = 0; i < scratch.size();) {
    std::uint64_t sum = 0;
    std::size_t j = i;
    for (; j < scratch.size() && scratch[j].first == scratch[i].first; ++j) sum += scratch[j].second;
    signature.push_back(scratch[i].first);
    signature.push_back(sum);
    i = j;
  }
}

}  // namespace

Representatives representatives(const Schedule& schedule, const std::vector<OpConstraints>& ops,
                                const std::vector<double>& key_capacity_Bps, int max_rounds) {
  const std::size_t n = schedule.ops.size();
  if (ops.size() != n) throw std::invalid_argument("representatives: one OpConstraints per op");
  // Constraints by local index (first crossing order), each op's crossings and each
  // constraint's crossers, with times summed.
  std::vector<std::uint32_t> local(key_capacity_Bps.size(), kNone);
  std::vector<ConstraintKey> key_of_local;
  std::vector<Crossings> op_crossings(n);
  std::vector<std::uint32_t> crossed;
  for (std::size_t i = 0; i < n; ++i) {
    if (ops[i].keys == nullptr) continue;
    crossed.clear();
    crossed.reserve(ops[i].keys->size() + 1);
    auto cross = [&](ConstraintKey key) {
      if (key >= local.size()) throw std::invalid_argument("representatives: key out of range");
      if (local[key] == kNone) {
        local[key] = static_cast<std::uint32_t>(key_of_local.size());
        key_of_local.push_back(key);
      }
      crossed.push_back(local[key]);
    };
    for (ConstraintKey key : *ops[i].keys) cross(key);
    if (ops[i].also != OpConstraints::kNoKey) cross(ops[i].also);
    std::sort(crossed.begin(), crossed.end());
    // Stored at its size: a tree's composite crosses a million constraints, grown by doubling
    // it held up to twice that.
    std::size_t distinct = 0;
    for (std::size_t a = 0; a < crossed.size(); ++a) distinct += a == 0 || crossed[a] != crossed[a - 1] ? 1 : 0;
    op_crossings[i].reserve(distinct);
    for (std::size_t a = 0; a < crossed.size();) {
      std::size_t b = a;
      while (b < crossed.size() && crossed[b] == crossed[a]) ++b;
      op_crossings[i].emplace_back(crossed[a], static_cast<std::uint32_t>(b - a));
      a = b;
    }
  }
  const std::size_t keys = key_of_local.size();
  // Each key's crossers, ops ascending, as compressed rows.
  CrossingRows key_crossers;
  key_crossers.begin.assign(keys + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& [k, times] : op_crossings[i]) ++key_crossers.begin[k + 1];
  for (std::size_t k = 0; k < keys; ++k) key_crossers.begin[k + 1] += key_crossers.begin[k];
  key_crossers.all.resize(key_crossers.begin[keys]);
  {
    std::vector<std::size_t> next(key_crossers.begin.begin(), key_crossers.begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& [k, times] : op_crossings[i]) key_crossers.all[next[k]++] = Crossing{static_cast<std::uint32_t>(i), times};
  }

  std::vector<std::uint32_t> op_colour(n), key_colour(keys);
  std::vector<std::uint64_t> signature;
  {
    Palette palette;
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = schedule.ops[i];
      signature = {static_cast<std::uint64_t>(op.kind), bits(op.kind == Op::Kind::delay ? 0.0 : op.size_B),
                   bits(op.kind == Op::Kind::delay ? op.delay_s : 0.0), bits(ops[i].latency_s)};
      op_colour[i] = palette.colour(signature);
    }
    Palette capacities;
    for (std::size_t k = 0; k < keys; ++k) key_colour[k] = capacities.colour({bits(key_capacity_Bps[key_of_local[k]])});
  }
  std::size_t op_colours = 0, key_colours = 0;
  for (std::uint32_t c : op_colour) op_colours = std::max<std::size_t>(op_colours, c + 1);
  for (std::uint32_t c : key_colour) key_colours = std::max<std::size_t>(key_colours, c + 1);

  Representatives out;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> scratch;
  std::vector<std::uint32_t> next_op(n), next_key(keys);
  for (int round = 0; round < max_rounds && !out.stable; ++round) {
    Palette key_palette, op_palette;
    for (std::size_t k = 0; k < keys; ++k) {
      signature = {key_colour[k]};
      append_by_colour(key_crossers[k], op_colour, scratch, signature);
      next_key[k] = key_palette.colour(signature);
    }
    // Forward: an op's predecessors come earlier, so their new colours are known.
    std::vector<std::uint64_t> before;
    for (std::size_t i = 0; i < n; ++i) {
      signature = {op_colour[i]};
      before.clear();
      for (std::size_t p : schedule.ops[i].after) before.push_back(next_op[p]);
      std::sort(before.begin(), before.end());
      before.erase(std::unique(before.begin(), before.end()), before.end());
      signature.insert(signature.end(), before.begin(), before.end());
      signature.push_back(kSeparator);
      append_by_colour(op_crossings[i], next_key, scratch, signature);
      next_op[i] = op_palette.colour(signature);
    }
    out.stable = op_palette.size() == op_colours && key_palette.size() == key_colours;
    op_colours = op_palette.size();
    key_colours = key_palette.size();
    op_colour.swap(next_op);
    key_colour.swap(next_key);
  }
  if (!out.stable) return out;

  // Classes numbered by lowest op index; constraint classes by lowest key.
  std::vector<std::uint32_t> class_of_colour(op_colours, kNone);
  out.class_of_op.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t& c = class_of_colour[op_colour[i]];
    if (c == kNone) {
      c = static_cast<std::uint32_t>(out.representative.size());
      out.representative.push_back(i);
    }
    out.class_of_op[i] = c;
  }
  std::vector<ConstraintKey> lowest(key_colours, std::numeric_limits<ConstraintKey>::max());
  std::vector<std::uint32_t> lowest_local(key_colours, kNone);
  for (std::size_t k = 0; k < keys; ++k)
    if (key_of_local[k] < lowest[key_colour[k]]) {
      lowest[key_colour[k]] = key_of_local[k];
      lowest_local[key_colour[k]] = static_cast<std::uint32_t>(k);
    }
  std::vector<std::uint32_t> order(key_colours);
  for (std::uint32_t c = 0; c < key_colours; ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return lowest[a] < lowest[b]; });
  out.constraint.resize(key_colours);
  out.crossings.resize(out.representative.size());
  for (std::uint32_t cls = 0; cls < key_colours; ++cls) {
    std::uint32_t colour = order[cls];
    out.constraint[cls] = lowest[colour];
    // M(C, F): how often the ops of class F cross this one constraint of C, the same for every
    // constraint of C (the partition is equitable).
    for (const auto& [op, times] : key_crossers[lowest_local[colour]]) {
      auto& row = out.crossings[out.class_of_op[op]];
      if (!row.empty() && row.back().first == cls)
        row.back().second += times;
      else
        row.emplace_back(cls, times);
    }
  }
  return out;
}

}  // namespace topsim
