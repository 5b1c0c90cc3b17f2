#pragma once
// A generated benchmark topology: N GPUs of one model on a single non-blocking NVLink switch
// (all of each GPU's NVLinks into it), four GPUs per CPU for their PCIe host links.
//
//   gpu0 ... gpuN-1 ==(all NVLinks)== flat switch          gpu4k..gpu4k+3 -- PCIe -- cpuk
#include <string>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"

namespace topsim {

/// Largest GPU count a flat topology may have.
constexpr int kMaxFlatGpus = 65536;

/// "flat:N:GPU" (e.g. "flat:1024:h100") names a generated topology; nullopt-like empty spec
/// handling is the caller's: this throws UsageError on a malformed name, InputError-free.
bool is_flat_name(const std::string& name);

/// The spec of "flat:N:GPU". UsageError when N is out of range, the GPU model is unknown or has
/// no NVLink, or models/ has no flat switch for its NVLink generation.
TopologySpec flat_topology(const std::string& name, const Catalog& catalog);

}  // namespace topsim
