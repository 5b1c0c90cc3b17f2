// A topology file as `topsim topo FILE` reads it: a server, built with the bundled catalog, or a
// cluster whose "node" names a bundled server, expanded and built.
#include "fuzz_common.hpp"
#include "topology/cluster.hpp"
#include "topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace topsim;
  return fuzz::expect_valid_or_input_error([&] {
    const std::string path = "fuzz-topology.json";
    std::string text = fuzz::as_text(data, size);
    if (!is_cluster_text(text, path)) {
      Topology::build(parse_topology_spec(text, path), fuzz::catalog());
      return;
    }
    ClusterSpec cluster = parse_cluster_spec(text, path);
    for (const TopologySpec& server : fuzz::bundled_servers()) {
      if (server.name != cluster.node) continue;
      TopologySpec expanded = expand_cluster(cluster, server, fuzz::catalog());
      // Building takes about 5 ms per device under ASan: larger clusters (valid up to
      // max_cluster_devices) would read as hangs, so only their expansion is checked here.
      if (expanded.devices.size() <= fuzz::max_built_devices) Topology::build(expanded, fuzz::catalog());
    }
  });
}
