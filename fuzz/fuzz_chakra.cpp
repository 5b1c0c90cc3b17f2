// A Chakra ET file (one rank of `topsim run --chakra`): the varint stream, then every node's
// type, attributes and dependencies checked as the reader checks them, for a trace of 4 ranks.
#include "fuzz_common.hpp"
#include "interop/chakra/chakra_nodes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    EtFile file = parse_et_bytes(bytes, "fuzz.0.et");
    for (bool ctrl : {true, false}) {
      ChakraReadOptions options;
      options.ctrl_deps = ctrl;
      parse_rank_file(file, options, 4);
    }
  });
}
