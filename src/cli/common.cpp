#include "cli/common.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"
#include "validate/isolated.hpp"

namespace topsim {

Workspace& Context::workspace() const {
  if (!workspace_) {
    workspace_ = std::make_unique<Workspace>(find_data_dir(data), models_dir);
    // Notes of the inputs (a user's uncited models), each once, before any output.
    workspace_->set_note_sink([shown = std::make_shared<std::set<std::string>>()](const std::string& text) {
      if (shown->insert(text).second) std::cerr << "note: " << text << "\n";
    });
  }
  return *workspace_;
}

void add_scale_out_options(CLI::App& command, ScaleOut& scale) {
  command.add_option("--nodes", scale.nodes, "Servers: replicate the topology under its default fabric")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("--nic", scale.nic, "Replace every NIC: a NIC model or a port type (edr, hdr200, hdr100, ndr, 100gbe)");
  command.add_option("--nics-per-node", scale.nics_per_node, "Use only the first K NICs of each server")
      ->check(CLI::Range(1, 64));
}

std::string gpu_what_if_help() {
  return "every GPU becomes this model (models/gpus.json); the board, NICs, PCIe and CPUs stay, and the GPU uses as "
         "many of the board's NVLinks as it has (a note says which are dropped)";
}

CLI::Option* add_gpu_option(CLI::App& command, std::string& gpu) {
  return command.add_option("--gpu", gpu, "What-if: " + gpu_what_if_help());
}

std::vector<int> counts_option(const std::string& text, const char* option) {
  std::vector<int> counts;
  try {
    counts = parse_int_list(text);
  } catch (const ParseError& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 1) throw UsageError(std::string(option) + ": " + std::to_string(counts[i]) + " is not a count (1 or more)");
    if (i > 0 && counts[i] <= counts[i - 1])
      throw UsageError(std::string(option) + ": counts must rise (" + std::to_string(counts[i - 1]) + " then " +
                       std::to_string(counts[i]) + ")");
  }
  return counts;
}

void write_file_whole(const std::string& path, const std::string& text, const std::string& option) {
  // A device or pipe (-o /dev/null, -o /dev/stdout) is written in place: renaming a file over it
  // would replace the device, and nothing there can be left half-written.
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << text).flush()) throw UsageError(option + " " + path + ": cannot write");
    return;
  }
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw UsageError(option + " " + path + ": cannot write");
    out << text;
    if (!out.flush()) {
      out.close();
      std::remove(temporary.c_str());
      throw UsageError(option + " " + path + ": write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw UsageError(option + " " + path + ": cannot write");
  }
}

const NcclVersion& nccl_option(Context& context, const std::string& version) {
  Catalog::NcclLine line = context.workspace().catalog().nccl_line(version);
  if (!line.note.empty() && context.notes_shown.insert(line.note).second) std::cerr << "note: " << line.note << "\n";
  return *line.line;
}

double size_option(const std::string& text, const char* option) {
  try {
    return parse_cli_size_B(text);
  } catch (const ParseError& e) {
    throw UsageError(std::string(option) + ": " + e.what());
  }
}

void add_format_option(CLI::App& command, std::string& format) {
  command.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->default_val("table");
}

void add_quiet_option(CLI::App& command, bool& quiet) {
  command.add_flag("-q,--quiet", quiet,
                   "No progress line on stderr (it shows only on a terminal, once a run passes 2 s)");
}

void add_jobs_option(CLI::App& command, int& jobs) {
  jobs = usable_cpus();
  command.add_option("-j,--jobs", jobs, "Child processes to simulate in at once (default: the usable CPUs); the figures do not depend on it")
      ->check(CLI::Range(1, 1024));
}

}  // namespace topsim
