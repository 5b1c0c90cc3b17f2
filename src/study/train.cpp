#include "study/train.hpp"

#include <filesystem>

#include "io/io.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

TransformerSpec find_transformer(const Workspace& workspace, const std::string& name_or_path) {
  const Catalog& catalog = workspace.catalog();
  auto bundled = catalog.transformers().find(name_or_path);
  if (bundled != catalog.transformers().end()) return bundled->second;
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    // A model file given by path is the user's own: its description and source are optional.
    auto notes = std::make_shared<std::vector<std::string>>();
    TransformerSpec model = load_transformer(name_or_path, notes);
    for (const std::string& text : *notes) workspace.note(text);
    return model;
  }
  std::vector<std::string> names;
  for (const auto& [name, model] : catalog.transformers()) names.push_back(name);
  throw UsageError(unknown_name_message("model", name_or_path, names) + " (or give a model file's path)");
}

const Topology& training_topology(const Workspace& workspace, const std::string& topology, ScaleOut scale,
                                  const std::string& gpu_model, int& gpus) {
  if (gpus < 0) throw UsageError("--gpus must be >= 1, got " + std::to_string(gpus));
  if (scale.nodes == 0 && gpus > 0) {
    ScaleOut one = scale;
    const Topology& base = workspace.topology(topology, one, gpu_model);
    const int servers = base.node_of(base.gpu_count() - 1) + 1;
    const int per_server = base.gpu_count() / servers;
    if (gpus > base.gpu_count()) {
      if (gpus % per_server != 0)
        throw UsageError(std::to_string(gpus) + " GPUs are not whole servers of " + std::to_string(per_server) + " GPUs (" +
                         base.name() + ")");
      scale.nodes = gpus / per_server;
    }
  }
  const Topology& built = workspace.topology(topology, scale, gpu_model);
  if (gpus == 0) gpus = built.gpu_count();
  if (gpus > built.gpu_count())
    throw UsageError("--gpus " + std::to_string(gpus) + ": " + built.name() + " has " + std::to_string(built.gpu_count()) +
                     " GPUs");
  return built;
}

}  // namespace topsim
