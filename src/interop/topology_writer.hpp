#pragma once
// A TopologySpec as JSON text in the bundled files' layout: one device per line, one link per
// line, keys in the order docs/formats.md lists them. load_topology_spec() reads it back.
#include <string>

#include "model/topology_spec.hpp"

namespace topsim {

std::string write_topology_json(const TopologySpec& spec);

}  // namespace topsim
