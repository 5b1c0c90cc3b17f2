// topsim import nvidia-smi|nccl-xml FILE: a topology file from what a machine says about itself.
// Nothing is written unless the result loads as a topology and, for topo -m, reproduces every
// cell of the matrix it came from. topsim import nccl-tests LOG...: validation rows from what
// nccl-tests printed on it.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "cli/measured_checks.hpp"
#include "cli/validate_measured.hpp"
#include "collectives/op.hpp"
#include "interop/nccl_tests_rows.hpp"
#include "interop/nccl_xml.hpp"
#include "interop/nvidia_smi.hpp"
#include "interop/topology_writer.hpp"
#include "io/io.hpp"
#include "routing/topo_matrix.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

struct ImportArgs {
  std::string input;
  std::string output;
  ImportOptions options;
};

// Every bundled server (not clusters), in name order: the references for host models.
std::vector<TopologySpec> bundled_servers(const Context& context) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(context.workspace().data_dir() + "/topologies", ec))
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<TopologySpec> servers;
  for (const std::string& path : paths)
    if (!is_cluster_file(path)) servers.push_back(load_topology_spec(path));
  return servers;
}

// The generated text through the normal loader (from memory, named after the input), then built.
Topology load_back(const std::string& json, const std::string& input, const Catalog& catalog) {
  try {
    return Topology::build(parse_topology_spec(json, input), catalog);
  } catch (const InputError& e) {
    throw InputError(input, "", "the imported topology is not valid: " + e.message() + " (at " + e.pointer() + ")");
  }
}

// Each cell of the input against what topsim prints for the imported topology.
void check_matrix(const SmiMatrix& want, const Topology& t) {
  TopoMatrix got = topo_matrix(t);
  for (std::size_t r = 0; r < want.labels.size(); ++r)
    for (std::size_t c = 0; c < want.labels.size(); ++c)
      if (got.cells[r][c] != want.cells[r][c])
        throw InputError(want.file, std::to_string(want.lines[r]),
                         "row " + want.labels[r] + ", column " + want.labels[c] + " reads " + want.cells[r][c] +
                             " but the imported topology gives " + got.cells[r][c] +
                             " (see docs/import.md for what topsim can reproduce)");
}

void run_import(Context& context, const ImportArgs& args, bool xml) {
  std::string text = read_text_file(args.input);
  ImportedMachine machine;
  std::optional<SmiMatrix> matrix;
  if (xml) {
    machine = parse_nccl_xml(text, args.input);
  } else {
    matrix = parse_nvidia_smi(text, args.input);
    check_smi_view(*matrix, args.options.pcie_only);
    machine = smi_machine(*matrix);
  }
  const Catalog& catalog = context.workspace().catalog();
  ImportOptions options = args.options;
  if (options.name.empty())
    options.name = args.output.empty() ? "imported" : std::filesystem::path(args.output).stem().string();
  ImportResult result = build_topology_spec(machine, catalog, bundled_servers(context), options);
  std::string json = write_topology_json(result.spec);
  Topology topology = load_back(json, args.input, catalog);
  if (matrix) check_matrix(*matrix, topology);
  // Notes only once everything succeeded, so that a failed import prints its error alone.
  if (!args.output.empty()) write_file_whole(args.output, json, "-o");
  for (const std::string& note : result.notes) std::cerr << "note: " << note << "\n";
  if (args.output.empty()) {
    context.out = json;
  } else {
    std::cerr << "wrote " << args.output << ": " << topology.gpu_count() << " GPUs, " << topology.nics().size()
              << " NICs, " << topology.device_count() << " devices, " << topology.links().size() << " links\n";
  }
}

struct NcclTestsImportArgs {
  std::vector<std::string> logs;
  std::string output;
  std::string topology;
  int nodes = 0;
  std::string op;
  std::string gpu;  ///< --gpu: the model the logs ran on, replacing the topology's in every row
};

