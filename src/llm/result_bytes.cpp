#include "llm/result_bytes.hpp"

#include <stdexcept>

#include "util/bytes.hpp"

namespace topsim {

namespace {

// One list of the fields, read and written alike (Result is LlmResult or const LlmResult).
template <typename Visit, typename Result>
void each_field(Result& r, Visit&& visit) {
  visit(r.gpus);
  visit(r.nodes);
  for (auto* d : {&r.iteration_s, &r.tokens_per_s, &r.tflops_per_gpu, &r.mfu, &r.hfu, &r.compute_s, &r.bubble_s, &r.tp_s,
                  &r.pp_s, &r.dp_s, &r.cp_s, &r.ep_s, &r.optimizer_s})
    visit(*d);
  visit(r.stage_forward_s);
  visit(r.stage_backward_s);
  for (auto* d : {&r.memory.weights_B, &r.memory.gradients_B, &r.memory.optimizer_B, &r.memory.activations_B,
                  &r.memory_capacity_B})
    visit(*d);
  visit(r.fits);
  visit(r.algorithms);
  for (auto* d : {&r.floors.compute_s, &r.floors.gpu_links_s, &r.floors.network_s, &r.floors.memory_B,
                  &r.floors.gpu_links_B, &r.floors.network_B})
    visit(*d);
}

}  // namespace

std::string to_bytes(const LlmResult& result) {
  ByteWriter w;
  each_field(result, [&](const auto& field) { w.put(field); });
  w.put(result.comm_s.size());
  for (const auto& [name, s] : result.comm_s) {
    w.put(name);
    w.put(s);
  }
  return w.take();
}

LlmResult llm_result_from_bytes(const std::string& bytes) {
  ByteReader reader(bytes, "llm_result_from_bytes: truncated result");
  LlmResult r;
  each_field(r, [&](auto& field) { reader.get(field); });
  std::size_t n = 0;
  reader.get(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string name;
    double s = 0;
    reader.get(name);
    reader.get(s);
    r.comm_s[name] = s;
  }
  if (!reader.done()) throw std::runtime_error("llm_result_from_bytes: trailing bytes");
  return r;
}

}  // namespace topsim
