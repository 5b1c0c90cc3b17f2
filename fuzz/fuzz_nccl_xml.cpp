// NCCL's topology XML as `topsim import nccl-xml FILE` reads it (without --gpu, so every GPU's
// sm must name a model), up to the built topology.
#include "import_check.hpp"
#include "interop/nccl_xml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    const std::string file = "fuzz-topo.xml";
    ImportedMachine machine = parse_nccl_xml(fuzz::as_text(data, size), file);
    fuzz::import_machine(machine, file);
  });
}
