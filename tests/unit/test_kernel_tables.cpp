// Kernel tables (io/kernel_table_io.cpp), the fitter (compute/fit.cpp), the folds of the k-fold by
// shape (compute/kernel_calibration.cpp) and the "kernels" key of models/compute.json
// (io/compute_io.cpp). The kernel model itself is not tested here: the fitter runs on a
// synthetic model whose constants are known, so that exact recovery is the test.
#include <catch2/catch.hpp>
#include <cmath>

#include "compute/fit.hpp"
#include "compute/kernel_calibration.hpp"
#include "helpers.hpp"
#include "io/io.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

const std::string kGemmHeader = "gpu,device,framework,version,kernel_source,gemm_dtype,m,n,k,latency_us\n";
const std::string kAttentionHeader =
    "gpu,device,framework,version,kernel_source,attn_dtype,kv_cache_dtype,batch_size,isl,step,num_heads,"
    "num_key_value_heads,head_dim,latency_us\n";
const std::string kH100 = "h100_sxm,NVIDIA H100 80GB HBM3,TRTLLM,1.3.0rc20,torch_flow,";

}  // namespace

TEST_CASE("kernel tables: GEMM rows as the reference tables write them") {
  KernelTable t = parse_kernel_table(kGemmHeader + kH100 + "bfloat16,1,32,32,2.581333\n" + kH100 + "sq,8192,4096,1024,40\n",
                                     "g.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].row.family == KernelFamily::gemm);
  CHECK(t.rows[0].row.gemm.dtype == "bf16");
  CHECK(t.rows[0].row.gemm.m == 1);
  CHECK(t.rows[0].row.gemm.n == 32);
  CHECK(t.rows[0].row.gemm.k == 32);
  CHECK(t.rows[0].row.measured_s == Approx(2.581333e-6));  // 2.581333 us
  CHECK(t.rows[0].line == 2);
  CHECK(t.rows[0].device == "NVIDIA H100 80GB HBM3");
  CHECK(t.rows[0].kernel_source == "torch_flow");
  CHECK(t.rows[1].row.gemm.dtype == "sq");  // SmoothQuant W8A8, its own recipe
  CHECK(t.rows[1].cells.size() == 10);
}

TEST_CASE("kernel tables: attention rows, step 0 is prefill and step > 0 decode") {
  KernelTable t = parse_kernel_table(kAttentionHeader + kH100 + "bfloat16,bfloat16,2,4096,0,32,8,128,900\n" + kH100 +
                                         "bfloat16,fp8,64,1,16383,16,8,128,1243\n",
                                     "a.csv");
  REQUIRE(t.rows.size() == 2);
  const AttentionShape& prefill = t.rows[0].row.attention;
  CHECK(t.rows[0].row.family == KernelFamily::prefill);
  CHECK(prefill.phase == KernelFamily::prefill);
  CHECK(prefill.q_len == 4096);  // isl
  CHECK(prefill.kv_len == 4096);  // causal over the prompt, nothing cached
  CHECK(prefill.heads == 32);
  CHECK(prefill.kv_heads == 8);
  const AttentionShape& decode = t.rows[1].row.attention;
  CHECK(t.rows[1].row.family == KernelFamily::decode);
  CHECK(decode.batch == 64);
  CHECK(decode.q_len == 1);  // one new token
  CHECK(decode.kv_len == 16383);  // step tokens cached
  CHECK(decode.kv_dtype == "fp8");
}

TEST_CASE("kernel tables: the provenance columns and the latency may be left out") {
  KernelTable shapes = parse_kernel_table("gemm_dtype,m,n,k\nfp8,128,256,512\n", "s.csv");
  REQUIRE(shapes.rows.size() == 1);
  CHECK(shapes.rows[0].row.measured_s == 0);
  CHECK(shapes.rows[0].device.empty());
  KernelTable measured = parse_kernel_table("gemm_dtype,m,n,k,latency_us\r\nfp8,128,256,512,10\r\n\r\n", "s.csv");
  CHECK(measured.rows.at(0).row.measured_s == Approx(10e-6));
  KernelTable attention = parse_kernel_table(
      "attn_dtype,kv_cache_dtype,batch_size,isl,step,num_heads,num_key_value_heads,head_dim\nbf16,bf16,1,1,7,8,8,64\n",
      "s.csv");
  CHECK(attention.rows.at(0).row.attention.kv_len == 7);
}

TEST_CASE("kernel tables: every bad input names file:line, the column and what is valid") {
  auto error = [](const std::string& text) { return input_error([&] { parse_kernel_table(text, "t.csv"); }); };
  CHECK(error("").rfind("t.csv:1: empty file; expected a GEMM header", 0) == 0);
  CHECK(error("gemm_dtype,m,n\nbf16,1,2\n").rfind("t.csv:1: unknown header 'gemm_dtype,m,n'; expected a GEMM header", 0) == 0);
  CHECK(error("gemm_dtype,m,n,k\nbf16,1,2\n") == "t.csv:2: 3 columns; the header has 4 (gemm_dtype,m,n,k)");
  CHECK(error("gemm_dtype,m,n,k\nbf16,1,x,3\n") == "t.csv:2: column n: 'x' is not a whole number");
  CHECK(error("gemm_dtype,m,n,k\nbf16,1,0,3\n") == "t.csv:2: column n: '0' must be a positive whole number");
  CHECK(error("gemm_dtype,m,n,k,latency_us\nbf16,1,2,3,-4\n") == "t.csv:2: column latency_us: '-4' must be positive");
  CHECK(error("gemm_dtype,m,n,k,latency_us\nbf16,1,2,3,fast\n") == "t.csv:2: column latency_us: 'fast' is not a number");
  CHECK(error("gemm_dtype,m,n,k\nfp7,1,2,3\n").rfind("t.csv:2: column gemm_dtype: unknown dtype 'fp7'; valid: bf16", 0) == 0);
  CHECK(error("attn_dtype,kv_cache_dtype,batch_size,isl,step,num_heads,num_key_value_heads,head_dim\n"
              "bf16,bf16,1,16,0,12,8,128\n") ==
        "t.csv:2: column num_key_value_heads: num_heads 12 is not a multiple of num_key_value_heads 8 (GQA/MQA share "
        "each KV head among whole groups)");
  CHECK(error("attn_dtype,kv_cache_dtype,batch_size,isl,step,num_heads,num_key_value_heads,head_dim\n"
              "bf16,bf16,1,16,-1,8,8,128\n") == "t.csv:2: column step: '-1' must be 0 or more");
}

TEST_CASE("kernel folds: FNV-1a-64 of the shape, the same on every GPU") {
  // FNV-1a-64 reference values: "" is the offset basis, "a" the published test vector.
  CHECK(fnv1a_64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a_64("a") == 0xaf63dc4c8601ec8cULL);
  KernelTable h100 = parse_kernel_table(kGemmHeader + kH100 + "bfloat16,8192,8192,8192,1\n", "h.csv");
  KernelTable l40s = parse_kernel_table(kGemmHeader + "l40s,NVIDIA L40S,TRTLLM,1.3.0rc20,torch_flow,bfloat16,8192,8192,8192,7\n",
                                        "l.csv");
  const KernelRow& a = h100.rows[0].row;
  const KernelRow& b = l40s.rows[0].row;
  CHECK(kernel_shape_key(a) == "bf16|8192|8192|8192");
  CHECK(kernel_shape_key(a) == kernel_shape_key(b));
  // FNV-1a-64("20261206|bf16|8192|8192|8192") = 5861800043213012611, mod 5 = 1 (computed apart in Python).
  CHECK(fnv1a_64("20261206|bf16|8192|8192|8192") == 5861800043213012611ULL);
  CHECK(kernel_fold(a, 5) == 1);
  CHECK(kernel_fold(b, 5) == 1);
  KernelTable attention = parse_kernel_table(kAttentionHeader + kH100 + "bfloat16,bfloat16,1,16,0,4,1,128,13\n", "a.csv");
  CHECK(kernel_shape_key(attention.rows[0].row) == "bf16|bf16|1|16|0|4|1|128");
  CHECK(kernel_fold(attention.rows[0].row, 5) == 3);  // 10448939080573181828 mod 5
}

namespace {

// A synthetic kernel: t = flops / (peak x fraction) + overhead_s + bytes x per_byte_s, peak 1e15 FLOP/s.
struct Synthetic {
  std::vector<double> flops, bytes;
  std::vector<double> time(const std::vector<double>& v) const {
    std::vector<double> out;
    for (std::size_t i = 0; i < flops.size(); ++i) out.push_back(flops[i] / (1e15 * v[0]) + v[1] + bytes[i] * v[2]);
    return out;
  }
  FitProblem problem(const std::vector<double>& truth) const {
    FitProblem p;
    p.parameters = {{"fraction", "of peak", 0.05, 1, 0.5},
                    {"overhead_s", "s", 1e-7, 1e-3, 1e-5},
                    {"per_byte_s", "s/B (lower bound 0: searched linearly)", 0, 1e-9, 1e-12}};
    p.rows = flops.size();
    p.measured = time(truth);
    p.predict = [this](const std::vector<double>& v, std::size_t i) {
      return flops[i] / (1e15 * v[0]) + v[1] + bytes[i] * v[2];
    };
    return p;
  }
};

Synthetic synthetic_rows() {
  Synthetic s;
  for (int i = 0; i < 40; ++i) {
    s.flops.push_back(std::pow(10, 6 + i * 0.2));      // 1 MFLOP .. 63 TFLOP
    s.bytes.push_back(std::pow(10, 5 + (i % 9) * 0.5));  // 100 kB .. 1 TB, out of step with flops
  }
  return s;
}

}  // namespace

TEST_CASE("fit: recovers known constants from noise-free data") {
  Synthetic s = synthetic_rows();
  std::vector<double> truth = {0.8, 4e-6, 3e-12};
  FitProblem problem = s.problem(truth);
  FitResult fit = fit_constants(problem);  // from the priors 0.5, 1e-5, 1e-12
  REQUIRE(fit.values.size() == 3);
  CHECK(fit.values[0] == Approx(0.8).epsilon(1e-9));
  CHECK(fit.values[1] == Approx(4e-6).epsilon(1e-9));
  CHECK(fit.values[2] == Approx(3e-12).epsilon(1e-9));
  CHECK(fit.loss < 1e-20);
  // Starting at the answer, nothing moves: the fit is a fixed point of itself (calibrate --check).
  problem.start = fit.values;
  FitResult again = fit_constants(problem);
  CHECK(again.values == fit.values);
}

TEST_CASE("fit: a constant the data push past its bound stays on it, the others still fit") {
  Synthetic s = synthetic_rows();
  FitProblem problem = s.problem({1.25, 4e-6, 0});  // 125% of peak: data faster than the bound allows
  FitResult fit = fit_constants(problem);
  CHECK(fit.values[0] == 1);
  CHECK(fit.values[1] > 1e-7);
  CHECK(fit.values[2] >= 0);
  CHECK(fit.loss > 0);
}

TEST_CASE("fit: soft-L1 loss and malformed problems") {
  CHECK(soft_l1(0) == 0);
  CHECK(soft_l1(0.1) == Approx(2 * 0.01 * (std::sqrt(2.0) - 1)));  // 0.008284
  CHECK(soft_l1(-1) == Approx(2 * 0.01 * (std::sqrt(101.0) - 1)));  // 0.181, ~2 s |r| far out
  Synthetic s = synthetic_rows();
  FitProblem problem = s.problem({0.8, 4e-6, 3e-12});
  problem.start = {2, 4e-6, 0};
  CHECK_THROWS_AS(fit_constants(problem), std::invalid_argument);
  problem.start.clear();
  problem.measured.pop_back();
  CHECK_THROWS_AS(fit_constants(problem), std::invalid_argument);
}

namespace {

std::string compute_json(const std::string& kernels) {
  return R"({"description": "d", "compute_models": {"ampere": {"description": "d",
    "conv_efficiency": 1, "memory_efficiency": 0.9, "launch": "4us",
    "kernels": )" + kernels + R"(,
    "sources": {"conv_efficiency": {"assumed": "a"}, "memory_efficiency": {"assumed": "a"},
      "launch": {"assumed": "a"}}}}})";
}

