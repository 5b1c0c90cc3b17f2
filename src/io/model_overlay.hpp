#pragma once
// A models overlay: a directory holding only overlay.json, which names constants of the bundled
// models/ with the values `topsim calibrate --measured` solved for one machine and where each
// came from. `--models DIR` on such a directory loads the bundled models/ and sets these values
// on them; every other constant and model is the bundled one (docs/calibrate-your-cluster.md).
#include <string>
#include <vector>

#include "io/model_set.hpp"

namespace topsim {

/// Where a solved constant came from: required of every overlay constant (a value without it is
/// an InputError when loaded). No date: outputs stay deterministic; the log names say when.
struct OverlayProvenance {
  std::string command;              ///< the topsim command line that solved it
  std::vector<std::string> logs;    ///< the nccl-tests files its rows came from
  std::vector<std::string> rows;    ///< the row ids that pin it
  std::vector<std::string> lines;   ///< "file:line" of each row's result line
  std::string method;               ///< "exact" or "least_squares"
  double residual = 0;              ///< RMS of (predicted / measured - 1) over `rows`
};

struct OverlayConstant {
  std::string id;        ///< a constant of the bundled models ("nccl:ampere.nvlink_efficiency")
  double value = 0;      ///< in the constant's written unit
  std::string unit;      ///< that unit ("us"; "" for a plain number)
  double bundled = 0;    ///< the bundled value it replaces (for the reader; not applied)
  OverlayProvenance provenance;
};

constexpr const char* kOverlayFile = "overlay.json";

/// Whether `dir` is an overlay (holds overlay.json).
bool is_overlay_dir(const std::string& dir);

/// Reads DIR/overlay.json and sets its values on `base` (the bundled models). InputError at the
/// JSON pointer of a constant that `base` lacks, whose unit differs, or that has no provenance.
std::vector<OverlayConstant> apply_overlay(ModelSet& base, const std::string& dir);

/// overlay.json's text for `constants` (in the order given).
std::string overlay_json(const std::string& description, const std::vector<OverlayConstant>& constants);

}  // namespace topsim
