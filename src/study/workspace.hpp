#pragma once
// Where a command's inputs come from: the data folder (topologies/, scenarios/) and the models
// folder, the model catalog parsed from it once, and topologies resolved by name, path or
// "flat:N:GPU" with their what-ifs, each built once per Workspace.
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "io/model_set.hpp"
#include "model/catalog.hpp"
#include "model/faults.hpp"
#include "study/data_dir.hpp"
#include "topology/topology.hpp"

namespace topsim {

class Workspace {
 public:
  /// `models_dir` empty means data_dir/models.
  explicit Workspace(std::string data_dir, std::string models_dir = "");
  /// The data folder find_data_dir chose; when it found none, data_dir() throws saying where it
  /// looked (so that commands given every file by path still run).
  Workspace(const DataDir& data, std::string models_dir);

  /// The folder holding models/, topologies/, scenarios/; InputError when none was found.
  const std::string& data_dir() const;
  std::string models() const { return models_dir_.empty() ? data_dir() + "/models" : models_dir_; }

  /// The models folder, parsed on first use and kept; InputError (not kept) when it is bad. An
  /// overlay folder (holding overlay.json, io/model_overlay.hpp) is the bundled models with its
  /// values set on them. A whole --models folder is the user's own: what it leaves uncited goes
  /// to note() as it loads.
  const Catalog& catalog() const;
  /// The models as editable documents, the overlay applied when models() is one.
  ModelSet model_set() const;
  /// Whether --models names an overlay rather than a whole models folder.
  bool models_are_overlay() const;
  /// Where notes for the user go (the CLI writes them to stderr); by default nowhere.
  void set_note_sink(std::function<void(const std::string&)> sink) { note_sink_ = std::move(sink); }
  void note(const std::string& text) const {
    if (note_sink_) note_sink_(text);
  }
  /// How many times this Workspace has parsed its models folder (1 after any use; 0 before).
  int catalog_parses() const { return catalog_parses_; }

  /// A path to a topology or cluster file, the name of a bundled one ("dgx-a100"), or a
  /// generated "flat:N:GPU". `scale` replicates a server under its default fabric (scale_out)
  /// or overrides a cluster's node count and NICs; `gpu_model`, when given, replaces every
  /// GPU's model on the same board, its NVLinks trimmed to the model's (topology/gpu_swap.hpp;
  /// what was dropped goes to note()); `faults` fail, degrade or slow parts of it (applied to the spec
  /// before it is validated, routed and searched). Built once per (name, scale, gpu_model,
  /// faults) and kept as long as the Workspace: the reference stays valid (a 100,000-GPU
  /// cluster is never copied).
  const Topology& topology(const std::string& path_or_name, const ScaleOut& scale = {}, const std::string& gpu_model = "",
                           const Faults& faults = {}) const;
  /// The same against the models given, never kept (calibration tries many values of one
  /// constant; each trial's catalog is another).
  Topology topology(const std::string& path_or_name, const ScaleOut& scale, const std::string& gpu_model,
                    const Catalog& models, const Faults& faults = {}) const;
  /// How many topologies this Workspace has built (cache misses of topology()).
  int topology_builds() const { return topology_builds_; }

  /// The file a topology name or path stands for; InputError listing the bundled names.
  std::string topology_path(const std::string& path_or_name) const;
  /// A path to a scenario, or the name of a bundled one ("resnet50-dgx-a100").
  std::string scenario_path(const std::string& path_or_name) const;

 private:
  std::string data_dir_;
  std::string models_dir_;
  std::string not_found_;  ///< where find_data_dir looked, when data_dir_ is empty
  // Caches of pure functions of the folders (read once per command): const methods fill them.
  std::function<void(const std::string&)> note_sink_;
  mutable std::optional<Catalog> catalog_;
  mutable int catalog_parses_ = 0;
  mutable std::map<std::string, Topology> topologies_;  ///< by cache_key()
  mutable int topology_builds_ = 0;
};

}  // namespace topsim
