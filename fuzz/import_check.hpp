#pragma once
// What `topsim import` does after parsing (src/cli/cmd_import.cpp): models chosen, the spec
// written as JSON, read back through the topology loader and built.
#include <stdexcept>

#include "fuzz_common.hpp"
#include "interop/machine.hpp"
#include "interop/topology_writer.hpp"
#include "routing/topo_matrix.hpp"
#include "topology/topology.hpp"

namespace topsim::fuzz {

inline Topology import_machine(const ImportedMachine& machine, const std::string& file) {
  ImportOptions options;
  options.name = "imported";
  ImportResult result = build_topology_spec(machine, catalog(), bundled_servers(), options);
  return Topology::build(parse_topology_spec(write_topology_json(result.spec), file), catalog());
}

/// The import's invariant: the built topology has one matrix row per GPU and NIC of the input, so
/// the CLI's cell by cell comparison stays in bounds.
inline void check_matrix_shape(std::size_t rows, const Topology& topology) {
  TopoMatrix got = topo_matrix(topology);
  if (got.cells.size() != rows) throw std::logic_error("imported topology has a different number of matrix rows");
}

}  // namespace topsim::fuzz
