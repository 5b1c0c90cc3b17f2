#pragma once
// NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes) as topsim reads it (docs/import.md):
// cpu -> socket, pci bridges -> PCIe switches, gpu -> GPU, nvlink -> NVLinks or NVSwitch links,
// nic/net -> NIC. Parsed with pugixml.
#include <string>

#include "interop/machine.hpp"

namespace topsim {

/// InputError "file:line: /system/cpu[1]/pci[2]/gpu: ..." naming what was expected.
/// `gpu_given`: --gpu names the model, so a GPU's sm need not map to one.
ImportedMachine parse_nccl_xml(const std::string& text, const std::string& file, bool gpu_given);

}  // namespace topsim
