// The datasheet every bundled GPU carries (models/gpus.json): complete, and consistent with itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "helpers.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

/// Dense bf16 tensor peak (fp16 where a GPU has no bf16), 0 when it has neither.
double tensor_peak_flops_per_s(const GpuModel& m) {
  for (const char* key : {"bf16_tensor", "fp16_tensor"}) {
    auto it = m.math.find(key);
    if (it != m.math.end()) return it->second.dense_flops_per_s;
  }
  return 0;
}

/// Dense tensor FLOP per SM per clock, at the clock a source gives for the tensor peaks where one
/// is recorded (Hopper, Blackwell SM100), else at the boost clock.
double flop_per_sm_clock(const GpuModel& m) {
  double clock_Hz = m.tensor_clock_Hz > 0 ? m.tensor_clock_Hz : m.boost_clock_Hz;
  return tensor_peak_flops_per_s(m) / (m.sms * clock_Hz);
}

std::string gpu_text(const std::string& extra_keys, const std::string& sources) {
  return R"({"gpu_models": {"g": {"description": "test GPU", "architecture": "hopper", "pcie": "pcie5-x16",
    "peer_over_pcie": true, "memory": {"capacity": "80GiB", "bandwidth": "3TBps"}, "sms": 132, )" +
         extra_keys + R"(
    "math": {"bf16_tensor": {"dense": "989.5TFLOPS"}}, "copy": {"write_latency": "2.5us", "memcpy_latency": "10us"},
    "sources": {"pcie": "s", "peer_over_pcie": "s", "memory": "s", "sms": "s", "math": "s", "copy": "s")" +
         sources + "}}}}";
}

const std::string kDatasheet = R"("clocks": {"base": "1590MHz", "boost": "1980MHz"}, "l2": "50MiB",
    "compute_capability": "9.0", "tdp": "700W",)";
const std::string kDatasheetSources = R"(, "clocks": "s", "l2": "s", "compute_capability": "s", "tdp": "s")";

std::string load_error(const std::string& text) {
  return input_error([&] {
    Catalog catalog;
    add_catalog_text(catalog, text, "gpus.json");
  });
}

}  // namespace

TEST_CASE("datasheet: every bundled GPU states SMs, clocks, L2, power, compute capability, memory and its peaks") {
  const auto& gpus = catalog().gpus();
  REQUIRE(gpus.size() >= 32);  // 29 before issue 48, plus h20, rtx-pro-6000-bse and rtx5090
  for (const auto& [name, m] : gpus) {
    INFO(name);
    CHECK(m.sms > 0);
    CHECK(m.base_clock_Hz > 0);
    CHECK(m.base_clock_Hz <= m.boost_clock_Hz);
    CHECK(m.tensor_clock_Hz <= m.boost_clock_Hz);
    CHECK(m.l2_B > 0);
    CHECK(m.tdp_W > 0);
    CHECK(m.compute_capability.find('.') != std::string::npos);
    CHECK(m.memory_B > 0);
    CHECK(m.memory_Bps > 0);
    CHECK_FALSE(m.math.empty());
    for (const auto& [dtype, rate] : m.math) {
      INFO(dtype);
      CHECK(rate.dense_flops_per_s > 0);
      // NVIDIA lists 2:4 sparsity at most 2x dense (Blackwell Ultra FP4: 18 against 14 PFLOPS), up
      // to the rounding of its printed figures (L40S: 362.05 dense, 733 sparse = 2.025x; A30 TF32
      // 82 and 165 = 2.012x).
      CHECK(rate.sparse_flops_per_s <= 2 * rate.dense_flops_per_s * 1.03);
    }
  }
}

