#pragma once
// A kernel table as NVIDIA's aiconfigurator collects them (shared/reference/kernels/*.csv): one
// GEMM or one attention call per row, with its measured latency when the file has one. Read by
// io (load_kernel_table); used by compute --shapes, calibrate --kernels and validate --kernels.
#include <string>
#include <vector>

#include "compute/kernel_fit.hpp"

namespace topsim {

struct KernelTable {
  std::string file;
  std::vector<std::string> header;  ///< the columns as the file names them, in its order
  struct Row {
    KernelRow row;                    ///< the shape in topsim's vocabulary; measured_s 0 when not measured
    std::vector<std::string> cells;   ///< as written, one per header column
    int line = 0;                     ///< 1-based line in the file
    std::string gpu, device, kernel_source;  ///< "" when the file leaves those columns out
  };
  std::vector<Row> rows;
};

}  // namespace topsim
