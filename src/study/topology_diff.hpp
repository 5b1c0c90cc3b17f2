#pragma once
// Two servers or clusters side by side, aspect by aspect (topology/figures.hpp), built through a
// Workspace: what `topo diff` prints, and what `compare` prints above its table for each
// column it sets against the first.
#include <string>
#include <vector>

#include "report/table.hpp"
#include "study/workspace.hpp"
#include "topology/figures.hpp"

namespace topsim {

/// One side: a bundled name or path, its what-ifs (--nodes, --nic, --nics-per-node), a GPU
/// what-if ("" keeps the file's GPUs), and what to call it in the output.
struct TopologyChoice {
  std::string topology;
  ScaleOut scale;
  std::string gpu;
  std::string label;  ///< "" = `topology`
};

struct TopologyDiff {
  std::string a, b;  ///< the sides' labels
  std::vector<FigureDiff> rows;
};

/// Figures of one side: a server's parts, and its fabric when it is a cluster or `scale.nodes`
/// replicates a server. At most two servers are built (a cluster may hold 131,072 GPUs); the
/// server count comes from the file or --nodes. InputError or UsageError as Workspace::topology
/// raises them (an unknown name, a what-if the topology cannot take).
std::vector<Figure> describe_topology(const Workspace& workspace, const TopologyChoice& choice);

TopologyDiff diff_topologies(const Workspace& workspace, const TopologyChoice& a, const TopologyChoice& b);

/// "A vs B: no differences", or a line naming the count and a table aspect | A | B, numbers
/// in GiB, GB/s and TFLOPS; every line starts with `prefix` (compare's "# ").
std::string topology_diff_text(const TopologyDiff& diff, const std::string& prefix = "");

/// csv or json: one row per aspect, its key carrying the SI unit ("gpu_memory_B"), the sides'
/// values as SI numbers or texts (null/empty where a side lacks the aspect). json wraps the rows
/// as {"a": label, "b": label, "differences": [...]}.
std::string topology_diff_render(const TopologyDiff& diff, Format format);

}  // namespace topsim
