#include "interop/gpu_names.hpp"

#include <cctype>
#include <sstream>

namespace topsim {

std::string normalised_gpu_name(const std::string& printed) {
  std::istringstream in(printed);
  std::string out;
  for (std::string word; in >> word;) out += (out.empty() ? "" : " ") + word;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string prefix = "NVIDIA ";
  if (out.compare(0, prefix.size(), prefix) == 0 && out.size() > prefix.size()) out.erase(0, prefix.size());
  return out;
}

namespace {

// The chip of a normalised name: its first word of letters and digits that holds a digit ("A100"
// of "A100-SXM4-80GB", "V100" of "TESLA V100-SXM2-32GB", "4090" of "GEFORCE RTX 4090").
std::string chip_of(const std::string& normalised) {
  std::string word;
  bool digit = false;
  for (char c : normalised + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
      digit = digit || std::isdigit(static_cast<unsigned char>(c));
    } else if (!word.empty()) {
      if (digit) return word;
      word.clear();
    }
  }
  return "";
}

}  // namespace

bool gpu_prints_as(const GpuModel& model, const std::string& printed) {
  const std::string want = normalised_gpu_name(printed);
  for (const std::string& name : model.device_names)
    if (normalised_gpu_name(name) == want) return true;
  return false;
}

std::vector<std::string> gpu_models_printing(const Catalog& catalog, const std::string& printed) {
  std::vector<std::string> exact, same_chip;
  const std::string want = normalised_gpu_name(printed), chip = chip_of(want);
  for (const auto& [name, model] : catalog.gpus()) {
    if (gpu_prints_as(model, printed)) exact.push_back(name);
    bool shared = false;
    for (const std::string& device : model.device_names)
      shared = shared || (!chip.empty() && chip_of(normalised_gpu_name(device)) == chip);
    if (shared) same_chip.push_back(name);
  }
  return exact.empty() ? same_chip : exact;
}

}  // namespace topsim
