#pragma once
// The models an import chooses where the input does not name them (docs/import.md, "What the
// importer infers"): the GPU model, the reference bundled server, the CPU, NIC and NVSwitch models.
// Every choice the input did not state is appended to `notes`, one line each.
#include <optional>
#include <string>
#include <vector>

#include "interop/machine.hpp"

namespace topsim {

/// The host-side models of a reference server: what the input formats never say.
struct HostModels {
  std::string server;        ///< the reference's name
  std::string cpu;
  std::string socket_link;
  int socket_links = 1;
  std::string pcie_switch;
  std::string gpu_pcie;      ///< GPU to its parent
  std::string nic_pcie;      ///< NIC to its parent
  std::string uplink_pcie;   ///< switch to switch or CPU
  std::string nic;
  std::string nvswitch;
  std::vector<int> plane_links;  ///< NVLinks from one GPU to each NVSwitch of the reference
  std::optional<FabricSpec> scale_out;
};

HostModels host_models(const TopologySpec& reference);

/// The NV# every GPU reads towards every other, as NVSwitch systems print; nullopt otherwise.
std::optional<int> uniform_all_to_all(const ImportedMachine& m);

/// --gpu, else what the input names (PCI device id, then sm), else the bundled server whose NVLinks
/// match. UsageError/InputError when nothing decides it.
std::string choose_gpu_model(const ImportedMachine& m, const Catalog& catalog, const std::vector<TopologySpec>& servers,
                             const ImportOptions& options, std::vector<std::string>& notes);

/// --like, else the bundled server closest by GPU generation, then socket count, then GPU model,
/// then GPU count (name order breaks ties).
const TopologySpec& choose_reference(const ImportedMachine& m, const GpuModel& gpu, const Catalog& catalog,
                                     const std::vector<TopologySpec>& servers, const ImportOptions& options,
                                     std::vector<std::string>& notes);

/// The CPU model of every socket: by the CPUID the input states, else the reference's; then one
/// that gives the host bridges the matrix reads (PHB or NODE).
std::string choose_cpu_model(const ImportedMachine& m, const Catalog& catalog, const HostModels& host,
                             std::vector<std::string>& notes);

/// What joins two sockets of `cpu`: the CPU model's socket link when it states one, else the
/// reference server's (model, count).
std::pair<std::string, int> choose_socket_link(const std::string& cpu, const Catalog& catalog, const HostModels& host);

/// NVSwitch planes for GPUs with `links` NVLinks each into switches: the reference's pattern when
/// its switch speaks the GPU's NVLink generation and its links add up; else the fewest equal
/// planes whose switches have the ports, on the NVSwitch model of the GPU's NVLink generation.
struct NvswitchPlanes {
  std::string model;
  std::vector<int> links;  ///< NVLinks from each GPU to each switch
};
NvswitchPlanes choose_nvswitch_planes(int links, int gpus, const GpuModel& gpu, const Catalog& catalog,
                                      const HostModels& host, std::vector<std::string>& notes);

/// The model of one NIC: --nic, what the input names, by port speed and link layer (PCI device id
/// or port name), else the reference's; `note` says how when the input did not name it ("" when it
/// did). InputError/UsageError when none fits.
struct NicChoice {
  std::string model;
  std::string note;
};
NicChoice choose_nic_model(const ImportedMachine& m, const ImportedEndpoint& nic, const Catalog& catalog,
                           const HostModels& host, const ImportOptions& options);

/// The catalogue's link model of kind numa (between NUMA nodes of one socket). UsageError if none.
std::string numa_link_model(const Catalog& catalog);

}  // namespace topsim