// A gemm/bf16 group with every parameter at its prior, one of them replaced by `name: value`.
std::string gemm_group(const std::string& name = "", const std::string& value = "") {
  std::string out = "{";
  for (const KernelParameter& p : kernel_parameters(KernelFamily::gemm))
    out += "\"" + p.name + "\": " + (p.name == name ? value : std::to_string(p.prior)) + ", ";
  if (!name.empty() && value.empty()) out += "\"" + name + "\": 1, ";
  return out + R"("sources": {"fitted": "f", "files": ["gemm.csv"], "rows": 3, "residual": 0.05}})";
}

}  // namespace

TEST_CASE("models: compute.json \"kernels\" groups, checked against the family's parameters") {
  Catalog catalog;
  add_catalog_text(catalog, compute_json(R"({"gemm/bf16": )" + gemm_group() + "}"), "c.json");
  const ComputeModel& model = catalog.compute("ampere", {});
  REQUIRE(model.kernels.count("gemm/bf16") == 1);
  const std::vector<KernelParameter>& parameters = kernel_parameters(KernelFamily::gemm);
  REQUIRE(model.kernels.at("gemm/bf16").values.size() == parameters.size());
  CHECK(model.kernels.at("gemm/bf16").values[0] == Approx(parameters[0].prior));
  CHECK(model.kernel_sources.at("gemm/bf16").rows == 3);
  CHECK(model.kernel_sources.at("gemm/bf16").files == std::vector<std::string>{"gemm.csv"});

  auto error = [](const std::string& kernels) {
    return input_error([&] {
      Catalog c;
      add_catalog_text(c, compute_json(kernels), "c.json");
    });
  };
  CHECK(error(R"({"conv/bf16": {}})").rfind("c.json:/compute_models/ampere/kernels/conv~1bf16: unknown kernel group 'conv/bf16'", 0) == 0);
  CHECK(error(R"({"gemm/bf99": {}})").rfind("c.json:/compute_models/ampere/kernels/gemm~1bf99: unknown dtype 'bf99'", 0) == 0);
  CHECK(error(R"({"prefill/int4_wo": {}})") ==
        "c.json:/compute_models/ampere/kernels/prefill~1int4_wo: unknown dtype 'int4_wo' in group 'prefill/int4_wo'; "
        "prefill groups are prefill/DTYPE with DTYPE one of bf16, fp16, fp8");
  CHECK(error(R"({"gemm/bf16": )" + gemm_group("made_up") + "}").find("made_up") != std::string::npos);
  const KernelParameter& first = parameters[0];
  CHECK(error(R"({"gemm/bf16": )" + gemm_group(first.name, std::to_string(first.upper * 2 + 1)) + "}")
            .rfind("c.json:/compute_models/ampere/kernels/gemm~1bf16/" + first.name + ": must be in [", 0) == 0);
}

