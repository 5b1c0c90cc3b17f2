#include "llm/fp8_kernels.hpp"

#include <algorithm>
#include <stdexcept>

#include "compute/kernel.hpp"
#include "util/text.hpp"

// Sources, read at Megatron-LM d98e8a64ddf3 (MLM) and TransformerEngine d0067d0da6cb (TE):
// [recipes]  MLM megatron/core/fp8_utils.py:752-810 maps --fp8-recipe delayed / tensorwise /
//            blockwise / mxfp8 to TE DelayedScaling / Float8CurrentScaling / Float8BlockScaling /
//            MXFP8BlockScaling, with override_linear_precision (False, False, not fp8_wgrad)
//            (:775, :808): fprop, dgrad and wgrad in fp8 under fp8_wgrad True
//            (transformer_config.py:631).
// [bf16]     Outside fp8: the attention core (fp8_dot_product_attention False,
//            transformer_config.py:640), the LM head (tensor_parallel.ColumnParallelLinear unless
//            fp8_output_proj under mxfp8, models/gpt/gpt_model.py:272-277, transformer_config.py:635),
//            the embedding (tensor_parallel.VocabParallelEmbedding,
//            models/common/embeddings/language_model_embedding.py:59), the router (its own GEMM,
//            transformer/moe/router.py:90-111). Only GEMMs of an fp8 type get casts here.
// [experts]  MoE experts run TE's GroupedLinear (TEGroupedLinear,
//            extensions/transformer_engine.py:2382; is_first_microbatch at :2721-2728).
// [copies]   Each Linear reads X and W row-wise in fprop, dY row-wise and W column-wise in dgrad,
//            dY and X column-wise in wgrad: TE linear.py:426-437 (input), :466-485 (weight),
//            :903-905 (grad output) set both usages. Per-tensor fp8 stores the column-wise copy as a
//            transpose unless the GPU runs non-TN fp8 GEMMs (csrc/quantizer.cpp:361-375), which
//            only sm_100-119 and sm_130+ do (common/transformer_engine.cpp:1191-1201): on Hopper
//            and Ada, two copies. Blockwise always writes both, each with its fp32 scales
//            (csrc/quantizer.cpp:1078-1110); MXFP8 too, with E8M0 scales (csrc/quantizer.cpp:1502-1535).
// [scales]   Blockwise: one fp32 scale per 1x128 of X and dY, per 128x128 of W (block dims 1/2/1,
//            common/recipe/__init__.py:431-440; csrc/quantizer.cpp:1441-1490). MXFP8: one 1-byte
//            E8M0 scale per 32 elements (csrc/quantizer.cpp:198, recipe/__init__.py:341-344).
// [amax]     Current scaling computes the amax in a pass of its own, then casts
//            (csrc/quantizer.cpp:1005-1028); delayed casts with the previous scale and records the
//            amax in the same kernel (csrc/quantizer.cpp:632-643).
// [norm]     LayerNormLinear hands the quantizer to the norm (module/layernorm_linear.py:244-265):
//            a per-tensor delayed quantizer runs fully fused, current scaling fuses the amax only,
//            blockwise and MXFP8 (without NVTE_NORM_FWD_USE_CUDNN) run the norm then the cast
//            (csrc/extensions/normalization.cpp:105-130). A fused norm writes the row-wise data; the
//            transpose is made from it (tensor/storage/float8_tensor_storage.py:267-276, :310).
//            Megatron's MLP runs its activation itself (gpt_layer_specs.py:531-549:
//            TELayerNormColumnParallelLinear, activation, TERowParallelLinear), so FC2's input and
//            FC1's output gradient are cast by kernels of their own.
// [weights]  Megatron passes is_first_microbatch to TE (extensions/transformer_engine.py:1338-1345,
//            set per iteration by pipeline_parallel/schedules.py:496-497); TE re-casts the weight
//            only then (module/linear.py:479-485).

