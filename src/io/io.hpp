#pragma once
// Reading topsim's JSON inputs into plain structs. This module is the only reader of JSON:
// everything above it sees Catalog / TopologySpec / ValidationSpec, never nlohmann::json.
#include <memory>
#include <string>
#include <vector>

#include "model/accuracy_ratchet.hpp"
#include "model/buying_spec.hpp"
#include "model/kernel_table.hpp"
#include "model/catalog.hpp"
#include "model/topology_spec.hpp"
#include "model/link_usage.hpp"
#include "model/result_spec.hpp"
#include "model/sweep_spec.hpp"
#include "model/validation_spec.hpp"
#include "model/llm_scenario.hpp"
#include "model/sequence_lengths.hpp"
#include "model/workload_spec.hpp"

namespace topsim {

/// Whole file as text; InputError(path, "", reason) when it cannot be read.
std::string read_text_file(const std::string& path);

/// Every *.json file of a models directory merged into one catalog, files in name order.
/// Rejects unknown keys, missing parameters, parameters without a source, bad units, and dangling
/// references between models.
/// `user_models`: a user's own folder (--models DIR), where descriptions and sources are
/// optional and what is uncited becomes Catalog::notes(); the bundled folder is strict.
Catalog load_catalog(const std::string& models_dir, bool user_models = false);
/// The *.json files of a models directory in name order (the order load_catalog reads them);
/// InputError when the directory is missing or holds none.
std::vector<std::string> model_files(const std::string& models_dir);
/// One models file's text (named `path` in errors) added to `catalog`; references between models
/// are left to Catalog::check_references(), since they may point into files not yet read.
/// `user_notes` as for load_transformer.
void add_catalog_text(Catalog& catalog, const std::string& text, const std::string& path,
                      std::shared_ptr<std::vector<std::string>> user_notes = nullptr);

/// A topology file parsed and checked for syntax, types, units and unknown keys. Semantic checks
/// (references, port counts) happen when the Topology is built.
TopologySpec load_topology_spec(const std::string& path);
/// The same from text already in memory (`path` names it in errors): imports, fuzzing.
TopologySpec parse_topology_spec(const std::string& text, const std::string& path);

/// A cluster file (topologies/clusters/): a server, a node count and a fabric.
ClusterSpec load_cluster_spec(const std::string& path);
ClusterSpec parse_cluster_spec(const std::string& text, const std::string& path);

/// Whether a topology file describes a cluster ("node" and no "devices") rather than a server.
bool is_cluster_file(const std::string& path);
bool is_cluster_text(const std::string& text, const std::string& path);

/// Published measurements and accuracy targets of a scenarios/validation/*.json file.
ValidationFile load_validation_file(const std::string& path);

/// The committed per-class accuracy (tests/accuracy-ratchet.json); classes sorted, each once.
AccuracyRatchet load_accuracy_ratchet(const std::string& path);
/// The same file's text for `ratchet`, classes in its order.
std::string accuracy_ratchet_json(const AccuracyRatchet& ratchet);

/// A trace: a per-rank graph of compute, collectives and sends (docs/formats.md, "Traces").
/// Names, ranks, groups and units are checked here; cycles when the workload is laid out.
TraceSpec load_trace(const std::string& path);
TraceSpec parse_trace(const std::string& text, const std::string& path);

/// A training scenario (scenarios/*.json). Names of networks, frameworks and topologies are
/// resolved when it runs.
ScenarioSpec load_scenario(const std::string& path);
ScenarioSpec parse_scenario(const std::string& text, const std::string& path);

/// A transformer model file: one model object with its "name" (the keys of models/transformers.json
/// entries, docs/llm.md). InputError at the offending key.
/// `user_notes`, when given, makes it a user's own file: "description" and "source" optional,
/// a missing source a note appended there (SourceRef::user_notes).
TransformerSpec load_transformer(const std::string& path, std::shared_ptr<std::vector<std::string>> user_notes = nullptr);
TransformerSpec parse_transformer(const std::string& text, const std::string& path,
                                  std::shared_ptr<std::vector<std::string>> user_notes = nullptr);
/// A sequence-length distribution file (infer --seq-dist, docs/inference.md): "description",
/// "source" and "lengths" [[tokens, samples], ...]. InputError at the offending key or element.
SequenceLengths load_sequence_lengths(const std::string& path);
SequenceLengths parse_sequence_lengths(const std::string& text, const std::string& path);
/// An LLM training study: a scenario file with a "model" (docs/llm.md, "Scenarios").
LlmScenarioSpec load_llm_scenario(const std::string& path);
LlmScenarioSpec parse_llm_scenario(const std::string& text, const std::string& path);
/// Whether a scenario file is an LLM training study (it has "model").
bool is_llm_scenario_file(const std::string& path);

/// Whether a workload file is a trace (it has "ops") rather than a training scenario.
bool is_trace_file(const std::string& path);

/// A buying comparison (scenarios/*.json whose top level has "inference"). Names of GPUs, models
/// and scenarios are checked when it runs.
bool is_buying_file(const std::string& path);
BuyingSpec load_buying(const std::string& path);

/// A kernel table (CSV) as NVIDIA's aiconfigurator tables are written (shared/reference/kernels),
/// GEMM or attention, told apart by the header; the leading gpu..kernel_source columns and the
/// trailing latency_us may be left out (docs/formats.md, "Kernel tables"). InputError naming
/// file:line, the column and what is valid for any row that does not read.
KernelTable load_kernel_table(const std::string& path);
KernelTable parse_kernel_table(const std::string& text, const std::string& path);

/// A sweep of collectives: a file with a "sweep" section (docs/formats.md §9).
bool is_sweep_file(const std::string& path);
SweepSpec load_sweep(const std::string& path);
SweepSpec parse_sweep(const std::string& text, const std::string& path);

/// What `topsim sweep` wrote (docs/formats.md §9): checked for its envelope and each row's
/// "point" and "id"; the other fields are kept as they are.
ResultFile load_result_file(const std::string& path);
ResultFile parse_result_file(const std::string& text, const std::string& path);
/// The same, or a plain array of rows (what run, compare and coll write with --format json).
ResultFile load_result_rows(const std::string& path);
ResultFile parse_result_rows(const std::string& text, const std::string& path);

/// What `run`/`coll --link-usage` wrote: a run's per-link load in time bins (docs/formats.md §9).
bool is_link_usage_file(const std::string& path);
LinkUsage load_link_usage(const std::string& path);

}  // namespace topsim
