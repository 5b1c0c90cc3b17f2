// A training scenario (scenarios/*.json) as `topsim run` reads it, before anything is simulated.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] { parse_scenario(fuzz::as_text(data, size), "fuzz-scenario.json"); });
}
