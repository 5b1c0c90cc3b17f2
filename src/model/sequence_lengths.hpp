#pragma once
// A distribution of sequence lengths, tokens per sample, as a data set gives them to an encoder
// (e.g. SQuAD v1.1 as MLPerf's BERT harness tokenizes it): infer --seq-dist FILE and the
// "seq_dist" of an inference validation row. File format: docs/inference.md.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct SequenceLengths {
  std::string description;
  std::string source;  ///< where the lengths come from (counted, or how they were derived)
  /// (length in tokens, samples of that length): lengths >= 1 and distinct, counts > 0.
  std::vector<std::pair<int, double>> lengths;
  SourceRef where;

  bool empty() const { return lengths.empty(); }
  double samples() const {
    double n = 0;
    for (const auto& [length, count] : lengths) n += count;
    return n;
  }
  /// E[s], tokens: what a packed batch's GEMMs run per sequence.
  double mean() const {
    double sum = 0;
    for (const auto& [length, count] : lengths) sum += length * count;
    return sum / samples();
  }
  int longest() const {
    int longest = 0;
    for (const auto& entry : lengths) longest = std::max(longest, entry.first);
    return longest;
  }
};

}  // namespace topsim