TEST_CASE("datasheet: the new GPUs and NVIDIA's listing of B300/GB300 read as written") {
  const Catalog& c = catalog();
  // A100-SXM4-40GB: 1410 MHz and 40 MiB L2 (openxla specs/a100_sxm_40.txtpb: 1.41 GHz, 41943040 B).
  const GpuModel& a100 = c.gpu("a100", {});
  CHECK(a100.boost_clock_Hz == Approx(1.41e9));
  CHECK(a100.l2_B == 40.0 * 1048576);
  CHECK(a100.compute_capability == "8.0");
  // H100 SXM: tensor peaks at 1829.52 MHz, below the 1980 MHz boost (specs/h100_sxm.txtpb).
  CHECK(c.gpu("h100", {}).tensor_clock_Hz == Approx(1830e6));  // XLA 1829.5201 MHz, written to 4 digits
  CHECK(c.gpu("gh200", {}).tdp_W == 1000);  // the top of the datasheet's 450-1000 W module range
  CHECK(c.gpu("rtx-pro-6000-bse", {}).compute_capability == "12.0");
  CHECK(c.gpu("rtx5090", {}).compute_capability == "12.0");
  CHECK(c.gpu("rtx5090", {}).architecture == "blackwell");
  CHECK(c.gpu("h20", {}).compute_capability == "9.0");
  // B300 FP4 as AIC lists it: 14 PFLOPS dense, 18 sparse (not 2x); GB300: 15 and 1.44 EF / 72 = 20.
  CHECK(c.gpu("b300", {}).math.at("fp4_tensor").dense_flops_per_s == 14000e12);
  CHECK(c.gpu("b300", {}).math.at("fp4_tensor").sparse_flops_per_s == 18000e12);
  CHECK(c.gpu("gb300", {}).math.at("fp4_tensor").sparse_flops_per_s == 20000e12);
  CHECK(c.gpu("gb300", {}).sms == 152);  // specs/gb300.txtpb model_str "... 152 cores"
}

// Dense tensor FLOP per SM per clock is a property of the SM design, so every GPU of one compute
// capability must give the same figure from its own datasheet (peak / (SMs x clock)) within 3% of
// the capability's median. The figures the sources give:
//   7.0, 7.5: 1024 (V100: 125e12 / (80 x 1.53e9) = 1021; T4: 65e12 / (40 x 1.59e9) = 1022)
//   8.0: 2048 (A100: 312e12 / (108 x 1.41e9) = 2049; openxla specs/a100_sxm_40.txtpb: 4 matrix units x
//        256 bf16 FMA = 2048 FLOP per clock)
//   8.6, 8.9, 12.0: 1024 on professional boards (A6000: 154.8e12 / (84 x 1.8e9) = 1024)
//   9.0: 4096 at the matrix-unit clock (specs/h100_sxm.txtpb: 4 x 512 FMA at 1.8295 GHz;
//        989.5e12 / (132 x 1.8295e9) = 4097)
//   10.0, 10.3: 8192 (specs/b200.txtpb: 4 x 1024 FMA)
// GeForce boards run FP16/BF16 with FP32 accumulate at half that rate (their whitepaper columns);
// they are held to half the median of their capability.
TEST_CASE("datasheet: tensor FLOP per SM per clock agree within a compute capability") {
  const std::set<std::string> geforce = {"rtx2080ti", "rtx3090", "rtx4090", "rtx5090"};
  // Entries whose listed peak does not follow from their SMs and clock, each for a stated reason;
  // each must stay outside the 3% (else it no longer needs to be listed here).
  const std::map<std::string, std::string> explained = {
      // The export part's tensor rate is cut: 148e12 / (78 x 1.98e9) = 958, about a quarter of 4096.
      {"h20", "cut-down tensor rate"},
      // 2.25e15 / (158 x 1.8353e9) = 7759, 9% below GB300's 8507: XLA's b300.txtpb (158 SMs) repeats
      // b200.txtpb's clocks; either its SM count or the clock behind NVIDIA's 2.25 PFLOPS differs.
      {"b300", "158 SMs at B200's clocks exceed NVIDIA's listed peak"},
  };
  std::map<std::string, std::vector<double>> by_capability;
  for (const auto& [name, m] : catalog().gpus()) {
    if (tensor_peak_flops_per_s(m) == 0 || explained.count(name)) continue;
    by_capability[m.compute_capability].push_back(flop_per_sm_clock(m) * (geforce.count(name) ? 2 : 1));
  }
  std::map<std::string, double> median;
  for (auto& [cc, figures] : by_capability) {
    std::sort(figures.begin(), figures.end());
    std::size_t n = figures.size();
    median[cc] = n % 2 ? figures[n / 2] : (figures[n / 2 - 1] + figures[n / 2]) / 2;
  }
  CHECK(median.at("8.0") == Approx(2048).epsilon(0.03));
  CHECK(median.at("9.0") == Approx(4096).epsilon(0.03));
  CHECK(median.at("10.0") == Approx(8192).epsilon(0.03));
  for (const auto& [name, m] : catalog().gpus()) {
    if (tensor_peak_flops_per_s(m) == 0) continue;
    double figure = flop_per_sm_clock(m) * (geforce.count(name) ? 2 : 1);
    INFO(name << ": " << figure << " FLOP per SM per clock; " << m.compute_capability << " median "
              << median[m.compute_capability]);
    bool agrees = std::abs(figure / median[m.compute_capability] - 1) <= 0.03;
    if (explained.count(name))
      CHECK_FALSE(agrees);
    else
      CHECK(agrees);
  }
}

