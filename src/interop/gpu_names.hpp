#pragma once
// The GPU names logs print (cudaDeviceProp::name: nccl-tests' "# Rank" lines, nvidia-smi's
// --query-gpu=name) against the models of models/gpus.json, by their "device_names".
#include <string>
#include <vector>

#include "model/catalog.hpp"

namespace topsim {

/// The name as topsim compares it: blanks trimmed and collapsed, a leading "NVIDIA " dropped
/// (drivers before R470 print data-centre parts without it), upper case.
/// "NVIDIA A100-SXM4-80GB" and "a100-sxm4-80gb " both give "A100-SXM4-80GB".
std::string normalised_gpu_name(const std::string& printed);

/// Whether `model` prints as `printed`: one of its device_names is the same once normalised.
bool gpu_prints_as(const GpuModel& model, const std::string& printed);

/// The models of `catalog` that print as `printed`; when none does, the closest: those with a
/// device name of the same chip, the first word with a digit ("A100" of "A100-SXM4-64GB",
/// "V100" of "Tesla V100-SXM2-16GB", "4090" of "GeForce RTX 4090"). Empty when nothing shares
/// even that. In the catalog's (name) order.
std::vector<std::string> gpu_models_printing(const Catalog& catalog, const std::string& printed);

}  // namespace topsim
