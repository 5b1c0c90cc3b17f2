// Placeholder until the attention model (issue 48 item 2) lands: it refuses every call, so
// nothing can use an attention prediction that does not exist yet.
#include "compute/attention_model.hpp"

#include <stdexcept>

namespace topsim {

const std::vector<KernelParameter>& attention_parameters(KernelFamily) {
  static const std::vector<KernelParameter> none;
  return none;
}

AttentionCost attention_cost(const GpuModel&, const KernelConstants&, const AttentionShape&) {
  throw std::invalid_argument("attention kernels are not modelled yet");
}

}  // namespace topsim
