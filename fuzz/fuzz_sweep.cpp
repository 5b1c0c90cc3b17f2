// A sweep definition (scenarios/sweep-*.json) or sweep results (what `topsim sweep` writes, or a
// plain array of rows), as `topsim sweep`, `merge`, `regress` and `report` read them.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  std::string text = fuzz::as_text(data, size);
  fuzz::expect_valid_or_input_error([&] { parse_sweep(text, "fuzz-sweep.json"); });
  return fuzz::expect_valid_or_input_error([&] { parse_result_rows(text, "fuzz-results.json"); });
}
