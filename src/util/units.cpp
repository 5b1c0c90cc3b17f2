#include "util/units.hpp"

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

using UnitTable = std::vector<std::pair<std::string, double>>;

const UnitTable& units_of(Quantity kind) {
  static const UnitTable bandwidth = {
      {"Bps", 1.0},          {"kBps", 1e3},          {"KBps", 1e3},          {"MBps", 1e6},
      {"GBps", 1e9},         {"TBps", 1e12},         {"KiBps", 1024.0},      {"MiBps", 1048576.0},
      {"GiBps", 1073741824.0}, {"TiBps", 1099511627776.0}, {"bps", 0.125},   {"kbps", 125.0},
      {"Kbps", 125.0},       {"Mbps", 1.25e5},       {"Gbps", 1.25e8},       {"Tbps", 1.25e11},
      {"B/s", 1.0},          {"kB/s", 1e3},          {"KB/s", 1e3},          {"MB/s", 1e6},
      {"GB/s", 1e9},         {"TB/s", 1e12},         {"Kb/s", 125.0},        {"Mb/s", 1.25e5},
      {"Gb/s", 1.25e8},      {"Tb/s", 1.25e11},      {"b/s", 0.125},         {"kb/s", 125.0},
      {"KiB/s", 1024.0},     {"MiB/s", 1048576.0},   {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0}};
  static const UnitTable time = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
  static const UnitTable size = {{"B", 1.0},         {"kB", 1e3},          {"KB", 1e3},
                                 {"MB", 1e6},        {"GB", 1e9},          {"TB", 1e12},
                                 {"KiB", 1024.0},    {"MiB", 1048576.0},   {"GiB", 1073741824.0},
                                 {"TiB", 1099511627776.0}};
  static const UnitTable flop_rate = {{"FLOPS", 1.0},   {"kFLOPS", 1e3},   {"MFLOPS", 1e6},
                                      {"GFLOPS", 1e9},  {"TFLOPS", 1e12},  {"PFLOPS", 1e15},
                                      {"FLOP/s", 1.0},  {"kFLOP/s", 1e3},  {"MFLOP/s", 1e6},
                                      {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  static const UnitTable power = {{"W", 1.0}, {"kW", 1e3}};
  static const UnitTable frequency = {{"Hz", 1.0}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
  switch (kind) {
    case Quantity::bandwidth: return bandwidth;
    case Quantity::time: return time;
    case Quantity::size: return size;
    case Quantity::flop_rate: return flop_rate;
    case Quantity::power: return power;
    case Quantity::frequency: return frequency;
  }
  return size;
}

const char* name_of(Quantity kind) {
  switch (kind) {
    case Quantity::bandwidth: return "bandwidth";
    case Quantity::time: return "time";
    case Quantity::size: return "size";
    case Quantity::flop_rate: return "FLOP rate";
    case Quantity::power: return "power";
    case Quantity::frequency: return "frequency";
  }
  return "quantity";
}

const char* example_of(Quantity kind) {
  switch (kind) {
    case Quantity::bandwidth: return "25GBps";
    case Quantity::time: return "1.9us";
    case Quantity::size: return "80GiB";
    case Quantity::flop_rate: return "312TFLOPS";
    case Quantity::power: return "400W";
    case Quantity::frequency: return "1410MHz";
  }
  return "";
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// Splits "25GBps" into the number 25 and the rest "GBps"; throws if no number leads the text.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view original) {
  double value = 0;
  const char* begin = text.data();
  if (!text.empty() && text.front() == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || ptr == begin)
    throw ParseError("'" + std::string(original) + "' does not start with a number");
  if (!std::isfinite(value)) throw ParseError("'" + std::string(original) + "' is not a finite number");
  return {value, trim(std::string_view(ptr, static_cast<std::size_t>(text.data() + text.size() - ptr)))};
}

}  // namespace

double parse_quantity(std::string_view raw, Quantity kind) {
  std::string_view text = trim(raw);
  auto [value, unit] = split_number(text, raw);
  const UnitTable& table = units_of(kind);
  std::vector<std::string> names;
  for (const auto& [name, scale] : table) {
    if (name == unit) {
      double si = value * scale;
      bool rate_like = kind != Quantity::time;
      if (rate_like && !(si > 0))
        throw ParseError(std::string(name_of(kind)) + " must be positive, got '" + std::string(raw) + "'");
      if (!rate_like && si < 0)
        throw ParseError("time must not be negative, got '" + std::string(raw) + "'");
      return si;
    }
    if (name.find('/') == std::string::npos) names.push_back(name);
  }
  if (unit.empty())
    throw ParseError("'" + std::string(raw) + "' has no unit; write a " + name_of(kind) + " like '" +
                     example_of(kind) + "' (units: " + join(names, ", ") + ")");
  std::string message = "unknown " + std::string(name_of(kind)) + " unit '" + std::string(unit) + "' in '" +
                        std::string(raw) + "'";
  std::vector<std::string> all;
  for (const auto& entry : table) all.push_back(entry.first);
  std::string guess = closest_match(unit, all);
  if (!guess.empty()) message += " (did you mean '" + guess + "'?)";
  throw ParseError(message + "; valid: " + join(names, ", "));
}

double parse_cli_size_B(std::string_view raw) {
  std::string_view text = trim(raw);
  auto [value, unit] = split_number(text, raw);
  static const UnitTable ncl = {{"", 1.0},
                                {"K", 1024.0},
                                {"k", 1024.0},
                                {"M", 1048576.0},
                                {"m", 1048576.0},
                                {"G", 1073741824.0},
                                {"g", 1073741824.0},
                                {"T", 1099511627776.0},
                                {"t", 1099511627776.0}};
  double scale = -1;
  for (const auto& [name, factor] : ncl)
    if (name == unit) scale = factor;
  if (scale < 0) {
    try {
      scale = parse_quantity("1" + std::string(unit), Quantity::size);
    } catch (const ParseError&) {
      throw ParseError("'" + std::string(raw) +
                       "' is not a message size; write bytes like 8, 1K, 256M, 8G (K/M/G = 1024^1/2/3) or "
                       "with a unit like 64KiB, 1MB");
    }
  }
  double bytes = value * scale;
  if (!(bytes >= 1)) throw ParseError("message size must be at least 1 byte, got '" + std::string(raw) + "'");
  if (bytes != std::floor(bytes))
    throw ParseError("message size must be a whole number of bytes, got '" + std::string(raw) + "'");
  return bytes;
}

std::string format_size(double size_B) {
  static const std::pair<const char*, double> steps[] = {
      {"T", 1099511627776.0}, {"G", 1073741824.0}, {"M", 1048576.0}, {"K", 1024.0}};
  for (const auto& [suffix, scale] : steps) {
    double units = size_B / scale;
    if (units >= 1 && units == std::floor(units)) return fixed(units, 0) + suffix;
  }
  return size_B == std::floor(size_B) ? fixed(size_B, 0) : shortest(size_B);
}

}  // namespace topsim
