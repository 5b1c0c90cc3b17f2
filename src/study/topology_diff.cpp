#include "study/topology_diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/io.hpp"
#include "topology/cluster.hpp"
#include "topology/flat.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

std::string label_of(const TopologyChoice& choice) {
  if (!choice.label.empty()) return choice.label;
  std::string label = choice.topology;
  std::string what_if = choice.scale.text();
  if (!choice.gpu.empty()) what_if += (what_if.empty() ? "" : ", ") + std::string("gpu ") + choice.gpu;
  return what_if.empty() ? label : label + " (" + what_if + ")";
}

std::string number_text(double value, FigureUnit unit) {
  switch (unit) {
    case FigureUnit::bytes: return fixed(value / kGiB, 1) + " GiB";
    case FigureUnit::bytes_per_s: return fixed(value / kGB, 1) + " GB/s";
    case FigureUnit::flops_per_s: return fixed(value / 1e12, 1) + " TFLOPS";
    case FigureUnit::ratio: return fixed(value, 2);
    case FigureUnit::count:
    case FigureUnit::text: break;
  }
  return std::to_string(std::llround(value));
}

std::string value_text(const std::optional<FigureValue>& value, FigureUnit unit) {
  if (!value) return "-";
  if (const auto* text = std::get_if<std::string>(&*value)) return *text;
  return number_text(std::get<double>(*value), unit);
}

/// json: a number, a string or null; csv: the number's shortest round-trip text, or empty.
Cell value_cell(const std::optional<FigureValue>& value, FigureUnit unit, Format format) {
  if (!value) return format == Format::json ? Cell(std::numeric_limits<double>::quiet_NaN()) : Cell(std::string());
  if (const auto* text = std::get_if<std::string>(&*value)) return *text;
  const double number = std::get<double>(*value);
  if (format == Format::csv) return shortest(number);
  // Counts, sizes and rates that are whole numbers are JSON integers (2^53: exact in a double).
  if (unit != FigureUnit::ratio && std::abs(number) < 9007199254740992.0 && number == std::floor(number))
    return static_cast<long long>(number);
  return number;
}

}  // namespace

std::vector<Figure> describe_topology(const Workspace& workspace, const TopologyChoice& choice) {
  if (is_flat_name(choice.topology)) {
    const Topology& t = workspace.topology(choice.topology, choice.scale, choice.gpu);
    return topology_figures(t, workspace.catalog(), 1, nullptr);
  }
  const std::string path = workspace.topology_path(choice.topology);
  // Two servers wire every switch kind of the fabric; the figures are those of server 0.
  ScaleOut built = choice.scale;
  std::optional<FabricSpec> fabric;
  int nodes = 1;
  if (is_cluster_file(path)) {
    ClusterSpec cluster = rescale_cluster(load_cluster_spec(path), choice.scale);
    nodes = cluster.nodes;
    fabric = cluster.fabric;
    built.nodes = std::min(nodes, 2);
  } else if (choice.scale.nodes > 0) {
    nodes = choice.scale.nodes;
    fabric = load_topology_spec(path).scale_out;
    built.nodes = std::min(nodes, 2);
  }
  const Topology& t = workspace.topology(choice.topology, built, choice.gpu);
  return topology_figures(t, workspace.catalog(), nodes, fabric ? &*fabric : nullptr);
}

TopologyDiff diff_topologies(const Workspace& workspace, const TopologyChoice& a, const TopologyChoice& b) {
  return {label_of(a), label_of(b), diff_figures(describe_topology(workspace, a), describe_topology(workspace, b))};
}

std::string topology_diff_text(const TopologyDiff& diff, const std::string& prefix) {
  std::string head = prefix + diff.b + " against " + diff.a + ": ";
  if (diff.rows.empty()) return head + "no differences\n";
  Table table({{"aspect"}, {diff.a}, {diff.b}});
  for (const FigureDiff& row : diff.rows)
    table.add_row({row.label, value_text(row.a, row.unit), value_text(row.b, row.unit)});
  std::string out = head + std::to_string(diff.rows.size()) + (diff.rows.size() == 1 ? " difference\n" : " differences\n");
  for (const std::string& line : split(table.to_text(), '\n'))
    if (!line.empty()) out += prefix + line + "\n";
  return out;
}

std::string topology_diff_render(const TopologyDiff& diff, Format format) {
  if (format == Format::table) return topology_diff_text(diff);
  Table rows({{"aspect"}, {"a", 6}, {"b", 6}});
  for (const FigureDiff& row : diff.rows) rows.add_row({row.aspect, value_cell(row.a, row.unit, format), value_cell(row.b, row.unit, format)});
  if (format == Format::csv) return rows.to_csv();
  Table head({{"a"}, {"b"}, {"differences_count"}});
  head.add_row({diff.a, diff.b, static_cast<long long>(diff.rows.size())});
  return head.to_json_object(0, {{"differences", &rows}});
}

}  // namespace topsim
