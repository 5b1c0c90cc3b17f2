#pragma once
// NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes) as topsim reads it (docs/import.md):
// cpu -> socket, pci bridges -> PCIe switches, gpu -> GPU, nvlink -> NVLinks or NVSwitch links,
// nic/net -> NIC. Parsed with pugixml.
#include <string>

#include "interop/machine.hpp"

namespace topsim {

/// InputError "file:line: /system/cpu[1]/pci[2]/gpu: ..." naming what was expected.
/// The GPU model is chosen later (build_topology_spec), by --gpu, PCI device id or sm.
ImportedMachine parse_nccl_xml(const std::string& text, const std::string& file);

}  // namespace topsim
