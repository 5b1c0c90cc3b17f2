// `nvidia-smi topo -m` text as `topsim import nvidia-smi FILE` reads it, up to the built topology.
#include "import_check.hpp"
#include "interop/nvidia_smi.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    const std::string file = "fuzz-topo-m.txt";
    SmiMatrix matrix = parse_nvidia_smi(fuzz::as_text(data, size), file);
    check_smi_view(matrix, false);
    Topology topology = fuzz::import_machine(smi_machine(matrix), file);
    fuzz::check_matrix_shape(matrix.labels.size(), topology);
  });
}
