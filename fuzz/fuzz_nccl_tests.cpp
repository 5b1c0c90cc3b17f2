// nccl-tests output (stdout or -J JSON) as `topsim import nccl-tests LOG --topology T` reads it,
// up to the validation file it writes.
#include "fuzz_common.hpp"
#include "interop/nccl_tests_rows.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    const std::string file = "fuzz-nccl-tests.log";
    NcclTestsLog log = parse_nccl_tests_output(fuzz::as_text(data, size), file);
    for (const NcclTestsRun& run : log.runs) machine_of(run);
    write_validation_json(measured_rows({log}, "dgx-a100", 0, "allreduce"));
  });
}
