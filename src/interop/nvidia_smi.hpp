#pragma once
// `nvidia-smi topo -m` as topsim reads it (docs/import.md): the GPU/NIC matrix, the affinity
// columns and the NIC legend, then the machine those cells imply.
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
  std::vector<std::string> cpu_affinity;   ///< per row, "" when absent or N/A
  std::vector<std::string> numa_affinity;  ///< per row, "" when absent or N/A
  int gpus = 0;
};

/// Parses the text; InputError "file:line: ..." naming what was expected.
SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& file);

/// Sockets from the affinity columns and SYS cells, the PCIe tree from PIX/PXB/PHB/NODE, NVLinks
/// from NV#. InputError at the row whose cell contradicts the tree the others imply.
ImportedMachine smi_machine(const SmiMatrix& matrix);

}  // namespace topsim
