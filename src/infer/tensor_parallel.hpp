#pragma once
// Tensor-parallel all-reduces of inference, simulated on the fabric: NCCL's choice of algorithm
// and protocol over the first tp GPUs of a topology, so that NVLink generations (A100 against
// A800) and PCIe-only servers differ as they do.
#include "infer/inference.hpp"

namespace topsim {

/// Times an all-reduce of a given size over GPUs 0 .. tp-1 of `topology` with NCCL release
/// `nccl` ("" for the default line); each size is simulated once, in a Simulator of its own.
/// The topology and catalog must outlive the returned function.
AllReduceTime fabric_allreduce(const Topology& topology, const Catalog& catalog, int tp, const std::string& nccl);

}  // namespace topsim
