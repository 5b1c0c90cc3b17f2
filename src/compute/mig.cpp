#include "compute/mig.hpp"

#include <stdexcept>

#include "util/text.hpp"

namespace topsim {

MigRequest parse_mig(const std::string& text) {
  MigRequest request;
  request.profile = text;
  const std::size_t x = text.rfind('x');
  // "1g.5gbx7": the count follows the last 'x' when only digits follow it.
  if (x != std::string::npos && x + 1 < text.size() &&
      text.find_first_not_of("0123456789", x + 1) == std::string::npos) {
    request.profile = text.substr(0, x);
    const std::string count = text.substr(x + 1);
    if (count.size() > 3 || std::stoi(count) < 1)
      throw std::invalid_argument("--mig " + text + ": the instance count after 'x' must be 1 to 999");
    request.instances = std::stoi(count);
  }
  if (request.profile.empty())
    throw std::invalid_argument("--mig " + text + ": expected PROFILE or PROFILExN, e.g. 1g.10gb or 1g.10gbx7");
  return request;
}

const MigProfile& mig_profile(const GpuModel& gpu, const std::string& name) {
  std::vector<std::string> names;
  for (const MigProfile& p : gpu.mig_profiles) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  if (names.empty())
    throw std::invalid_argument(gpu.name + " has no MIG profiles (MIG runs on A100, A30, H100 and later data-center "
                                           "GPUs; models/gpus.json lists them under \"mig\")");
  throw std::invalid_argument(unknown_name_message("MIG profile of " + gpu.name, name, names));
}

GpuModel mig_instance(const GpuModel& gpu, const MigRequest& request) {
  const MigProfile& profile = mig_profile(gpu, request.profile);
  if (request.instances > profile.instances)
    throw std::invalid_argument(gpu.name + " holds at most " + std::to_string(profile.instances) + " instances of " +
                                profile.name + ", not " + std::to_string(request.instances));
  GpuModel instance = gpu;
  instance.name = gpu.name + "/" + profile.name;
  instance.description = gpu.description + ", MIG instance " + profile.name;
  const double compute_share = double(profile.sms) / gpu.sms;
  instance.sms = profile.sms;
  for (auto& entry : instance.math) {
    entry.second.dense_flops_per_s *= compute_share;
    entry.second.sparse_flops_per_s *= compute_share;
  }
  instance.memory_B = profile.memory_B;
  instance.memory_Bps = gpu.memory_Bps * profile.memory_slices / gpu.mig_memory_slices;
  instance.nvlink_model.clear();
  instance.nvlink_count = 0;
  instance.peer_over_pcie = false;
  // tdp_W stays the board's: per-watt figures charge the instances asked for the whole board.
  instance.mig_profiles.clear();
  instance.mig_memory_slices = 0;
  return instance;
}

}  // namespace topsim
