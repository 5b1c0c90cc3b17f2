// topo diff: a topology's figures (topology/figures.hpp) and the aspects in which two differ,
// checked on hand-built figure lists and on bundled servers against their files and models/.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "study/topology_diff.hpp"
#include "topology/figures.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

const FigureDiff* row(const std::vector<FigureDiff>& rows, const std::string& aspect) {
  for (const FigureDiff& r : rows)
    if (r.aspect == aspect) return &r;
  return nullptr;
}

double number(const std::optional<FigureValue>& v) { return std::get<double>(v.value()); }
std::string text(const std::optional<FigureValue>& v) { return std::get<std::string>(v.value()); }

}  // namespace

TEST_CASE("topology diff: equal aspects drop out, one-sided aspects keep their place") {
  std::vector<Figure> a = {{"servers", "servers", FigureUnit::count, 1.0},
                           {"gpu_model", "GPU model", FigureUnit::text, std::string("a100")},
                           {"fabric_kind", "fabric", FigureUnit::text, std::string("rail")}};
  std::vector<Figure> b = {{"servers", "servers", FigureUnit::count, 1.0},
                           {"gpu_model", "GPU model", FigureUnit::text, std::string("a800")},
                           {"dense_fp8_tensor_flops_per_s", "dense fp8_tensor peak", FigureUnit::flops_per_s, 1e15}};
  std::vector<FigureDiff> rows = diff_figures(a, b);
  // servers equal (1 = 1): dropped. gpu_model differs; the fp8 rate only b has comes after
  // gpu_model, where b lists it; the fabric only a has stays last.
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].aspect == "gpu_model");
  CHECK(text(rows[0].a) == "a100");
  CHECK(text(rows[0].b) == "a800");
  CHECK(rows[1].aspect == "dense_fp8_tensor_flops_per_s");
  CHECK_FALSE(rows[1].a.has_value());
  CHECK(number(rows[1].b) == 1e15);
  CHECK(rows[2].aspect == "fabric_kind");
  CHECK_FALSE(rows[2].b.has_value());
  CHECK(diff_figures(a, a).empty());
}

TEST_CASE("topology diff: DGX A100 against HGX A800, aspect by aspect") {
  Topology a100 = bundled("dgx-a100");
  Topology a800 = bundled("hgx-a800");
  std::vector<FigureDiff> rows =
      diff_figures(topology_figures(a100, catalog(), 1, nullptr), topology_figures(a800, catalog(), 1, nullptr));
  std::vector<std::string> aspects;
  for (const FigureDiff& r : rows) aspects.push_back(r.aspect);
  // models/gpus.json: a100 40 GiB at 1555 GB/s and 12 NVLink3; a800 80 GiB at 2039 GB/s and 8.
  // Same math rates (312 TFLOPS dense FP16), same NVLink generation, NVSwitches (6), PCIe
  // (pcie4-x16 under 4 switches) and NIC model (ConnectX-6 HDR): none of those is a row.
  // The boards differ in NICs (8 against 4) and host CPUs (EPYC 7742 against Xeon 8358, whose
  // socket links differ with them).
  CHECK(aspects == std::vector<std::string>{"gpu_model", "gpu_memory_B", "hbm_bandwidth_Bps", "nvlinks_per_gpu",
                                            "nvlink_gpu_bandwidth_Bps", "nics_per_server", "cpu_model",
                                            "socket_link"});
  CHECK(text(row(rows, "gpu_model")->a) == "a100");
  CHECK(text(row(rows, "gpu_model")->b) == "a800");
  CHECK(number(row(rows, "gpu_memory_B")->a) == 40.0 * (1ULL << 30));
  CHECK(number(row(rows, "gpu_memory_B")->b) == 80.0 * (1ULL << 30));
  CHECK(number(row(rows, "hbm_bandwidth_Bps")->a) == 1555e9);
  CHECK(number(row(rows, "hbm_bandwidth_Bps")->b) == 2039e9);
  CHECK(number(row(rows, "nvlinks_per_gpu")->a) == 12);
  CHECK(number(row(rows, "nvlinks_per_gpu")->b) == 8);
  // NVLink 3.0: 25 GB/s per link per direction; 12 x 25 = 300 GB/s against 8 x 25 = 200 GB/s.
  CHECK(number(row(rows, "nvlink_gpu_bandwidth_Bps")->a) == Approx(300e9));
  CHECK(number(row(rows, "nvlink_gpu_bandwidth_Bps")->b) == Approx(200e9));
  CHECK(number(row(rows, "nics_per_server")->a) == 8);
  CHECK(number(row(rows, "nics_per_server")->b) == 4);
}

TEST_CASE("topology diff: a cluster against its server adds the server count and the fabric") {
  Workspace workspace(TOPSIM_DATA_DIR);
  TopologyDiff diff = diff_topologies(workspace, {"dgx-a100-superpod", {}, "", ""}, {"dgx-a100", {}, "", ""});
  CHECK(diff.a == "dgx-a100-superpod");
  CHECK(diff.b == "dgx-a100");
  REQUIRE_FALSE(diff.rows.empty());
  // topologies/clusters/dgx-a100-superpod.json: 140 DGX A100 (the server itself, so no GPU or
  // NIC row) on a rail fabric; the server alone has none.
  CHECK(diff.rows.front().aspect == "servers");
  CHECK(number(diff.rows.front().a) == 140);
  CHECK(number(diff.rows.front().b) == 1);
  const FigureDiff* fabric = row(diff.rows, "fabric_kind");
  REQUIRE(fabric);
  CHECK(text(fabric->a) == "rail");
  CHECK_FALSE(fabric->b.has_value());
  CHECK_FALSE(row(diff.rows, "gpu_model"));
  // The same topology twice differs in nothing.
  CHECK(diff_topologies(workspace, {"dgx-a100", {}, "", ""}, {"dgx-a100", {}, "", ""}).rows.empty());
  CHECK_THROWS_AS(diff_topologies(workspace, {"dgx-a10", {}, "", ""}, {"dgx-a100", {}, "", ""}), InputError);
}
