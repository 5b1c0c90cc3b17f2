#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {
std::string build_error(const std::string& path) {
  return input_error([&] { Topology::build(load_topology_spec(path), catalog()); });
}
// The error for tiny.json with one change, the temporary path replaced by "tiny.json".
std::string tiny_error(const std::string& from, const std::string& to) {
  std::string path = tiny_with(from, to);
  std::string message = build_error(path);
  if (message.rfind(path, 0) == 0) message = "tiny.json" + message.substr(path.size());
  return message;
}
}  // namespace

TEST_CASE("topology: every bundled server loads") {
  struct Expect {
    const char* name;
    int gpus, nics;
  };
  for (const Expect& e : {Expect{"dgx1-p100", 8, 4}, Expect{"dgx1-v100", 8, 4}, Expect{"dgx2", 16, 8},
                          Expect{"dgx-a100", 8, 8}, Expect{"hgx-a800", 8, 4}, Expect{"dgx-h100", 8, 8},
                          Expect{"hgx-h800", 8, 8}, Expect{"dgx-station-v100", 4, 0}, Expect{"pcie-8x-rtx4090", 8, 1},
                          // cloud instances and Blackwell Ultra (tools/gen_cloud_topologies.py); a
                          // GPU's EFAs are one multi-port NIC device (32, 16, 16 EFAs on p5, p5en, p6-b300)
                          Expect{"aws-p4d", 8, 4}, Expect{"aws-p4de", 8, 4}, Expect{"aws-p5", 8, 8},
                          Expect{"aws-p5en", 8, 8}, Expect{"aws-p6-b200", 8, 8}, Expect{"aws-p6-b300", 8, 8},
                          Expect{"azure-nd-a100-v4", 8, 8}, Expect{"azure-ndm-a100-v4", 8, 8},
                          Expect{"azure-nd-h100-v5", 8, 8}, Expect{"azure-nd-h200-v5", 8, 8},
                          Expect{"azure-nd-gb200-v6", 4, 4}, Expect{"gcp-a3", 8, 4}, Expect{"gcp-a3-mega", 8, 8},
                          Expect{"gcp-a3-ultra", 8, 8}, Expect{"gcp-a4", 8, 8}, Expect{"oci-bm-gpu-h100-8", 8, 8},
                          Expect{"oci-bm-gpu-h200-8", 8, 8}, Expect{"oci-bm-gpu-b200-8", 8, 8},
                          Expect{"oci-bm-gpu-b300-8", 8, 8}, Expect{"hgx-b300", 8, 8}, Expect{"gb300-tray", 4, 4},
                          Expect{"gb300-nvl72-rack", 72, 72}}) {
    INFO(e.name);
    Topology t = bundled(e.name);
    CHECK(t.name() == e.name);
    CHECK(t.gpu_count() == e.gpus);
    CHECK(static_cast<int>(t.nics().size()) == e.nics);
  }
}

TEST_CASE("topology: GPUs and NICs are numbered in file order and reach their CPU") {
  Topology t = bundled("dgx1-v100");
  CHECK(t.device(t.gpu(5)).id == "gpu5");
  CHECK(t.device(t.local_cpu(t.gpu(5))).id == "cpu1");
  CHECK(t.device(t.local_cpu(t.nics()[0])).id == "cpu0");
  CHECK(t.device(t.nics()[3]).nic_index == 3);
}

TEST_CASE("topology: a copied topology keeps its links") {
  Topology original = bundled("dgx1-v100");
  Topology copy = original;
  REQUIRE(copy.links().size() == original.links().size());
  Edge e = *boost::out_edges(copy.gpu(0), copy.graph()).first;
  CHECK(copy.link(e).model_name == "nvlink2");
}

