#pragma once
// A buying comparison (scenarios/*.json with "inference"): GPU models side by side on training
// scenarios and inference requests, with hourly prices the user edits. Plain data.
#include <map>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct BuyingInference {
  std::string name;                 ///< the row label
  std::string model;                ///< network or transformer
  std::string precision = "fp16";
  std::string framework = "tensorrt";
  std::string scenario = "offline"; ///< offline, server, single-stream
  int seq = 0;                      ///< transformers: tokens per sequence (0: the model's)
  int batch = 0;                    ///< 0: the scenario picks
  SourceRef where;
};

struct BuyingSpec {
  std::string description;
  std::vector<std::string> gpus;          ///< GPU models compared, the first the reference
  std::string topology;                   ///< the server training runs in, its GPUs replaced
  std::map<std::string, double> prices;   ///< US dollars per GPU-hour
  std::string price_note;                 ///< where the prices come from (or that they are examples)
  std::vector<std::string> training;      ///< training scenarios (bundled names or paths), one GPU each
  std::vector<BuyingInference> inference;
  SourceRef where;
};

}  // namespace topsim
