#pragma once
// `topsim train` and `topsim plan` below the CLI: a transformer by name or file, the cluster a
// run of N GPUs needs, and one simulated iteration per layout (each in its own Simulator, so
// that a layout search can run any number of them one after another).
#include <string>
#include <vector>

#include "llm/iteration.hpp"
#include "study/workspace.hpp"

namespace topsim {

/// A bundled transformer (models/transformers.json) or a model file; InputError listing the
/// bundled names when neither.
TransformerSpec find_transformer(const Workspace& workspace, const std::string& name_or_path);

/// The topology `gpus` GPUs train on: `topology` (a server or a cluster) with as many servers as
/// they need when `scale.nodes` is 0, else as asked. `gpus` 0 means every GPU of the result,
/// and is set to that. UsageError when the servers cannot hold that many GPUs.
const Topology& training_topology(const Workspace& workspace, const std::string& topology, ScaleOut scale,
                                  const std::string& gpu_model, int& gpus);

}  // namespace topsim