// Validation rows from nccl-tests output; written only when every log read whole.
void run_nccl_tests_import(Context& context, const NcclTestsImportArgs& args) {
  if (!args.op.empty()) parse_op(args.op);
  std::vector<NcclTestsLog> logs;
  for (const std::string& file : args.logs) logs.push_back(parse_nccl_tests_output(read_text_file(file), file));
  // Each run must fit the topology its rows name, on the GPUs it names, as validate --measured
  // would run it.
  ScaleOut asked;
  asked.nodes = args.nodes;
  for (const NcclTestsLog& log : logs)
    for (const NcclTestsRun& run : log.runs)
      if (!run.points.empty()) {
        const Topology& t = context.workspace().topology(args.topology, run_scale_out(run, log.file, asked), args.gpu);
        check_run_gpus(context.workspace(), run, log.file, t, gpus_of_run(run, log.file, t, args.topology), args.topology,
                       args.gpu);
      }
  MeasuredRows rows = measured_rows(logs, args.topology, args.nodes, args.op, args.gpu);
  std::string json = write_validation_json(rows);
  if (args.output.empty()) {
    context.out = json;
    return;
  }
  write_file_whole(args.output, json, "-o");
  std::size_t runs = 0;
  for (const NcclTestsLog& log : logs) runs += log.runs.size();
  std::cerr << "wrote " << args.output << ": " << rows.rows.size() << " rows from " << runs << (runs == 1 ? " run" : " runs")
            << " of " << logs.size() << (logs.size() == 1 ? " log" : " logs") << "\n";
}

void add_nccl_tests_import(CLI::App& import, Context& context) {
  CLI::App* sub = import.add_subcommand("nccl-tests", "Validation rows from what nccl-tests' *_perf binaries print (or their -J JSON)");
  auto args = std::make_shared<NcclTestsImportArgs>();
  sub->add_option("logs", args->logs, "nccl-tests output files (several runs per file, MPI prefixes allowed)")->required();
  sub->add_option("-o,--output", args->output, "The validation file to write (default: standard output)");
  sub->add_option("--topology", args->topology, "The topology the logs ran on (a path or bundled name), written into each row")
      ->required();
  sub->add_option("--nodes", args->nodes, "Servers of that topology (default: the log's host count when it is more than one)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--op", args->op, "The operation of runs that do not name their program (allreduce, allgather, ...)");
  add_gpu_option(*sub, args->gpu);
  sub->callback([args, &context]() { run_nccl_tests_import(context, *args); });
}

}  // namespace

void add_import_command(CLI::App& app, Context& context) {
  CLI::App* import = app.add_subcommand("import", "Write a topology file from nvidia-smi topo -m text or NCCL's topology XML, or validation rows from nccl-tests output");
  import->require_subcommand(1);
  for (bool xml : {false, true}) {
    CLI::App* sub = import->add_subcommand(xml ? "nccl-xml" : "nvidia-smi",
                                           xml ? "NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes)"
                                               : "What `nvidia-smi topo -m` prints");
    auto args = std::make_shared<ImportArgs>();
    sub->add_option("file", args->input, xml ? "The XML file" : "The saved output of nvidia-smi topo -m")->required();
    sub->add_option("-o,--output", args->output, "The topology file to write (default: standard output)");
    sub->add_option("--gpu", args->options.gpu,
                    xml ? "GPU model of every GPU (default: from each GPU's sm)"
                        : "GPU model of every GPU (required unless the NVLinks match a bundled server)");
    sub->add_option("--nic", args->options.nic, "NIC model of every NIC (default: by port speed, or the reference server's)");
    sub->add_option("--like", args->options.like,
                    "Bundled server whose CPU, socket link, PCIe and NVSwitch models to copy (default: one with the same GPUs)");
    sub->add_option("--name", args->options.name, "Topology name (default: the output file's stem)");
    if (!xml)
      sub->add_flag("--pcie-only", args->options.pcie_only,
                    "The matrix is nvidia-smi topo -mp (PCIe paths only): import it as a machine without NVLink");
    sub->callback([args, xml, &context]() {
      run_import(context, *args, xml);
    });
  }
  add_nccl_tests_import(*import, context);
}

}  // namespace topsim
