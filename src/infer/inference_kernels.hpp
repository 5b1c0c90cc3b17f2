#pragma once
// What one forward pass of an inference model runs on one GPU, kernel by kernel, as the
// framework runs it: a CNN from its layer list (models/networks.json), an encoder (BERT) or a
// decoder's prefill over whole sequences, and one decode step of a decoder, from the
// transformer's shape (models/transformers.json). No timing here: infer times the kernels.
#include <string>
#include <vector>

#include "compute/kernel.hpp"
#include "model/catalog.hpp"
#include "model/network.hpp"
#include "model/sequence_lengths.hpp"

namespace topsim {

/// How a model is served.
struct InferenceShape {
  std::string precision = "fp16";  ///< math type of GEMMs, convolutions and attention: fp32, tf32, fp16, bf16, fp8, int8
  bool sparse = false;             ///< prunable weights 2:4 sparse (sparse tensor cores, compressed weights)
  double batch = 1;                ///< samples (sequences) per forward
  int seq = 0;                     ///< tokens per sequence: encoder input, decoder prompt
  int tp = 1;                      ///< tensor parallel: GEMMs and heads split over tp GPUs
  /// Encoder: the data set's sequence lengths (each at most seq). Empty: every sequence has seq
  /// tokens. A framework that packs sequences runs a batch's GEMMs over the sum of its lengths
  /// and attention per sequence at its own length; one that does not pads each to seq.
  SequenceLengths lengths;
};

struct InferenceKernel {
  std::string name;
  Kernel kernel;
  double count = 1;  ///< identical kernels run one after another (layers)
};

/// One forward pass on one GPU, and its tensor-parallel all-reduces.
struct InferencePass {
  std::vector<InferenceKernel> kernels;
  double allreduces = 0;    ///< all-reduces per pass (2 per layer under tp > 1, none otherwise)
  double allreduce_B = 0;   ///< bytes of each
};

/// Bytes of one activation element of a precision (int8 and fp8: 1; fp16 and bf16: 2; else 4).
double activation_size_B(const std::string& precision);
/// The kernel math type of a precision ("tf32" runs tf32 tensor math, "fp32" the vector units).
/// std::invalid_argument naming the valid precisions otherwise.
std::string math_dtype(const std::string& precision);
/// The precisions infer accepts, in the order help lists them.
const std::vector<std::string>& inference_precisions();

/// The framework's precision defaults applied to `pass` on `gpu`: an fp32 convolution runs as
/// tf32 where the framework's tf32_convolutions is set and the GPU has tf32 tensor cores, an fp32
/// GEMM or attention where tf32_matmuls is. `allow_tf32` false keeps every fp32 kernel on the fp32
/// units (NVIDIA_TF32_OVERRIDE=0, TensorRT without kTF32).
void apply_precision_defaults(InferencePass& pass, const InferenceFrameworkModel& framework, const GpuModel& gpu,
                              bool allow_tf32);

/// A CNN's forward over `shape.batch` samples (tp must be 1).
InferencePass network_forward(const Network& network, const InferenceFrameworkModel& framework,
                              const InferenceShape& shape);
/// An encoder's forward, or a decoder's prefill, over `shape.batch` sequences of `shape.seq`
/// tokens; a decoder ends with the LM head on each sequence's last token. An encoder with
/// `shape.lengths` packed by the framework: GEMMs and memory kernels over batch E[s] rows, one
/// attention kernel per layer over batch E[s^2] query-key pairs per head (as one of m = n =
/// sqrt(E[s^2])) reading Q, K, V and O of batch E[s] tokens; unpacked: every sequence shape.seq.
InferencePass transformer_forward(const TransformerSpec& model, const InferenceFrameworkModel& framework,
                                  const InferenceShape& shape);
/// One decode step of a decoder: one new token for each of `shape.batch` sequences, attending to
/// `context` cached tokens (K and V read from the cache), then the LM head.
InferencePass transformer_decode_step(const TransformerSpec& model, const InferenceFrameworkModel& framework,
                                      const InferenceShape& shape, double context);

/// Weights one GPU holds, bytes: every parameter in the precision's element size (split over
/// tp; prunable weights compressed when sparse).
double network_weights_B(const Network& network, const InferenceShape& shape);
double transformer_weights_B(const TransformerSpec& model, const InferenceShape& shape);
/// The KV cache of `tokens` tokens of one sequence on one GPU, bytes: K and V of every layer.
double kv_cache_B(const TransformerSpec& model, const InferenceShape& shape, double tokens);
/// Activations live at once: the largest kernel's input plus output (an engine reuses buffers).
double pass_activation_B(const InferencePass& pass);

}  // namespace topsim
