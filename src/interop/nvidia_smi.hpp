#pragma once
// `nvidia-smi topo -m` as topsim reads it (docs/import.md): the GPU/NIC matrix, the affinity
// columns and the NIC legend, then the machine those cells imply.
#include <optional>
#include <string>
#include <vector>

#include "interop/machine.hpp"

namespace topsim {

/// The matrix as printed. Row r and column r are the same device; GPUs come before NICs.
struct SmiMatrix {
  std::string file;
  std::vector<std::string> labels;      ///< "GPU0".., "NIC0".. (or the NIC's name in older versions)
  std::vector<std::string> nic_names;   ///< per NIC: from the NIC legend, else its label
  std::vector<std::vector<std::string>> cells;  ///< "X", "NV2", "PIX", ...; SOC is read as SYS
  std::vector<int> lines;               ///< 1-based line of each row
  std::vector<std::string> cpu_affinity;   ///< per row, "" when absent, empty or N/A
  std::vector<std::string> numa_affinity;  ///< per row, "" when absent, empty or N/A; a node or a list
  int gpus = 0;
  int legend_line = 0;                  ///< 1-based line of the relation legend ("X = Self"), 0: none
  bool legend_names_nvlinks = false;    ///< the legend has its "NV#" line (topo -m; topo -mp has not)
  int mp_command_line = 0;              ///< a prompt line above the header running `topo -mp`, 0: none
};

/// The number of NVLinks an "NV#" cell names, nullopt for any other cell.
std::optional<int> smi_nvlinks(const std::string& cell);

/// Parses the text; InputError "file:line: ..." naming what was expected.
SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& file);

/// `nvidia-smi topo -mp` prints PCIe paths only and hides NVLinks: an InputError with the hint to
/// run `topo -m`, unless `pcie_only` (--pcie-only) says the PCIe view is what the user means.
/// UsageError when --pcie-only is given for a matrix that shows NVLinks.
void check_smi_view(const SmiMatrix& matrix, bool pcie_only);

/// Sockets and their NUMA nodes from the affinity columns and SYS/NODE cells, the PCIe tree from
/// PIX/PXB/PHB/NODE, NVLinks from NV#. InputError at the row whose cell contradicts the tree the
/// others imply.
ImportedMachine smi_machine(const SmiMatrix& matrix);

}  // namespace topsim