TEST_CASE("kernel cross-validation: the same check predictions on 1 and 2 threads, each row held out of its own fit") {
  // 12 bf16 GEMMs of the reference H100 table's kind on h100, from the family's priors.
  std::string text = kGemmHeader;
  for (int m : {1, 16, 128, 1024})
    for (int n : {1024, 8192, 28672}) text += kH100 + "bfloat16," + std::to_string(m) + "," + std::to_string(n) + ",4096,1\n";
  KernelTable table = parse_kernel_table(text, "g.csv");
  KernelGroup group;
  group.architecture = "hopper";
  group.dtype = "bf16";
  for (const KernelParameter& p : kernel_parameters(KernelFamily::gemm)) group.start.push_back(p.prior);
  const GpuModel& h100 = catalog().gpu("h100", {});
  // "Measured": the model's own time at the priors, scaled 1.1x, so that every fit has work to do.
  for (const KernelTable::Row& row : table.rows) {
    KernelSample sample{&h100, row.row};
    sample.row.measured_s = 1.1 * predict_kernel_s(h100, KernelConstants{group.start}, row.row);
    group.samples.push_back(sample);
  }
  std::vector<KernelGroup> groups = {group};
  std::vector<std::vector<double>> one = cross_validated_times(groups, 3, 1);
  std::vector<std::vector<double>> two = cross_validated_times(groups, 3, 2);
  CHECK(one == two);
  REQUIRE(one.at(0).size() == 12);
  for (double t : one[0]) CHECK(t > 0);  // every row was in some fold and got a prediction
}
