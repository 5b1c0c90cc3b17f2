#pragma once
// Fixtures of the workload tests (test_workload.cpp, test_training.cpp): generated training
// setups and lookups of a trace's ops.
#include <string>
#include <vector>

#include "helpers.hpp"
#include "model/workload_spec.hpp"
#include "workload/training.hpp"
#include "util/units.hpp"

namespace topsim::test {

inline const TraceOp* find_op(const TraceSpec& t, const std::string& name) {
  for (const TraceOp& op : t.ops)
    if (op.name == name) return &op;
  return nullptr;
}

inline std::vector<const TraceOp*> with_prefix(const TraceSpec& t, const std::string& prefix) {
  std::vector<const TraceOp*> out;
  for (const TraceOp& op : t.ops)
    if (op.name.rfind(prefix, 0) == 0) out.push_back(&op);
  return out;
}

inline TrainingSetup resnet50(const std::string& framework, TrainingSpec& spec) {
  spec.network = "resnet50";
  spec.framework = framework;
  spec.optimizer = "sgd";
  spec.batch_per_gpu = 256;
  spec.precision = "amp";
  TrainingSetup setup;
  setup.network = &catalog().network("resnet50", {});
  setup.framework = &catalog().framework(framework, {});
  setup.optimizer = &catalog().optimizer("sgd", {});
  return setup;
}

// BERT-large pre-training (seq 128, LAMB, AMP, 8 sequences per replica) in tensor-parallel pairs.
inline TrainingSetup bert_tp2(TrainingSpec& spec) {
  spec.network = "bert-large-seq128";
  spec.framework = "pytorch-ddp";
  spec.optimizer = "lamb";
  spec.batch_per_gpu = 8;
  spec.precision = "amp";
  spec.tensor_parallel = 2;
  TrainingSetup setup;
  setup.network = &catalog().network("bert-large-seq128", {});
  setup.framework = &catalog().framework("pytorch-ddp", {});
  setup.optimizer = &catalog().optimizer("lamb", {});
  return setup;
}

}  // namespace topsim::test
