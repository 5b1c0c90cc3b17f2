// A trace (scenarios/traces/*.json) as `topsim run` reads it, before it is laid out.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] { parse_trace(fuzz::as_text(data, size), "fuzz-trace.json"); });
}