TEST_CASE("topology: a moved topology keeps its graph, and moving does not copy it") {
  Topology original = bundled("dgx1-v100");
  const Device* gpu0 = &original.device(original.gpu(0));
  std::size_t edges = boost::num_edges(original.graph());
  Topology moved = std::move(original);
  // The vertex storage itself changed hands: the device is where it was.
  CHECK(&moved.device(moved.gpu(0)) == gpu0);
  CHECK(boost::num_edges(moved.graph()) == edges);
  // Every out-edge still names a link whose ends are its ends (the edge list's iterators survived).
  for (Vertex v : boost::make_iterator_range(boost::vertices(moved.graph())))
    for (Edge e : boost::make_iterator_range(boost::out_edges(v, moved.graph()))) {
      const Link& link = moved.link(e);
      CHECK((link.a == v || link.b == v));
      CHECK(moved.other_end(e, v) == (link.a == v ? link.b : link.a));
    }
  Topology assigned = bundled("dgx-h100");
  assigned = std::move(moved);
  CHECK(&assigned.device(assigned.gpu(0)) == gpu0);
  CHECK(assigned.name() == "dgx1-v100");
}

TEST_CASE("topology: each wiring error has its own message") {
  CHECK(tiny_error("\"id\": \"gpu1\"", "\"id\": \"gpu0\"") == "tiny.json:/devices/1/id: duplicate device id 'gpu0' (first defined at /devices/0)");
  CHECK(tiny_error("\"b\": \"gpu1\"", "\"b\": \"gpu9\"") ==
        "tiny.json:/links/0/b: unknown device 'gpu9' (did you mean 'gpu0'?); known: cpu0, gpu0, gpu1, pcie0");
  CHECK(tiny_error("\"model\": \"v100\"}", "\"model\": \"v1000\"}") ==
        "tiny.json:/devices/0/model: unknown GPU model 'v1000' (did you mean 'v100'?); known: a10, a100, a100-80gb, "
        "a100-pcie, a100-pcie-80gb, a30, a6000, a800, b200, b200-sxm, b300, gb300, gh200, gh200-144gb, h100, h100-pcie, h20, "
        "h200, h800, l4, l40s, p100, rtx-pro-6000-bse, rtx2080ti, rtx3090, rtx4090, rtx5090, rtx6000-ada, t4, v100, v100-pcie, "
        "v100-sxm3");
  CHECK(tiny_error("\"count\": 2", "\"count\": 7") == "tiny.json:/links/0: gpu0 (v100) would have 7 NVLinks; its model v100 has 6");
  CHECK(tiny_error("\"model\": \"nvlink2\"", "\"model\": \"nvlink3\"") == "tiny.json:/links/0/model: gpu0 (v100) speaks nvlink2, not nvlink3");
  CHECK(tiny_error("{\"a\": \"gpu0\", \"b\": \"pcie0\", \"model\": \"pcie3-x16\"}",
                   "{\"a\": \"gpu0\", \"b\": \"pcie0\", \"model\": \"nvlink2\"}") ==
        "tiny.json:/links/1: NVLink model 'nvlink2' cannot join gpu0 (gpu) and pcie0 (pcie_switch); NVLink joins GPUs and NVSwitches");
  CHECK(tiny_error("{\"a\": \"gpu0\", \"b\": \"gpu1\", \"model\": \"nvlink2\", \"count\": 2}",
                   "{\"a\": \"gpu0\", \"b\": \"gpu1\", \"model\": \"pcie3-x16\"}") ==
        "tiny.json:/links/0: PCIe model 'pcie3-x16' cannot join gpu0 (gpu) and gpu1 (gpu); PCIe joins a GPU or NIC to a PCIe "
        "switch or CPU, or switches and CPUs to each other");
  CHECK(tiny_error("\"a\": \"gpu1\", \"b\": \"pcie0\"", "\"a\": \"gpu1\", \"b\": \"gpu1\"") ==
        "tiny.json:/links/2: a link must join two different devices; both ends are 'gpu1'");
  CHECK(tiny_error("{\"a\": \"gpu1\", \"b\": \"pcie0\", \"model\": \"pcie3-x16\"}",
                   "{\"a\": \"pcie0\", \"b\": \"gpu0\", \"model\": \"pcie3-x16\"}") ==
        "tiny.json:/links/2: pcie0 and gpu0 are already linked at /links/1; describe parallel links with one entry and \"count\"");
  CHECK(tiny_error("{\"a\": \"pcie0\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\"}",
                   "{\"a\": \"pcie0\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\", \"count\": 3}") ==
        "tiny.json:/links/3: cpu0 (xeon-e5-2698v4) would use 48 PCIe lanes; its model xeon-e5-2698v4 has 40");
  CHECK(tiny_error("{\"a\": \"gpu1\", \"b\": \"pcie0\", \"model\": \"pcie3-x16\"}",
                   "{\"a\": \"gpu1\", \"b\": \"pcie0\", \"model\": \"pcie3-x16\", \"count\": 2}") ==
        "tiny.json:/links/2: gpu1 (v100) already has a PCIe host link; a gpu has exactly one host interface");
  CHECK(tiny_error("{\"a\": \"pcie0\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\"}",
                   "{\"a\": \"pcie0\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\", \"count\": 5}") ==
        "tiny.json:/links/3: pcie0 (pcie3-switch) would use 112 PCIe lanes; its model pcie3-switch has 96");
}