namespace topsim {

namespace {

bool fp8_gemm(const Kernel& k) {
  return k.kind == Kernel::Kind::gemm && (k.dtype == "fp8" || k.dtype == "fp8_block" || k.dtype == "mxfp8");
}

NamedKernel memory_kernel(const std::string& name, double bytes_B) {
  NamedKernel out{name, {}, false};
  out.kernel.kind = Kernel::Kind::memory;
  out.kernel.bytes_B = bytes_B;
  out.kernel.dtype = "fp8";
  return out;
}

// The kernel before GEMM `name` that Transformer Engine fuses the cast into, "" for none.
std::string norm_before(const std::string& gemm) {
  if (gemm == "qkv") return "norm1";
  if (gemm == "fc1") return "norm2";
  return "";
}

NamedKernel* find_kernel(std::vector<NamedKernel>& kernels, const std::string& name) {
  for (NamedKernel& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

constexpr double kSourceB = 2;  // the 16-bit operand every cast reads (bf16)
constexpr double kFp8B = 1;     // one fp8 element (E4M3 or E5M2)
constexpr double kFp32B = 4;    // an fp32 scale
constexpr double kBlockLen = 128;  // Float8BlockScaling's block edge
constexpr double kMxBlock = 32;    // MXFP8's block
constexpr double kE8m0B = 1;       // MXFP8's scale

}  // namespace

const std::vector<std::string>& fp8_recipes() {
  static const std::vector<std::string> names = {"delayed", "tensorwise", "blockwise", "mxfp8"};
  return names;
}

std::string fp8_gemm_dtype(const std::string& recipe) {
  if (recipe == "delayed" || recipe == "tensorwise") return "fp8";
  if (recipe == "blockwise") return "fp8_block";
  if (recipe == "mxfp8") return "mxfp8";
  throw std::invalid_argument(unknown_name_message("fp8 recipe", recipe, fp8_recipes()));
}

std::string fp8_recipe_unavailable(const GpuModel& gpu, const LlmLayout& L) {
  if (L.precision != "fp8") return "";
  Kernel gemm;
  gemm.dtype = fp8_gemm_dtype(L.fp8_recipe);
  return kernel_unavailable(gpu, gemm);
}

// Whether Transformer Engine runs non-TN fp8 GEMMs on `gpu` (see [copies]); unknown: no.
bool non_tn_fp8_gemm(const GpuModel* gpu) {
  if (!gpu || gpu->compute_capability.empty()) return false;
  const double cc = std::stod(gpu->compute_capability);
  return (cc >= 10.0 && cc < 12.0) || cc >= 13.0;
}

Fp8Storage fp8_storage(const std::string& recipe, const GpuModel* gpu) {
  Fp8Storage s;
  fp8_gemm_dtype(recipe);  // the name check
  // Per-tensor recipes: a transpose beside the row-wise data unless the GEMM takes any layout.
  const bool per_tensor = recipe == "delayed" || recipe == "tensorwise";
  s.copies = per_tensor && non_tn_fp8_gemm(gpu) ? 1 : 2;
  if (recipe == "delayed") s.norm_writes_fp8 = true;
  if (recipe == "tensorwise") s.amax_pass = s.norm_finds_amax = true;
  if (recipe == "blockwise") {
    s.activation_scale_B = kFp32B / kBlockLen;
    s.weight_scale_B = kFp32B / (kBlockLen * kBlockLen);
  }
  if (recipe == "mxfp8") s.activation_scale_B = s.weight_scale_B = kE8m0B / kMxBlock;
  return s;
}

void add_fp8_casts(LayerKernels& out, const LlmLayout& L, const GpuModel* gpu) {
  if (L.precision != "fp8") return;
  const Fp8Storage s = fp8_storage(L.fp8_recipe, gpu);
  const double written_B = s.copies * (kFp8B + s.activation_scale_B);  // per element cast
  const double micro_batches = std::max(1, L.micro_batches());
  std::vector<NamedKernel> forward, backward;
  for (const NamedKernel& g : out.forward) {
    if (!g.gemm || !fp8_gemm(g.kernel)) continue;
    const Kernel& k = g.kernel;
    const double x = k.m * k.k * k.batch, w = k.k * k.n * k.batch, dy = k.m * k.n * k.batch;  // elements
    // The input: fused into the norm before QKV and FC1 where the recipe fuses, else cast alone.
    NamedKernel* norm = find_kernel(out.forward, norm_before(g.name));
    if (norm && s.norm_writes_fp8) {
      // The norm runs on its (sequence-parallel) rows and writes fp8 for bf16: 1 B less per
      // element; the transpose reads the row-wise fp8 and writes the column-wise one.
      const double norm_elements = k.m * k.k * k.batch / (L.sp ? L.tp : 1);
      norm->kernel.bytes_B -= norm_elements * (kSourceB - kFp8B);
      if (s.copies > 1) forward.push_back(memory_kernel(g.name + ".transpose", x * (s.copies - 1) * 2 * kFp8B));
    } else {
      if (s.amax_pass && !(norm && s.norm_finds_amax)) forward.push_back(memory_kernel(g.name + ".amax", x * kSourceB));
      forward.push_back(memory_kernel(g.name + ".cast", x * (kSourceB + written_B)));
    }
    // The weight: cast on the first micro-batch of the iteration, a share of it per micro-batch.
    const double weight_B = w * (kSourceB + s.copies * (kFp8B + s.weight_scale_B) + (s.amax_pass ? kSourceB : 0));
    forward.push_back(memory_kernel(g.name + ".weight_cast", weight_B / micro_batches));
    // The output gradient: row-wise for dgrad, column-wise for wgrad.
    if (s.amax_pass) backward.push_back(memory_kernel(g.name + ".grad_amax", dy * kSourceB));
    backward.push_back(memory_kernel(g.name + ".grad_cast", dy * (kSourceB + written_B)));
  }
  out.forward.insert(out.forward.end(), forward.begin(), forward.end());
  out.backward.insert(out.backward.end(), backward.begin(), backward.end());
}

Fp8AmaxReduction fp8_amax_reduction(const LlmLayout& L, int layers, int gemms_per_layer) {
  Fp8AmaxReduction r;
  r.group_ranks = L.tp * L.dp * L.cp;
  if (L.precision != "fp8" || L.fp8_recipe != "delayed") return r;
  // TE keeps 3 forward and 2 backward fp8 tensors per GEMM (module/base.py:1139), one fp32 amax
  // each reduced (Megatron's amax_history_len 1: the latest), concatenated per autocast region
  // (pytorch/quantization.py:656-690); Megatron wraps a whole chunk's layers in one region under
  // delayed scaling (transformer/transformer_block.py:619-629), its group tp x dp x cp
  // (parallel_state.py:1877-1890).
  const double gemms = double(layers) * gemms_per_layer;
  r.forward_B = gemms * 3 * kFp32B;
  r.backward_B = gemms * 2 * kFp32B;
  return r;
}

}  // namespace topsim
