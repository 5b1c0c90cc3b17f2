#pragma once
// Multi-Instance GPU: one GPU instance of a MIG profile as a GPU of its own. MIG partitions SMs
// (compute slices) and memory slices (each with its share of HBM bandwidth and L2) in hardware,
// so an instance's kernels cost what they cost on a GPU of that size, whatever its neighbours do.
#include <string>

#include "model/catalog.hpp"

namespace topsim {

/// "PROFILE" or "PROFILExN" (N instances of one GPU, each running its own copy).
struct MigRequest {
  std::string profile;  ///< "" = the whole GPU, no MIG
  int instances = 1;
};
/// std::invalid_argument for an empty profile or N < 1.
MigRequest parse_mig(const std::string& text);

/// The profile `name` of `gpu`; std::invalid_argument naming the profiles it has (or that it has
/// none) otherwise.
const MigProfile& mig_profile(const GpuModel& gpu, const std::string& name);

/// One instance of `request.profile` on `gpu` as a GpuModel "<gpu>/<profile>": the profile's
/// SMs, every math rate scaled by sms / gpu.sms, the profile's memory, memory_slices /
/// mig_memory_slices of the HBM bandwidth, no NVLink and no peer access (MIG instances have
/// neither). std::invalid_argument when the profile is unknown or more instances are asked for
/// than the GPU holds.
GpuModel mig_instance(const GpuModel& gpu, const MigRequest& request);

}  // namespace topsim
