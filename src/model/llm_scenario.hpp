#pragma once
// A bundled LLM training study (scenarios/*.json with a "model"): one transformer, server counts,
// and variants that change the topology, GPUs, NICs or layout. Plain data; io reads it.
#include <string>
#include <vector>

#include "model/llm_spec.hpp"
#include "model/source_ref.hpp"

namespace topsim {

struct LlmVariant {
  std::string name;
  std::string topology;   ///< "" = the scenario's
  std::string gpu;        ///< GPU model replacing every GPU's, "" = none
  std::string nic;        ///< NIC model or port type, "" = none
  int nics_per_node = 0;
  LlmLayout layout;       ///< the scenario's layout with this variant's keys over it
};

struct LlmScenarioSpec {
  std::string description;
  std::string model;      ///< a transformer by bundled name or path
  std::string topology;   ///< server or cluster
  std::vector<int> nodes; ///< server counts, rising
  std::vector<LlmVariant> variants;  ///< at least one
  std::string sources;    ///< what the scenario compares and where its settings come from
  SourceRef where;
};

}  // namespace topsim
