#pragma once
// Charts as self-contained SVG text: line charts (busbw against message size, efficiency
// against GPUs) and stacked bars (iteration-time breakdown). Deterministic output: fixed
// geometry, fixed precision, series in the order given.
#include <string>
#include <utility>
#include <vector>

namespace topsim {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x rising
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;  ///< x on a base-2 logarithmic axis (message sizes, GPU counts)
  std::vector<Series> series;
  bool markers = false;  ///< a <circle class="point"> at each point (a lone point shows)
};

struct StackedBars {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;     ///< one bar each
  std::vector<std::string> segments;       ///< stacked bottom to top
  std::vector<std::vector<double>> values; ///< [category][segment], >= 0
  std::string x_label;                     ///< under the category labels; none when empty
  int title_digits = 1;                    ///< decimals of a segment's value in its tooltip
};

/// Rows of cells coloured by a value in [0, 1]: link utilisation against time.
struct HeatMap {
  std::string title;
  std::string x_label;
  double x_max = 1;                        ///< right edge of the last column, in x units (left edge 0)
  std::vector<std::string> rows;           ///< top to bottom
  std::vector<std::vector<double>> values; ///< [row][column], clamped to [0, 1]; every row as long
};

/// SVG of a chart, 640 x 360 user units; class "chart" on the root, one <polyline
/// class="series"> per series (one <rect class="segment"> per bar segment).
std::string svg(const LineChart& chart);
std::string svg(const StackedBars& chart);
/// Width 900, height growing with the rows (10 units each); one <rect class="cell"> per
/// non-zero cell, a colour scale on the right (idle cells show the background).
std::string svg(const HeatMap& chart);

}  // namespace topsim
