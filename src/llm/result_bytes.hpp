#pragma once
// An LlmResult as bytes and back, exactly (doubles bit for bit): how `plan --jobs` brings a
// layout's result back from the process that simulated it (util/processes.hpp).
#include <string>

#include "llm/iteration.hpp"

namespace topsim {

std::string to_bytes(const LlmResult& result);
/// std::runtime_error when `bytes` is not what to_bytes() wrote.
LlmResult llm_result_from_bytes(const std::string& bytes);

}  // namespace topsim
