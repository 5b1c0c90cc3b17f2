// topsim: predicts what GPU servers' interconnects deliver. main() only wires the subcommands
// and maps failures to exit codes: 0 ok, 1 internal error, 2 bad input or usage.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <unistd.h>

#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#if !defined(TOPSIM_SOURCE_DIR) || !defined(TOPSIM_INSTALL_DATA_RELATIVE) || !defined(TOPSIM_VERSION)
#error "the build defines TOPSIM_SOURCE_DIR, TOPSIM_INSTALL_DATA_RELATIVE and TOPSIM_VERSION (src/CMakeLists.txt)"
#endif

namespace {

// The running binary's own path, so that an installed binary finds the prefix it lives in.
std::string executable_path(const char* argv0) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return self.string();
  self = std::filesystem::canonical(argv0, ec);
  return ec ? std::string() : self.string();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string self = executable_path(argv[0]);
  topsim::Context context;
  const char* env = std::getenv("TOPSIM_DATA_DIR");
  context.data.env = env != nullptr ? env : "";
  context.data.executable = self;
  context.data.install_relative = TOPSIM_INSTALL_DATA_RELATIVE;
  context.data.source_tree = TOPSIM_SOURCE_DIR;

  CLI::App app{"topsim: a discrete-event simulator of GPU interconnects (NVLink, NVSwitch, PCIe, InfiniBand)"};
  app.name("topsim");
  app.require_subcommand(1);
  // Subcommands inherit this: the options below are taken anywhere on the command line.
  app.fallthrough();
  app.set_version_flag("--version", [&context]() {
    topsim::DataDir data = topsim::find_data_dir(context.data);
    return std::string("topsim ") + TOPSIM_VERSION + "\ndata: " +
           (data.path.empty() ? "none found (looked at " + data.tried + ")" : data.path + " (" + data.origin + ")");
  });
  app.add_option("--models", context.models_dir, "Directory of model files (default: the data folder's models/)")
      ->check(CLI::ExistingDirectory);
  topsim::add_topo_command(app, context);
  topsim::add_p2p_command(app, context);
  topsim::add_coll_command(app, context);
  topsim::add_scale_command(app, context);
  topsim::add_compute_command(app, context);
  topsim::add_run_command(app, context);
  topsim::add_compare_command(app, context);
  topsim::add_sweep_command(app, context);
  topsim::add_regress_command(app, context);
  topsim::add_report_command(app, context);
  topsim::add_validate_command(app, context);
  topsim::add_import_command(app, context);
  topsim::add_calibrate_command(app, context);
  topsim::add_nccl_command(app, context);
  topsim::add_train_command(app, context);
  topsim::add_plan_command(app, context);
  topsim::add_infer_command(app, context);
  topsim::add_models_command(app, context);

  try {
    // CLI11 reports a mistyped command as a missing one; name it and the known ones instead.
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--models") {
        ++i;
        continue;
      }
      if (arg.empty() || arg[0] == '-') continue;
      std::vector<std::string> known;
      for (const CLI::App* sub : app.get_subcommands({})) known.push_back(sub->get_name());
      if (std::find(known.begin(), known.end(), arg) == known.end())
        throw topsim::UsageError(topsim::unknown_name_message("command", arg, known));
      break;
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\nRun 'topsim --help' or 'topsim <command> --help' for usage.\n";
    return 2;
  } catch (const topsim::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const topsim::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const topsim::ExitStatus& e) {
    std::cout << context.out << std::flush;
    std::cerr << e.what();
    return e.code();
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
  std::cout << context.out << std::flush;
  return 0;
}
