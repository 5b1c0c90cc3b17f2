// A models file (models/*.json) as the catalog loader reads it: alone, then its references
// checked (a lone file may point to models in others; that is an InputError, not a crash).
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    Catalog catalog;
    add_catalog_text(catalog, fuzz::as_text(data, size), "fuzz-models.json");
    catalog.check_references();
  });
}
