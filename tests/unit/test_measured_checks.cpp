// What validate/calibrate --measured check in a user's log before comparing: the GPU names it
// prints against models/gpus.json, and the busbw no run on the topology can exceed.
#include <map>
#include <set>

#include "collectives/communicator.hpp"
#include "helpers.hpp"
#include "interop/gpu_names.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("GPU names compare without NVIDIA's prefix, case or extra blanks", "[gpu_names]") {
  CHECK(normalised_gpu_name("NVIDIA A100-SXM4-80GB") == "A100-SXM4-80GB");
  CHECK(normalised_gpu_name("  nvidia   H100 80GB  HBM3 ") == "H100 80GB HBM3");
  CHECK(normalised_gpu_name("A100-SXM4-40GB") == "A100-SXM4-40GB");  // drivers before R470
  CHECK(normalised_gpu_name("NVIDIA") == "NVIDIA");                  // nothing after the prefix: kept
  const GpuModel& a100 = catalog().gpus().at("a100");
  CHECK(gpu_prints_as(a100, "NVIDIA A100-SXM4-40GB"));
  CHECK(gpu_prints_as(a100, "A100-SXM4-40GB"));
  CHECK_FALSE(gpu_prints_as(a100, "NVIDIA A100-SXM4-80GB"));
  CHECK_FALSE(gpu_prints_as(catalog().gpus().at("h100"), "NVIDIA A100-SXM4-80GB"));
}

TEST_CASE("A printed name finds its model, else the models of the same chip", "[gpu_names]") {
  using Names = std::vector<std::string>;
  CHECK(gpu_models_printing(catalog(), "NVIDIA A100-SXM4-80GB") == Names{"a100-80gb"});
  CHECK(gpu_models_printing(catalog(), "NVIDIA H100 80GB HBM3") == Names{"h100"});
  CHECK(gpu_models_printing(catalog(), "Tesla V100-SXM2-16GB") == Names{"v100"});
  CHECK(gpu_models_printing(catalog(), "NVIDIA GeForce RTX 2080 Ti") == Names{"rtx2080ti"});
  // No model prints an A100 of 64 GB: every A100 is the closest (chip "A100"), in name order.
  CHECK(gpu_models_printing(catalog(), "NVIDIA A100-SXM4-64GB") == Names{"a100", "a100-80gb", "a100-pcie", "a100-pcie-80gb"});
  CHECK(gpu_models_printing(catalog(), "AMD Instinct MI250X").empty());  // chip "MI250X": no model of it
  CHECK(gpu_models_printing(catalog(), "Graphics Device").empty());      // no word with a digit: no chip
}

TEST_CASE("Every bundled GPU model has device names, each printed by one model only", "[gpu_names]") {
  // No source read for these prints the name nvidia-smi gives them (issue 48 added them without one).
  const std::set<std::string> unnamed = {"h20", "rtx-pro-6000-bse", "rtx5090"};
  std::map<std::string, std::string> owner;
  for (const auto& [name, model] : catalog().gpus()) {
    INFO(name);
    CHECK(model.device_names.empty() == (unnamed.count(name) == 1));
    for (const std::string& printed : model.device_names) {
      auto [at, fresh] = owner.emplace(normalised_gpu_name(printed), name);
      INFO(printed << " is also " << at->second << "'s");
      CHECK(fresh);
    }
  }
}

TEST_CASE("busbw ceiling: the line rate of the links a rank can send on", "[ceiling]") {
  SECTION("DGX A100: NVLink only, 12 x 25 GB/s = 300 GB/s; PCIe's 31.508 is not counted") {
    Topology t = bundled("dgx-a100");
    Communicator comm(t, all_gpus(t), nccl());
    Communicator::BusbwCeiling c = comm.busbw_ceiling(CollOp::allreduce);
    CHECK(c.Bps == Approx(300e9));
    CHECK(c.links == "12 x nvlink3 at 25 GB/s");
    CHECK(c.doubled_by.empty());  // NVSwitch gen2 has no NVLS; one server has no CollNet
    CHECK(c.gpu == 0);
  }
  SECTION("DGX H100: 18 x 25 GB/s = 450 GB/s, twice for an allreduce NVLS can run (900), not for allgather") {
    Topology t = bundled("dgx-h100");
    Communicator comm(t, all_gpus(t), nccl());
    Communicator::BusbwCeiling all = comm.busbw_ceiling(CollOp::allreduce);
    CHECK(all.Bps == Approx(900e9));
    CHECK(all.doubled_by == "nvls");
    CHECK(comm.busbw_ceiling(CollOp::allgather).Bps == Approx(450e9));
  }
  SECTION("GB200 NVL72 rack: 72 GPUs in one NVLink domain, 18 x 50 GB/s = 900 GB/s, twice under NVLS") {
    Topology t = bundled("gb200-nvl72-rack");
    Communicator comm(t, all_gpus(t), nccl());
    Communicator::BusbwCeiling c = comm.busbw_ceiling(CollOp::allreduce);
    CHECK(c.links == "18 x nvlink5 at 50 GB/s");  // the NVLink-C2C to Grace carries no NCCL traffic here
    CHECK(c.Bps == Approx(1800e9));
  }
  SECTION("4 A100 PCIe under the CPU: every link of a GPU, one PCIe Gen4 x16 = 31.508 GB/s") {
    Topology t = bundled("pcie-4x-a100");
    Communicator comm(t, all_gpus(t), nccl());
    CHECK(comm.busbw_ceiling(CollOp::allreduce).Bps == Approx(31.508e9));
  }
  SECTION("DGX-1 V100: not every pair is on NVLink, so PCIe counts: 6 x 25 + 15.754 = 165.754 GB/s") {
    Topology t = bundled("dgx1-v100");
    Communicator comm(t, all_gpus(t), nccl());
    CHECK(comm.busbw_ceiling(CollOp::sendrecv).Bps == Approx(165.754e9));
  }
}
