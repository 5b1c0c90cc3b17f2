#pragma once
// What an importer learned about a real machine, before any model is chosen: sockets, the PCIe
// tree, GPUs, NICs and NVLinks by index, each with the place in the input it came from. Both
// importers (nvidia-smi topo -m, NCCL's topology XML) produce this; build_topology_spec() turns it
// into a TopologySpec with models from the catalog.
#include <optional>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// A place in an imported file: "12" (a line) or "14" with a path prefix for XML elements.
struct ImportRef {
  std::string line;     ///< 1-based line number as text, "" when unknown
  std::string element;  ///< XML element path ("/system/cpu[1]/pci[2]/gpu"), "" for text input
};

/// One NUMA node of a socket: a `cpu` device. Nodes of one package are one socket split by
/// sub-NUMA clustering (NODE between them); nodes of different packages read SYS.
struct ImportedSocket {
  std::string cores;             ///< CPU affinity as nvidia-smi prints it ("0-19,40-59"), "" unknown
  std::optional<int> numa_node;
  int package = -1;              ///< the physical socket; -1: a socket of its own
  /// What the input says about the processor (NCCL XML: vendor, familyid, modelid), "" / -1 unknown.
  std::string cpu_vendor;
  int cpu_family = -1;
  int cpu_model = -1;
  ImportRef where;
};

/// A PCIe switch (or bridge): under another switch (parent >= 0) or on its socket's root port.
struct ImportedSwitch {
  int socket = 0;
  int parent = -1;
  ImportRef where;
};

/// A GPU or NIC: on a switch (pcie_switch >= 0) or directly on its socket's root port.
struct ImportedEndpoint {
  std::string name;        ///< NIC: its name (mlx5_0), "" when the input gives none
  std::string model;       ///< "" when the input does not say (options and defaults decide)
  int socket = 0;
  int pcie_switch = -1;
  std::optional<double> speed_bps;  ///< NIC port speed the input states, bits/s
  int ports = 1;                    ///< NIC: ports of the card (NCCL XML: <net> elements in one <nic>)
  std::string pci_device;           ///< PCI device id ("0x20b5"), "" when the input gives none
  std::string sm;                   ///< GPU: compute capability as NCCL writes it ("80"), "" unknown
  ImportRef where;
};

struct ImportedNvlink {
  int a = 0;  ///< GPU indices
  int b = 0;
  int count = 1;
  ImportRef where;
};

struct ImportedMachine {
  std::string file;
  std::string format;  ///< "nvidia-smi topo -m" or "NCCL topology XML", for descriptions
  std::vector<ImportedSocket> sockets;
  std::vector<ImportedSwitch> switches;
  std::vector<ImportedEndpoint> gpus;
  std::vector<ImportedEndpoint> nics;
  std::vector<ImportedNvlink> nvlinks;        ///< direct GPU-GPU links, a < b
  std::vector<int> nvswitch_links;            ///< per GPU, NVLinks into NVSwitches; empty: none
  std::optional<bool> shared_host_bridge;     ///< PHB seen: true, NODE seen: false, else unknown
  std::vector<std::string> notes;             ///< what the reader concluded that the input did not say
};

/// The physical socket of NUMA node `socket` (a node without a package is a socket of its own),
/// and how many sockets the machine has.
int package_of(const ImportedMachine& m, std::size_t socket);
int socket_count(const ImportedMachine& m);

/// "file:line" of an imported element, for a SourceRef.
std::string import_place(const ImportedMachine& m, const ImportRef& where);

/// The file and line of an imported element, as InputError arguments.
[[noreturn]] void import_fail(const std::string& file, const ImportRef& where, const std::string& message);

struct ImportOptions {
  std::string gpu;    ///< --gpu: GPU model of every GPU ("" : what the input says, or inferred)
  std::string nic;    ///< --nic: NIC model of every NIC
  std::string like;   ///< --like: bundled server (name) whose host models to copy; "" picks one
  std::string name;   ///< topology name; "" derives it from the output file
  bool pcie_only = false;  ///< --pcie-only: a topo -mp matrix (no NVLinks shown) is what is meant
};

/// The result of an import: the spec and what the importer chose that the input did not say.
struct ImportResult {
  TopologySpec spec;
  std::vector<std::string> notes;  ///< one line each, printed on stderr
};

/// Chooses models and writes the spec: GPUs from the input or options, host models (CPU, socket
/// link, PCIe switch and links, NVSwitch planes) copied from a reference bundled server with the
/// same GPU model (`servers`: every bundled server, name order). InputError/UsageError when
/// something cannot be decided.
ImportResult build_topology_spec(const ImportedMachine& machine, const Catalog& catalog,
                                 const std::vector<TopologySpec>& servers, const ImportOptions& options);

}  // namespace topsim