TEST_CASE("topology: devices must hang together") {
  CHECK(tiny_error(",\n    {\"a\": \"pcie0\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\"}", "") ==
        "tiny.json:/devices/3: cpu0 is not connected to anything; link it or remove it");
  CHECK(tiny_error("    {\"a\": \"gpu1\", \"b\": \"pcie0\", \"model\": \"pcie3-x16\"},\n", "") ==
        "tiny.json:/devices/1: gpu1 has no PCIe link; every gpu needs one to reach a CPU");
  CHECK(tiny_error("{\"id\": \"gpu0\", \"type\": \"gpu\", \"model\": \"v100\"},\n    {\"id\": \"gpu1\", \"type\": \"gpu\", \"model\": \"v100\"},",
                   "") == "tiny.json:/devices: no GPU in this topology; add a device of type \"gpu\"");
}

TEST_CASE("topology: a PCIe switch has one CPU above it") {
  std::string text = read_text(data_path("topologies/dgx1-v100.json"));
  std::string uplink = "{\"a\": \"pcie1\", \"b\": \"cpu0\", \"model\": \"pcie3-x16\"}";
  auto at = text.find(uplink);
  REQUIRE(at != std::string::npos);
  text.insert(at + uplink.size(), ",\n    {\"a\": \"pcie1\", \"b\": \"cpu1\", \"model\": \"pcie3-x16\"}");
  std::string path = write_temp("dgx1-two-roots.json", text);
  std::string message = build_error(path);
  CHECK(message.find("pcie1 is already under cpu0; a PCIe switch has one upstream port, to one CPU") != std::string::npos);
}

TEST_CASE("topology: NVSwitch ports are a budget") {
  // Every GPU of DGX-2 uses 8 of a gen-1 switch's 18 ports together with 8 trunk ports; adding
  // 3 more trunk links to one switch goes over.
  std::string text = read_text(data_path("topologies/dgx2.json"));
  std::string trunk = "\"b\": \"nvswitch6\", \"model\": \"nvlink2\", \"count\": 8";
  auto at = text.find(trunk);
  REQUIRE(at != std::string::npos);
  text.replace(at, trunk.size(), "\"b\": \"nvswitch6\", \"model\": \"nvlink2\", \"count\": 11");
  std::string path = write_temp("dgx2-overbooked.json", text);
  std::string message = build_error(path);
  CHECK(message.find("would use 19 NVLink ports; its model nvswitch-gen1 has 18") != std::string::npos);
}
