// topsim: predicts what GPU servers' interconnects deliver. main() only wires the subcommands
// and maps failures to exit codes: 0 ok, 1 internal error, 2 bad input or usage.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

#ifndef TOPSIM_DATA_DIR
#error "TOPSIM_DATA_DIR must name the directory holding models/ and topologies/"
#endif

int main(int argc, char** argv) {
  topsim::Context context;
  const char* env = std::getenv("TOPSIM_DATA_DIR");
  context.data_dir = env != nullptr && *env != '\0' ? env : TOPSIM_DATA_DIR;

  CLI::App app{"topsim: a discrete-event simulator of GPU interconnects (NVLink, NVSwitch, PCIe, InfiniBand)"};
  app.name("topsim");
  app.require_subcommand(1);
  app.set_version_flag("--version", "topsim 0.1.0");
  app.add_option("--models", context.models_dir, "Directory of model files (default: the bundled models/)")
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
