#pragma once
// What a server or cluster is made of, as named figures (one server's parts, then the fabric
// joining servers), and the aspects in which two such lists differ: what `topo diff` prints and
// what `compare` shows above its table, so that a ratio comes with its reasons.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/catalog.hpp"
#include "model/topology_spec.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// How a figure's number reads: its SI unit (the aspect's name ends in it) or a plain count.
enum class FigureUnit { count, ratio, bytes, bytes_per_s, flops_per_s, text };

/// A number in SI units, or a text (a model name, a fabric kind).
using FigureValue = std::variant<double, std::string>;

struct Figure {
  std::string aspect;  ///< snake_case, unit last: "gpu_memory_B", "hbm_bandwidth_Bps", "gpu_model"
  std::string label;   ///< for people: "GPU memory"
  FigureUnit unit = FigureUnit::count;
  FigureValue value;
};

/// One aspect in which two topologies differ. A side without the aspect (a data type one GPU
/// has no rate for, the fabric of a single server) holds nullopt.
struct FigureDiff {
  std::string aspect;
  std::string label;
  FigureUnit unit = FigureUnit::count;
  std::optional<FigureValue> a, b;
};

/// One GPU's NVLinks: how many lanes, their line rate summed over them (one direction), and the
/// first NVLink's link (its generation and per-link rate); `first` is null when it has none.
struct GpuNvlinks {
  int links = 0;
  double line_rate_Bps = 0;
  const Link* first = nullptr;
};
GpuNvlinks gpu_nvlinks(const Topology& t, int gpu);

/// Figures of server 0 of `t` (every server of a topology is alike but for faults) and, when
/// `fabric` is given, of the fabric joining `nodes` servers (`t` may hold fewer servers than
/// `nodes`: two are enough to wire the fabric's switches). `catalog` gives the NICs' port rates.
std::vector<Figure> topology_figures(const Topology& t, const Catalog& catalog, int nodes, const FabricSpec* fabric);

/// The aspects whose values differ, in `a`'s order, with those only `b` has after the aspect
/// `b` lists them after. Numbers compare exactly: both sides come from the same catalog.
std::vector<FigureDiff> diff_figures(const std::vector<Figure>& a, const std::vector<Figure>& b);

}  // namespace topsim
