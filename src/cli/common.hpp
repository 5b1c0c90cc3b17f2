#pragma once
// What every subcommand shares: where the bundled data lives (and the Workspace that reads it),
// the --format option, and the text a command prints once it has fully succeeded.
#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <string>

#include "report/table.hpp"
#include "study/data_dir.hpp"
#include "study/workspace.hpp"

namespace topsim {

/// Adds --nodes, --nic and --nics-per-node to a subcommand.
void add_scale_out_options(CLI::App& command, ScaleOut& scale);

/// Adds --gpu MODEL, the GPU what-if beside --nic: every GPU of the topology becomes MODEL on
/// the same board (Workspace::topology's gpu_model). The one definition of the flag's help.
CLI::Option* add_gpu_option(CLI::App& command, std::string& gpu);
/// The help of --gpu, for commands whose --gpu takes a list (compare, infer) to say the same.
std::string gpu_what_if_help();

struct Context {
  DataDirSearch data;      ///< where to look for models/, topologies/, scenarios/ (study/data_dir.hpp)
  std::string models_dir;  ///< --models; empty means the data folder's models/
  std::string out;         ///< stdout of the command, printed only when it succeeds
  std::set<std::string> notes_shown;  ///< notes already written to stderr (each once per command)

  /// The command's inputs (catalog, topologies, scenarios), made on first use, after the flags
  /// above are parsed, and kept for the command.
  Workspace& workspace() const;

 private:
  mutable std::unique_ptr<Workspace> workspace_;
};

/// The NCCL line for --nccl `version` ("" for the default); Catalog's note when the release is
/// not a line of its own ("using 2.28, the nearest older") goes to stderr once per command.
const NcclVersion& nccl_option(Context& context, const std::string& version);

/// A message size given to `option` (nccl-tests syntax: 8, 1K, 256M); UsageError naming the option.
double size_option(const std::string& text, const char* option);

/// Rising counts given to `option` ("1,2,4" or "1-4,8"), each 1 or more; UsageError naming the option.
std::vector<int> counts_option(const std::string& text, const char* option);

/// Writes `text` to `path` whole or not at all (a temporary beside it, then renamed), so that a
/// failed or interrupted command leaves no half-written file. UsageError naming `option`.
void write_file_whole(const std::string& path, const std::string& text, const std::string& option);

/// Adds --format table|csv|json to a subcommand, bound to `format`.
void add_format_option(CLI::App& command, std::string& format);

/// Adds -q/--quiet (no progress line on stderr) to a subcommand, bound to `quiet`: the one
/// definition of the flag for every command that draws one (util/progress.hpp).
void add_quiet_option(CLI::App& command, bool& quiet);

/// Adds -j/--jobs N (child processes at once, default the usable CPUs) to a subcommand.
void add_jobs_option(CLI::App& command, int& jobs);

/// Subcommand table: each entry adds its subcommand and callbacks to the app.
void add_topo_command(CLI::App& app, Context& context);
void add_topo_export_command(CLI::App& topo, Context& context);  ///< topo export, under `topo`
void add_topo_list_command(CLI::App& topo, Context& context);    ///< topo list, under `topo`
void add_topo_diff_command(CLI::App& topo, Context& context);    ///< topo diff, under `topo`
void add_p2p_command(CLI::App& app, Context& context);
void add_coll_command(CLI::App& app, Context& context);
void add_scale_command(CLI::App& app, Context& context);
void add_compute_command(CLI::App& app, Context& context);
void add_validate_command(CLI::App& app, Context& context);
void add_run_command(CLI::App& app, Context& context);
void add_compare_command(CLI::App& app, Context& context);
void add_sweep_command(CLI::App& app, Context& context);
void add_regress_command(CLI::App& app, Context& context);
void add_report_command(CLI::App& app, Context& context);
void add_import_command(CLI::App& app, Context& context);
void add_calibrate_command(CLI::App& app, Context& context);
void add_nccl_command(CLI::App& app, Context& context);
void add_nccl_tuner_conf_command(CLI::App& nccl, Context& context);  ///< nccl tuner-conf, under `nccl`
void add_train_command(CLI::App& app, Context& context);
void add_plan_command(CLI::App& app, Context& context);
void add_infer_command(CLI::App& app, Context& context);
void add_models_command(CLI::App& app, Context& context);  ///< models list

}  // namespace topsim