TEST_CASE("datasheet: the reader refuses a GPU without clocks, L2 or power, or with impossible clocks") {
  CHECK(load_error(gpu_text(kDatasheet, kDatasheetSources)).empty());
  std::string no_clocks = kDatasheet;
  no_clocks.erase(0, no_clocks.find("\"l2\""));
  CHECK(load_error(gpu_text(no_clocks, R"(, "l2": "s", "compute_capability": "s", "tdp": "s")")) ==
        "gpus.json:/gpu_models/g: missing required key 'clocks'");
  std::string no_l2 = kDatasheet;
  no_l2.erase(no_l2.find("\"l2\""), std::string("\"l2\": \"50MiB\",").size());
  CHECK(load_error(gpu_text(no_l2, R"(, "clocks": "s", "compute_capability": "s", "tdp": "s")")) ==
        "gpus.json:/gpu_models/g: missing required key 'l2'");
  std::string no_tdp = kDatasheet;
  no_tdp.erase(no_tdp.find("\"tdp\""), std::string("\"tdp\": \"700W\",").size());
  CHECK(load_error(gpu_text(no_tdp, R"(, "clocks": "s", "l2": "s", "compute_capability": "s")")) ==
        "gpus.json:/gpu_models/g: missing required key 'tdp'");
  std::string no_boost = kDatasheet;
  no_boost.replace(no_boost.find(", \"boost\": \"1980MHz\""), std::string(", \"boost\": \"1980MHz\"").size(), "");
  CHECK(load_error(gpu_text(no_boost, kDatasheetSources)) == "gpus.json:/gpu_models/g/clocks: missing required key 'boost'");
  std::string inverted = kDatasheet;
  inverted.replace(inverted.find("1590MHz"), 7, "2000MHz");
  CHECK(load_error(gpu_text(inverted, kDatasheetSources)) ==
        "gpus.json:/gpu_models/g/clocks/boost: boost clock (1980 MHz) is below the base clock (2000 MHz)");
  std::string extra = kDatasheet;
  extra.replace(extra.find("\"boost\""), 7, "\"turbo\": \"2GHz\", \"boost\"");
  CHECK(load_error(gpu_text(extra, kDatasheetSources)).find("gpus.json:/gpu_models/g/clocks/turbo: unknown key 'turbo'") == 0);
  std::string bad_unit = kDatasheet;
  bad_unit.replace(bad_unit.find("1980MHz"), 7, "1980Mhz");
  CHECK(load_error(gpu_text(bad_unit, kDatasheetSources)).find("gpus.json:/gpu_models/g/clocks/boost: unknown frequency unit 'Mhz'") == 0);
  std::string zero = kDatasheet;
  zero.replace(zero.find("1590MHz"), 7, "0MHz");
  CHECK(load_error(gpu_text(zero, kDatasheetSources)) ==
        "gpus.json:/gpu_models/g/clocks/base: frequency must be positive, got '0MHz'");
  std::string bad_cc = kDatasheet;
  bad_cc.replace(bad_cc.find("\"9.0\""), 5, "\"sm_90\"");
  CHECK(load_error(gpu_text(bad_cc, kDatasheetSources)) ==
        "gpus.json:/gpu_models/g/compute_capability: expected a CUDA compute capability like \"8.0\" or \"12.0\", got "
        "'sm_90'");
}
