#include <catch2/catch.hpp>
#include <sstream>

#include "helpers.hpp"
#include "topology/analysis.hpp"

using namespace topsim;
using namespace topsim::test;

TEST_CASE("analysis: bisection bandwidth of the bundled servers") {
  // DGX-1 V100, GPUs {0,1,2,3} | {4,5,6,7}: NVLinks 0-4 x2, 1-5 x2, 2-6 x1, 3-7 x1 = 6 x 25 GB/s.
  Topology v100 = bundled("dgx1-v100");
  CHECK(bisection_Bps(v100, true).value() == Approx(150e9));
  // Over all links the host path adds socket 0's two PCIe Gen3 x16 uplinks: 2 x 15.754 GB/s.
  CHECK(bisection_Bps(v100, false).value() == Approx(150e9 + 2 * 15.754e9));
  // DGX-2: the 6 x 8 trunk links between the baseboards, 48 x 25 GB/s.
  CHECK(bisection_Bps(bundled("dgx2"), true).value() == Approx(1200e9));
  // DGX A100: 4 GPUs x 12 links x 25 GB/s into the switches.
  CHECK(bisection_Bps(bundled("dgx-a100"), true).value() == Approx(1200e9));
  // A PCIe-only box: no NVLink; across sockets one Gen4 x16 uplink per socket, 31.508 GB/s.
  Topology pcie = bundled("pcie-8x-rtx4090");
  CHECK(bisection_Bps(pcie, true).value() == 0.0);
  CHECK(bisection_Bps(pcie, false).value() == Approx(31.508e9));
  // Two GPUs joined by two NVLinks.
  CHECK(bisection_Bps(Topology::build(load_topology_spec(test_data("tiny.json")), catalog()), true).value() ==
        Approx(50e9));
}

TEST_CASE("analysis: Graphviz output names every device and link") {
  std::ostringstream out;
  write_dot(out, Topology::build(load_topology_spec(test_data("tiny.json")), catalog()));
  std::string dot = out.str();
  CHECK(dot.rfind("graph G {", 0) == 0);
  CHECK(dot.find("label=\"GPU0\\ngpu0\\nv100\", shape=box") != std::string::npos);
  CHECK(dot.find("label=\"pcie0\\npcie3-switch\", shape=diamond") != std::string::npos);
  CHECK(dot.find("0--1 [label=\"nvlink2 x2\", style=bold") != std::string::npos);
}
