#pragma once
// Neural networks as layer lists (models/networks.json): what one training sample costs each
// layer, as GEMM shapes, memory-bound element counts and parameter counts. Plain data.
#include <map>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

struct Layer {
  enum class Kind {
    conv,         ///< convolution as an implicit GEMM; weights are the k x n operand
    linear,       ///< fully connected; weights are the k x n operand
    matmul,       ///< activation x activation GEMM (attention), no weights
    elementwise,  ///< memory-bound (normalisation, activation, residual add, softmax, dropout, pooling)
    embedding,    ///< table lookup: memory-bound forward, a dense gradient of `params` values
  };
  std::string name;
  Kind kind = Kind::elementwise;
  /// GEMM C[m x n] = A[m x k] B[k x n] for one sample (conv, linear, matmul); m scales with the
  /// batch (output positions or tokens of one sample).
  double gemm_m = 0, gemm_n = 0, gemm_k = 0;
  int batch = 1;          ///< matmul: independent GEMMs per sample (attention heads)
  double params = 0;      ///< trainable values (weights and biases, normalisation scales)
  double elements = 0;    ///< elementwise, embedding: output elements of one sample
  double accesses = 0;    ///< elementwise: tensor-sized reads plus writes of the forward pass
  bool prunable = false;  ///< conv, linear: 2:4 structured sparsity may apply to its weights
  /// elementwise: each output element depends only on the inputs at its position, so an
  /// inference engine can run it in the epilogue of the GEMM before it; false for pooling.
  bool pointwise = true;
  /// Megatron-LM tensor parallelism over tp ranks: a column-parallel linear computes n / tp of
  /// its outputs, a row-parallel one k / tp of its inputs and all-reduces its output; a split
  /// layer (attention heads, the activation between the two FFN GEMMs) does 1 / tp of its work.
  enum class Split { none, column, row, split };
  Split tp = Split::none;
};

const char* to_string(Layer::Kind kind);

struct Network {
  std::string name;
  std::string description;
  std::string sample;  ///< what one sample is ("image", "sequence"): the unit of throughput
  std::vector<Layer> layers;  ///< in forward order
  Sources sources;
  SourceRef where;

  double params() const;
};

}  // namespace topsim
