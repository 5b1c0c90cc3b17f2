#include "report/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace topsim {

namespace {

constexpr double kWidth = 640, kHeight = 360;
constexpr double kLeft = 70, kRight = 170, kTop = 36, kBottom = 70;  // plot margins; legend on the right
// A colour-blind-safe palette (Okabe and Ito), cycled.
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

std::string num(double v, int digits = 1) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// An axis value: three significant digits; from 10,000 up with a k, M or G suffix (128k, not
// 1.28e+05), so that a tick stays narrower than the margin beside the axis.
std::string value_text(double v) {
  char text[32];
  const char* suffix = "";
  // The bounds are where three digits of the smaller suffix would round up to 1000.
  if (std::fabs(v) >= 999.5e6) v /= 1e9, suffix = "G";
  else if (std::fabs(v) >= 999.5e3) v /= 1e6, suffix = "M";
  else if (std::fabs(v) >= 1e4) v /= 1e3, suffix = "k";
  std::snprintf(text, sizeof text, "%.3g%s", v, suffix);
  return text;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string tick_text(double v) {
  char text[32];
  if (v >= 1e9 && std::fmod(v, 1 << 30) == 0) std::snprintf(text, sizeof text, "%gG", v / (1 << 30));
  else if (v >= 1 << 20 && std::fmod(v, 1 << 20) == 0) std::snprintf(text, sizeof text, "%gM", v / (1 << 20));
  else if (v >= 1024 && std::fmod(v, 1024) == 0) std::snprintf(text, sizeof text, "%gK", v / 1024);
  else std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string frame(const std::string& title, const std::string& body, double width = kWidth, double height = kHeight) {
  return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"" + num(width / 2) +
         "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" + escape(title) + "</text>\n" + body + "</svg>\n";
}

std::string legend(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 20; ++i) {
    double y = kTop + 14 * static_cast<double>(i);
    out += "<rect x=\"" + num(kWidth - kRight + 12) + "\" y=\"" + num(y - 8) + "\" width=\"10\" height=\"10\" fill=\"" +
           kColours[i % 8] + "\"/><text x=\"" + num(kWidth - kRight + 26) + "\" y=\"" + num(y + 1) + "\">" +
           escape(names[i]) + "</text>\n";
  }
  return out;
}

}  // namespace

std::string svg(const LineChart& chart) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min, y_max = 0;
  for (const Series& s : chart.series)
    for (const auto& [x, y] : s.points) {
      double xv = chart.log_x ? std::log2(std::max(x, 1e-300)) : x;
      x_min = std::min(x_min, xv);
      x_max = std::max(x_max, xv);
      y_max = std::max(y_max, y);
    }
  if (!std::isfinite(x_min)) x_min = 0, x_max = 1;
  if (x_max <= x_min) x_max = x_min + 1;
  if (y_max <= 0) y_max = 1;
  y_max *= 1.05;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + ((chart.log_x ? std::log2(x) : x) - x_min) / (x_max - x_min) * w; };
  auto py = [&](double y) { return kTop + h - y / y_max * h; };
  std::string body = "<g class=\"axes\" stroke=\"#444\">\n<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + h) +
                     "\" x2=\"" + num(kLeft + w) + "\" y2=\"" + num(kTop + h) + "\"/>\n<line x1=\"" + num(kLeft) +
                     "\" y1=\"" + num(kTop) + "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(kTop + h) + "\"/>\n</g>\n";
  for (int i = 0; i <= 4; ++i) {  // y ticks
    double v = y_max * i / 4;
    body += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(v) + 4) + "\" text-anchor=\"end\">" + value_text(v) + "</text>\n";
  }
  if (chart.log_x) {
    int step = std::max(1, static_cast<int>(std::ceil((x_max - x_min) / 8)));
    for (int e = static_cast<int>(std::ceil(x_min)); e <= static_cast<int>(std::floor(x_max)); e += step)
      body += "<text x=\"" + num(px(std::ldexp(1.0, e))) + "\" y=\"" + num(kTop + h + 16) + "\" text-anchor=\"middle\">" +
              tick_text(std::ldexp(1.0, e)) + "</text>\n";
  } else {
    for (int i = 0; i <= 4; ++i) {
      double v = x_min + (x_max - x_min) * i / 4;
      body += "<text x=\"" + num(px(v)) + "\" y=\"" + num(kTop + h + 16) + "\" text-anchor=\"middle\">" + tick_text(v) + "</text>\n";
    }
  }
  body += "<text x=\"" + num(kLeft + w / 2) + "\" y=\"" + num(kHeight - 12) + "\" text-anchor=\"middle\">" +
          escape(chart.x_label) + "</text>\n<text transform=\"translate(16 " + num(kTop + h / 2) +
          ") rotate(-90)\" text-anchor=\"middle\">" + escape(chart.y_label) + "</text>\n";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    names.push_back(s.name);
    std::string points;
    for (const auto& [x, y] : s.points) points += (points.empty() ? "" : " ") + num(px(x)) + "," + num(py(y));
    body += "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(kColours[i % 8]) +
            "\" points=\"" + points + "\"><title>" + escape(s.name) + "</title></polyline>\n";
    if (chart.markers)
      for (const auto& [x, y] : s.points)
        body += "<circle class=\"point\" cx=\"" + num(px(x)) + "\" cy=\"" + num(py(y)) + "\" r=\"3\" fill=\"" +
                kColours[i % 8] + "\"><title>" + escape(s.name + ": " + value_text(x) + ", " + value_text(y)) +
                "</title></circle>\n";
  }
  return frame(chart.title, body + legend(names));
}

