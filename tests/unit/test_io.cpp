#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "io/json_reader.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

// One link model in a models directory of its own.
std::string models_dir_with(const std::string& name, const std::string& json) {
  auto path = std::filesystem::path(write_temp(name + "/links.json", json));
  return path.parent_path().string();
}

const char* kGoodLink = R"({"link_models": {"fast": {
  "description": "test link", "kind": "nvlink", "bandwidth": "25GBps", "efficiency": 0.5, "latency": "1us",
  "sources": {"bandwidth": "b", "efficiency": "e", "latency": "l"}}}})";

}  // namespace

TEST_CASE("io: syntax errors give line and column") {
  std::string message = input_error([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}", "x.json"); });
  CHECK(message == "x.json:3:8: invalid JSON: syntax error in value - unexpected ']'; expected '[', '{', or a literal");
}

TEST_CASE("io: duplicate keys are rejected at their object") {
  CHECK(input_error([] { parse_json_text(R"({"a": [{"k": 1}, {"k": 1, "k": 2}]})", "x.json"); }) ==
        "x.json:/a/1: duplicate key 'k' (each key may appear once per object)");
  CHECK(input_error([] { parse_json_text(R"({"k": 1, "k": 2})", "x.json"); }) ==
        "x.json: duplicate key 'k' (each key may appear once per object)");
}

TEST_CASE("io: object reader checks types, ranges and unknown keys") {
  Json doc = Json::parse(R"({"count": "2", "eff": 1.5, "name": "", "rate": 25, "bandwith": "1GBps"})");
  ObjectReader r(doc, SourceRef{"x.json", "/links/0"});
  CHECK(input_error([&] { r.integer("count", 1, 10); }) == "x.json:/links/0/count: expected an integer, got the string \"2\"");
  CHECK(input_error([&] { r.number("eff", 0, 1, true); }) == "x.json:/links/0/eff: must be in (0, 1], got 1.5");
  CHECK(input_error([&] { r.string("name"); }) == "x.json:/links/0/name: expected a non-empty string");
  CHECK(input_error([&] { r.quantity("rate", Quantity::bandwidth); }) ==
        "x.json:/links/0/rate: expected a string with a unit (e.g. \"25GBps\"), got the number 25");
  CHECK(input_error([&] { r.string("model"); }) == "x.json:/links/0: missing required key 'model'");
  r.optional("bandwidth");
  CHECK(input_error([&] { r.finish(); }) ==
        "x.json:/links/0/bandwith: unknown key 'bandwith' (did you mean 'bandwidth'?); valid keys here: bandwidth, count, "
        "eff, model, name, rate");
}

TEST_CASE("io: the bundled models load with their calibrated values") {
  const Catalog& c = catalog();
  const LinkModel& nvlink2 = c.link("nvlink2", {});
  CHECK(nvlink2.kind == LinkKind::nvlink);
  CHECK(nvlink2.bandwidth_Bps == 25e9);
  CHECK(nvlink2.efficiency == 0.9701);
  CHECK(nvlink2.latency_s == Approx(0.2e-6));
  CHECK(c.link("pcie3-x16", {}).lanes == 16);
  const GpuModel& a100 = c.gpu("a100", {});
  CHECK(a100.nvlink_model == "nvlink3");
  CHECK(a100.nvlink_count == 12);
  CHECK(a100.math.at("fp16_tensor").dense_flops_per_s == 312e12);
  CHECK(a100.math.at("fp16_tensor").sparse_flops_per_s == 624e12);
  CHECK(a100.copy.bidirectional_Bps.value() == Approx(425.1e9));
  CHECK_FALSE(c.gpu("h100", {}).copy.staging_Bps.has_value());
  CHECK(c.gpu("a800", {}).nvlink_count == 8);
  CHECK(c.gpu("h800", {}).nvlink_count == 8);
  CHECK(c.switch_model("nvswitch-gen1", {}).ports == 18);
  CHECK(c.nic("connectx6-hdr", {}).port_model == "ib-hdr");
  CHECK_FALSE(c.gpu("rtx4090", {}).peer_over_pcie);
}

TEST_CASE("io: every model parameter needs a source") {
  std::string missing = kGoodLink;
  missing.replace(missing.find(", \"latency\": \"l\""), std::string(", \"latency\": \"l\"").size(), "");
  std::string dir = models_dir_with("no-source", missing);
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/links.json:/link_models/fast/sources: no source for parameter 'latency'; every number in models/ says "
              "where it came from");
  std::string extra = kGoodLink;
  extra.replace(extra.find("\"latency\": \"l\""), std::string("\"latency\": \"l\"").size(),
                "\"latency\": \"l\", \"speed\": \"s\"");
  dir = models_dir_with("extra-source", extra);
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/links.json:/link_models/fast/sources/speed: source given for 'speed', which is not a parameter of this "
              "model; parameters: bandwidth, efficiency, latency");
}

TEST_CASE("io: model files are strict about kinds and names") {
  std::string bad_kind = kGoodLink;
  bad_kind.replace(bad_kind.find("\"nvlink\""), 8, "\"nvlnk\"");
  std::string dir = models_dir_with("bad-kind", bad_kind);
  CHECK(input_error([&] { load_catalog(dir); }) ==
        dir + "/links.json:/link_models/fast/kind: unknown kind 'nvlnk' (did you mean 'nvlink'?); known: network, "
              "numa, nvlink, pcie, socket");
  CHECK(input_error([] { load_catalog("/nonexistent-models"); }) ==
        "/nonexistent-models: models directory not found (set it with --models DIR)");
}

TEST_CASE("io: a topology file parses into plain structs") {
  TopologySpec spec = load_topology_spec(test_data("tiny.json"));
  CHECK(spec.name == "tiny");
  REQUIRE(spec.devices.size() == 4);
  CHECK(spec.devices[3].type == DeviceType::cpu);
  CHECK(spec.devices[3].cores == "0-19");
  CHECK(spec.devices[3].numa_node == 0);
  REQUIRE(spec.links.size() == 4);
  CHECK(spec.links[0].count == 2);
  CHECK(spec.links[0].where.pointer == "/links/0");
  CHECK_FALSE(spec.links[0].bandwidth_Bps.has_value());
}

TEST_CASE("io: missing files say so") {
  CHECK(input_error([] { load_topology_spec("/nonexistent/topology.json"); }) ==
        "/nonexistent/topology.json: cannot open: No such file or directory");
}

TEST_CASE("io: text already in memory parses as its file would, errors named by the given path") {
  std::string text = read_text(test_data("tiny.json"));
  TopologySpec spec = parse_topology_spec(text, "imported.json");
  CHECK(spec.name == "tiny");
  CHECK(spec.links.size() == 4);
  CHECK(spec.file == "imported.json");
  CHECK(input_error([] { parse_topology_spec("{\"name\": 1}", "in-memory.json"); }) ==
        "in-memory.json:/name: expected a string, got the number 1");
  CHECK_FALSE(is_cluster_text(text, "imported.json"));
  Catalog catalog;
  add_catalog_text(catalog, read_text(data_path("models/links.json")), "links.json");
  CHECK_NOTHROW(catalog.check_references());
}
