// topsim import: nvidia-smi topo -m and NCCL XML into topologies (src/interop/).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "interop/nccl_xml.hpp"
#include "interop/nvidia_smi.hpp"
#include "interop/topology_writer.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

std::vector<TopologySpec> servers() {
  std::vector<TopologySpec> out;
  for (const char* name : {"dgx-a100", "dgx-h100", "dgx1-v100", "pcie-8x-rtx4090"})
    out.push_back(load_topology_spec(data_path("topologies/" + std::string(name) + ".json")));
  return out;
}

// The generated text through the normal loader, as the command does before writing.
Topology load_back(const ImportResult& result, const std::string& name) {
  return Topology::build(load_topology_spec(write_temp(name, write_topology_json(result.spec))), catalog());
}

std::string smi_error(const std::string& file) {
  return input_error([&] { smi_machine(parse_nvidia_smi(read_text(test_data("import/" + file)), file)); });
}

std::string xml_error(const std::string& file) {
  return input_error([&] { parse_nccl_xml(read_text(test_data("import/" + file)), file); });
}

int links_between(const TopologySpec& s, const std::string& a, const std::string& b) {
  int n = 0;
  for (const LinkSpec& l : s.links)
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) n += l.count;
  return n;
}

}  // namespace

TEST_CASE("import: a DGX-1 topo -m gives its sockets, PCIe switches, NICs and NVLinks") {
  SmiMatrix m = parse_nvidia_smi(read_text(test_data("import/dgx1-v100.txt")), "dgx1-v100.txt");
  CHECK(m.labels.size() == 12);
  CHECK(m.gpus == 8);
  CHECK(m.nic_names == std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"});
  ImportedMachine machine = smi_machine(m);
  REQUIRE(machine.sockets.size() == 2);
  CHECK(machine.sockets[1].cores == "20-39,60-79");
  CHECK(machine.switches.size() == 4);
  CHECK(machine.nvlinks.size() == 16);
  CHECK(machine.shared_host_bridge == true);
  CHECK(machine.gpus[3].pcie_switch == 1);
  CHECK(machine.nics[2].pcie_switch == 2);
  ImportResult r = build_topology_spec(machine, catalog(), servers(), ImportOptions{"", "", "", "imported"});
  CHECK(r.spec.devices.front().model == "v100");  // inferred from the NVLink matrix
  CHECK(links_between(r.spec, "gpu0", "gpu3") == 2);
  CHECK(links_between(r.spec, "cpu0", "cpu1") == 2);
  Topology t = load_back(r, "dgx1.json");
  CHECK(t.gpu_count() == 8);
  CHECK(t.nics().size() == 4);
}

TEST_CASE("import: NV12 on every pair means NVSwitch planes like the bundled DGX A100") {
  SmiMatrix m = parse_nvidia_smi(read_text(test_data("import/dgx-a100.txt")), "dgx-a100.txt");
  ImportResult r = build_topology_spec(smi_machine(m), catalog(), servers(), ImportOptions{"a100", "", "", "x"});
  int nvswitches = 0;
  for (const DeviceSpec& d : r.spec.devices) nvswitches += d.type == DeviceType::nvswitch;
  CHECK(nvswitches == 6);
  CHECK(links_between(r.spec, "gpu5", "nvswitch3") == 2);
  CHECK(links_between(r.spec, "gpu0", "gpu1") == 0);
  CHECK(load_back(r, "a100.json").nics().size() == 8);
}

TEST_CASE("import: spaces, a prompt line, PXB and NODE, no NVLink and no NICs") {
  SmiMatrix m = parse_nvidia_smi(read_text(test_data("import/pcie-8gpu-spaces.txt")), "box.txt");
  ImportedMachine machine = smi_machine(m);
  CHECK(machine.nics.empty());
  CHECK(machine.shared_host_bridge == false);
  // Socket 0: two switches on root ports; socket 1: a parent switch above two.
  REQUIRE(machine.switches.size() == 5);
  CHECK(machine.switches[2].parent == -1);
  CHECK(machine.switches[3].parent == 2);
  CHECK(machine.switches[4].parent == 2);
  CHECK_THROWS_AS(build_topology_spec(machine, catalog(), servers(), ImportOptions{}), UsageError);  // --gpu needed
  ImportResult r = build_topology_spec(machine, catalog(), servers(), ImportOptions{"rtx4090", "", "", "box"});
  CHECK(load_back(r, "box.json").gpu_count() == 8);
}

TEST_CASE("import: an extra GPU NUMA ID column is read past") {
  SmiMatrix m = parse_nvidia_smi(read_text(test_data("import/dgx-h100-gpu-numa-id.txt")), "h100.txt");
  CHECK(m.numa_affinity[7] == "1");
  CHECK(m.cpu_affinity[0] == "0-55,112-167");
  ImportResult r = build_topology_spec(smi_machine(m), catalog(), servers(), ImportOptions{"h100", "", "", "h"});
  CHECK(links_between(r.spec, "gpu0", "nvswitch0") == 5);
  CHECK(load_back(r, "h100.json").gpu_count() == 8);
}

TEST_CASE("import: malformed topo -m names the line and what was expected") {
  CHECK(smi_error("bad-token.txt") ==
        "bad-token.txt:3: row GPU1, column GPU3: 'NVX' is not a relation; expected X, NV# (NV1, NV2, ...), PIX, PXB, PHB, NODE or SYS");
  CHECK(smi_error("bad-ragged.txt") == "bad-ragged.txt:3: row GPU1 has 3 cells, expected 4 (one per column GPU0..GPU3)");
  CHECK(smi_error("bad-no-header.txt") ==
        "bad-no-header.txt:1: no header line: expected the column names nvidia-smi topo -m prints first "
        "(GPU0 GPU1 ... [NIC0 ...] CPU Affinity NUMA Affinity)");
  CHECK(smi_error("bad-asymmetric.txt") ==
        "bad-asymmetric.txt:4: row GPU2, column GPU1 reads PIX but row GPU1 (line 3) reads PHB; the matrix must be symmetric");
}

TEST_CASE("import: a DGX-1 NCCL XML gives the same machine as its topo -m") {
  ImportedMachine xml = parse_nccl_xml(read_text(test_data("import/dgx1-v100.xml")), "dgx1.xml");
  ImportedMachine smi = smi_machine(parse_nvidia_smi(read_text(test_data("import/dgx1-v100.txt")), "dgx1.txt"));
  REQUIRE(xml.sockets.size() == 2);
  CHECK(xml.sockets[0].cores == smi.sockets[0].cores);
  CHECK(xml.sockets[1].numa_node == 1);
  CHECK(xml.switches.size() == smi.switches.size());
  REQUIRE(xml.nvlinks.size() == smi.nvlinks.size());
  for (std::size_t i = 0; i < xml.nvlinks.size(); ++i) {
    CHECK(xml.nvlinks[i].a == smi.nvlinks[i].a);
    CHECK(xml.nvlinks[i].b == smi.nvlinks[i].b);
    CHECK(xml.nvlinks[i].count == smi.nvlinks[i].count);
  }
  for (std::size_t i = 0; i < 8; ++i) CHECK(xml.gpus[i].pcie_switch == smi.gpus[i].pcie_switch);
  CHECK(xml.nics[3].name == "mlx5_3");
  ImportResult r = build_topology_spec(xml, catalog(), servers(), ImportOptions{"", "", "", "d"});
  CHECK(r.spec.devices.back().model == "connectx4-edr");  // 100000 Mb/s: the reference's EDR NIC
}

TEST_CASE("import: NVSwitch links in NCCL XML become switch planes; sm picks the GPU") {
  ImportedMachine m = parse_nccl_xml(read_text(test_data("import/dgx-a100-nvswitch.xml")), "a100.xml");
  CHECK(m.nvswitch_links == std::vector<int>(8, 12));
  CHECK(m.gpus[0].sm == "80");  // the model is chosen with the catalogue, by device id or sm
  CHECK(m.nics[7].speed_bps == 200e9);
  ImportResult r = build_topology_spec(m, catalog(), servers(), ImportOptions{"", "", "", "a"});
  CHECK(r.spec.devices.front().model == "a100");
  CHECK(r.spec.devices.back().model == "connectx6-hdr");
  CHECK(load_back(r, "a100x.json").gpu_count() == 8);
}

TEST_CASE("import: malformed NCCL XML names the element, its line and what was expected") {
  CHECK(xml_error("bad-not-well-formed.xml").rfind("bad-not-well-formed.xml:5: not well-formed XML: ", 0) == 0);
  CHECK(xml_error("bad-gpu-without-sm.xml") ==
        "bad-gpu-without-sm.xml:7: /system/cpu/pci[2]/gpu: <gpu> has no 'sm' attribute");
  CHECK(xml_error("bad-nvlink-target.xml") ==
        "bad-nvlink-target.xml:11: /system/cpu/pci[2]/gpu/nvlink[2]: nvlink target '0000:1c:00.0' is no GPU of this "
        "file (GPU busids: 0000:1a:00.0, 0000:1b:00.0; NVSwitches have tclass 0x068000)");
}

TEST_CASE("import: the writer's text loads back to the same spec") {
  TopologySpec original = load_topology_spec(data_path("topologies/dgx-a100.json"));
  TopologySpec again = load_topology_spec(write_temp("again.json", write_topology_json(original)));
  CHECK(write_topology_json(again) == write_topology_json(original));
  CHECK(again.links.size() == original.links.size());
  CHECK(again.scale_out->switch_model == "qm8700");
}

TEST_CASE("import: topo -m affinities found by fuzzing are input errors, not stoi or out of memory") {
  auto error = [](const std::string& file) {
    return input_error([&] { smi_machine(parse_nvidia_smi(read_text(test_data("fuzz/nvidia_smi/" + file)), file)); });
  };
  CHECK(error("numa-affinity-past-int.txt") ==
        "numa-affinity-past-int.txt:2: row GPU0: NUMA Affinity '99999999999' is not a NUMA node (0 to 4095) or a list of "
        "them like 0-3 or N/A");
  std::string cores = error("cpu-affinity-700-million-cores.txt");
  CHECK_THAT(cores, Catch::StartsWith("cpu-affinity-700-million-cores.txt:2: row GPU0: CPU Affinity '0-999999,0-999999,"));
  CHECK_THAT(cores, Catch::EndsWith("' is not a list of cores like 0-19,40-59 or N/A"));
}

// Real captures people posted (tests/data/real-inputs, bytes as posted; SOURCES.md says where from).
namespace {

SmiMatrix real_smi(const std::string& file) {
  return parse_nvidia_smi(read_text(test_data("real-inputs/" + file)), file);
}

std::string real_smi_error(const std::string& file) {
  return input_error([&] { smi_machine(real_smi(file)); });
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("import: an empty CPU Affinity cell keeps the NUMA Affinity in its column (della, tabs)") {
  // GPU0's fields after its 14 cells are "", "0", "", "N/A": CPU Affinity empty, NUMA Affinity 0.
  // Split on whitespace, the 0 was read as the CPU list and the NUMA node was lost.
  SmiMatrix m = real_smi("h100-della-snc-6nic.topo.txt");
  CHECK(m.labels.size() == 14);
  CHECK(m.cpu_affinity[0] == "");
  CHECK(m.numa_affinity[0] == "0");
  CHECK(m.cpu_affinity[4] == "1");
  CHECK(m.numa_affinity[4] == "1");
  CHECK(m.nic_names[5] == "mlx5_5");
}

TEST_CASE("import: an empty cell in a space-aligned copy is found by the header's columns") {
  // GPU0's CPU Affinity stands empty under its header; its 0 stands under NUMA Affinity.
  std::string text =
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV4                     0\n"
      "GPU1    NV4      X      0-23            0\n";
  SmiMatrix m = parse_nvidia_smi(text, "spaces.txt");
  CHECK(m.cpu_affinity[0] == "");
  CHECK(m.numa_affinity[0] == "0");
  CHECK(m.cpu_affinity[1] == "0-23");
  CHECK(m.cells[0][1] == "NV4");
}

TEST_CASE("import: a socket split into NUMA nodes reads NODE between them (della)") {
  ImportedMachine machine = smi_machine(real_smi("h100-della-snc-6nic.topo.txt"));
  REQUIRE(machine.sockets.size() == 2);
  CHECK(machine.sockets[0].package == 0);
  CHECK(machine.sockets[1].package == 0);
  CHECK(machine.sockets[0].numa_node == 0);
  CHECK(machine.sockets[1].numa_node == 1);
  CHECK(machine.gpus[4].socket == 1);
  CHECK(machine.nics[3].socket == 1);  // NIC3 is PIX to GPU4
  CHECK(has_note(machine.notes, "sub-NUMA"));
}

TEST_CASE("import: one CPU Affinity on GPUs SYS apart is a cpuset, not a socket (DGX-1 P100)") {
  SmiMatrix m = real_smi("dgx1-p100-sheffield.topo.txt");
  // The header lost the tabs between its labels: GPU0GPU1...GPU7mlx5_0.
  CHECK(m.labels == std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "mlx5_0",
                                             "mlx5_2", "mlx5_1", "mlx5_3"});
  CHECK(m.cells[0][5] == "SYS");  // printed SOC
  ImportedMachine machine = smi_machine(m);
  REQUIRE(machine.sockets.size() == 2);
  CHECK(machine.sockets[0].cores == "");
  CHECK(machine.gpus[4].socket == 1);
  CHECK(has_note(machine.notes, "GPU0 and GPU4 both read CPU Affinity 1-1 but SYS apart"));
}

TEST_CASE("import: the remains of the header's escapes are removed (B300, sglang)") {
  SmiMatrix m = real_smi("b300-sglang-ansi-9nic.topo.txt");
  CHECK(m.gpus == 8);
  CHECK(m.labels.front() == "GPU0");
  CHECK(m.nic_names.back() == "mlx5_bond_0");
  CHECK(m.numa_affinity[7] == "1");
}

TEST_CASE("import: nvidia-smi topo -mp is refused unless --pcie-only says it is meant") {
  SmiMatrix m = real_smi("dgx1-topo-mp.topo.txt");
  CHECK(input_error([&] { check_smi_view(m, false); }) ==
        "dgx1-topo-mp.topo.txt:2: the file was printed by nvidia-smi topo -mp: that view shows PCIe paths only and hides "
        "NVLinks, so the machine would import without them; run nvidia-smi topo -m instead, or give --pcie-only if a "
        "machine without NVLink is meant");
  CHECK_NOTHROW(check_smi_view(m, true));
  // A topo -m matrix of a machine without NVLink keeps its NV# legend line: not -mp.
  CHECK_NOTHROW(check_smi_view(real_smi("rtx4090-8x-1nic.topo.txt"), false));
  CHECK_THROWS_AS(check_smi_view(real_smi("dgx1-v100-msccl.topo.txt"), true), UsageError);
}

TEST_CASE("import: a garbled copy that ran a cell into the affinity names that cause") {
  CHECK(real_smi_error("a100-8x-brev-phb-garbled.topo.txt") ==
        "a100-8x-brev-phb-garbled.topo.txt:3: row GPU0, column NIC7: 'PH0-115' is not a relation: the last cell runs into "
        "the CPU Affinity after it (the text lost a tab and part of the cell when it was copied); take the output of "
        "nvidia-smi topo -m again");
}

TEST_CASE("import: NVSwitch generation follows the GPU's NVLink, not the reference server") {
  // --gpu b200 --like dgx-h100: dgx-h100's gen-3 switches (5/4/4/5) add up to NV18 but speak
  // nvlink4. The fewest nvlink5 planes with the ports: 8 GPUs x 18 links = 144 ports; one 72-port
  // nvswitch-gen4 holds 72, so 2 planes of 9 links each.
  ImportedMachine machine = smi_machine(real_smi("hgx-h200-12nic.topo.txt"));
  ImportResult r = build_topology_spec(machine, catalog(), servers(), ImportOptions{"b200", "", "dgx-h100", "b"});
  int nvswitches = 0;
  for (const DeviceSpec& d : r.spec.devices)
    if (d.type == DeviceType::nvswitch) {
      ++nvswitches;
      CHECK(d.model == "nvswitch-gen4");
    }
  CHECK(nvswitches == 2);
  CHECK(links_between(r.spec, "gpu3", "nvswitch1") == 9);
  CHECK(load_back(r, "b.json").gpu_count() == 8);
}

TEST_CASE("import: the reference server is chosen by GPU generation, then socket count") {
  // Four V100 on two sockets: dgx-station-v100 (one socket) has the NVLinks, dgx1-v100 the sockets.
  std::vector<TopologySpec> with_station = servers();
  with_station.push_back(load_topology_spec(data_path("topologies/dgx-station-v100.json")));
  ImportResult r = build_topology_spec(smi_machine(real_smi("v100sxm2-4x-nv2-2nic.topo.txt")), catalog(), with_station,
                                       ImportOptions{"", "", "", "v"});
  CHECK(r.spec.devices.front().model == "v100");
  CHECK(has_note(r.notes, "the NVLinks match bundled dgx-station-v100"));
  CHECK(has_note(r.notes, "reference server: bundled dgx1-v100 (same GPU generation (volta), same socket count"));
  CHECK(links_between(r.spec, "cpu0", "cpu1") == 2);  // qpi-9.6 x 2, the E5-2698 v4's socket link
  CHECK(load_back(r, "v.json").gpu_count() == 4);
}
