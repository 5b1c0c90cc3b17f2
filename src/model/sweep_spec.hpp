#pragma once
// A sweep of collectives (the "sweep" section of a scenarios/sweep-*.json file): topologies x
// GPU or server counts x operations x sizes x overrides, every combination one point.
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct SweepOverride {
  std::string name;
  std::string algo;            ///< "" = NCCL's choice
  std::string proto;           ///< "" = NCCL's choice
  std::optional<int> channels;
  bool peer_access = true;
  bool gpu_direct = true;
  SourceRef where;
};

struct SweepSpec {
  std::string description;
  std::vector<std::string> topologies;
  std::vector<int> gpus;        ///< GPU counts in one server (the first n GPUs), or
  std::vector<int> nodes;       ///< server counts under each server's default fabric
  std::vector<std::string> ops;
  std::vector<std::string> sizes;  ///< as written ("1MiB"), for point ids
  std::vector<double> sizes_B;
  std::string dtype = "float";
  std::string nccl;  ///< NCCL release whose tuner chooses ("" for the default line)
  std::vector<SweepOverride> overrides;
  SourceRef where;
};

}  // namespace topsim