std::string svg(const StackedBars& chart) {
  double y_max = 0;
  for (const auto& bar : chart.values) {
    double total = 0;
    for (double v : bar) total += std::max(v, 0.0);
    y_max = std::max(y_max, total);
  }
  if (y_max <= 0) y_max = 1;
  y_max *= 1.05;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  const double slot = chart.categories.empty() ? w : w / static_cast<double>(chart.categories.size());
  std::string body = "<line stroke=\"#444\" x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + h) + "\" x2=\"" +
                     num(kLeft + w) + "\" y2=\"" + num(kTop + h) + "\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double v = y_max * i / 4;
    body += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(kTop + h - v / y_max * h + 4) + "\" text-anchor=\"end\">" +
            value_text(v) + "</text>\n";
  }
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    double x = kLeft + slot * static_cast<double>(c) + slot * 0.15, base = 0;
    for (std::size_t s = 0; s < chart.segments.size() && s < chart.values[c].size(); ++s) {
      double v = std::max(chart.values[c][s], 0.0);
      double top = kTop + h - (base + v) / y_max * h;
      body += "<rect class=\"segment\" x=\"" + num(x) + "\" y=\"" + num(top) + "\" width=\"" + num(slot * 0.7) +
              "\" height=\"" + num(v / y_max * h) + "\" fill=\"" + kColours[s % 8] + "\"><title>" +
              escape(chart.categories[c] + ": " + chart.segments[s] + " " + num(v, chart.title_digits)) + "</title></rect>\n";
      base += v;
    }
    // Labels slanted so that long ones do not run into each other.
    body += "<text font-size=\"9\" text-anchor=\"end\" transform=\"translate(" + num(x + slot * 0.35) + " " +
            num(kTop + h + 10) + ") rotate(-30)\">" + escape(chart.categories[c]) + "</text>\n";
  }
  body += "<text transform=\"translate(16 " + num(kTop + h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
          escape(chart.y_label) + "</text>\n";
  if (!chart.x_label.empty())
    body += "<text x=\"" + num(kWidth - kRight) + "\" y=\"" + num(kHeight - 6) + "\" text-anchor=\"end\">" +
            escape(chart.x_label) + "</text>\n";
  return frame(chart.title, body + legend(chart.segments));
}

namespace {

// Viridis at five stops, interpolated: perceptually even and readable by the colour-blind.
std::string heat_colour(double v) {
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  v = std::clamp(v, 0.0, 1.0) * 4;
  int i = std::min(3, static_cast<int>(v));
  double f = v - i;
  char text[8];
  int rgb[3];
  for (int c = 0; c < 3; ++c) rgb[c] = static_cast<int>(std::lround(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f));
  std::snprintf(text, sizeof text, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return text;
}

}  // namespace

std::string svg(const HeatMap& chart) {
  constexpr double width = 900, left = 250, right = 80, top = 36, bottom = 46, row_h = 10;
  const double w = width - left - right, h = row_h * static_cast<double>(chart.rows.size());
  const double height = top + h + bottom;
  const std::size_t columns = chart.values.empty() ? 0 : chart.values.front().size();
  const double cell_w = columns == 0 ? w : w / static_cast<double>(columns);
  std::string body;
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    double y = top + row_h * static_cast<double>(r);
    body += "<text font-size=\"9\" x=\"" + num(left - 6) + "\" y=\"" + num(y + 8) + "\" text-anchor=\"end\">" +
            escape(chart.rows[r]) + "</text>\n";
    for (std::size_t c = 0; c < columns && r < chart.values.size(); ++c) {
      double v = chart.values[r][c];
      if (!(v > 0)) continue;
      body += "<rect class=\"cell\" x=\"" + num(left + cell_w * static_cast<double>(c)) + "\" y=\"" + num(y) +
              "\" width=\"" + num(cell_w + 0.5) + "\" height=\"" + num(row_h) + "\" fill=\"" + heat_colour(v) + "\"/>\n";
    }
  }
  body += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
          "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double v = chart.x_max * i / 4;
    body += "<text x=\"" + num(left + w * i / 4) + "\" y=\"" + num(top + h + 14) + "\" text-anchor=\"middle\">" +
            value_text(v) + "</text>\n";
  }
  body += "<text x=\"" + num(left + w / 2) + "\" y=\"" + num(top + h + 34) + "\" text-anchor=\"middle\">" +
          escape(chart.x_label) + "</text>\n";
  // Colour scale: 0% at the bottom, 100% at the top, ten steps.
  const double scale_x = width - right + 16, scale_h = std::min(h, 160.0);
  for (int i = 0; i < 10; ++i)
    body += "<rect x=\"" + num(scale_x) + "\" y=\"" + num(top + scale_h * (9 - i) / 10) + "\" width=\"14\" height=\"" +
            num(scale_h / 10 + 0.5) + "\" fill=\"" + heat_colour((i + 0.5) / 10) + "\"/>\n";
  body += "<text x=\"" + num(scale_x + 18) + "\" y=\"" + num(top + 8) + "\">100%</text>\n<text x=\"" +
          num(scale_x + 18) + "\" y=\"" + num(top + scale_h) + "\">0%</text>\n";
  return frame(chart.title, body, width, height);
}

}  // namespace topsim
