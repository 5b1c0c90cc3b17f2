#pragma once
// Where each number of models/*.json comes from, as data: a cited fact, an assumption, a
// constant solved by `topsim calibrate` from declared validation rows, or a fitted constant of
// another model carried over with check rows that back it. Plain data: no JSON here.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct Provenance {
  enum class Kind { cited, assumed, fitted, carried };
  Kind kind = Kind::cited;
  std::string text;  ///< the citation, the assumption and its source, or how the rows pin it
  // fitted: written by `topsim calibrate`
  std::vector<std::string> solved_from;  ///< calibration row ids that pin the value
  std::string method;                    ///< "exact" (one row) or "least_squares" (several)
  std::optional<double> residual;        ///< RMS of (predicted / measured - 1) over solved_from
  std::optional<double> prior;           ///< value (as written, same unit) when no row pins it
  std::string prior_source;              ///< where the prior comes from (NCCL's constant, a datasheet)
  // carried
  std::string carried_from;            ///< id of the fitted constant whose value this one takes
  std::vector<std::string> backed_by;  ///< check rows on this constant's own hardware
};

const char* to_string(Provenance::Kind kind);

/// One parameter of models/*.json whose value is not a cited fact: an assumption, a fitted or a
/// carried constant. Its id is "<file stem>:<model>.<dotted parameter>", e.g.
/// "nccl:ampere.protocols.ll.efficiency"; the model it belongs to ("nccl:ampere") is its thing.
struct ModelConstant {
  std::string id;
  std::string thing;
  SourceRef value_at;       ///< the value in its models file
  SourceRef provenance_at;  ///< its entry under "sources"
  bool has_value = false;   ///< false for an assumption cited on a parent key ("copy")
  double value = 0;         ///< as written in the file, in `unit`
  std::string unit;         ///< unit suffix of a quantity ("us", "GBps"); "" for a plain number
  Provenance provenance;
};

}  // namespace topsim
