#pragma once
// Quantities with units at the boundary ("25GBps", "1.9us", "200Gbps", "80GiB", "312TFLOPS").
// Inside topsim every quantity is a double in SI units: bytes, seconds, bytes/s, FLOP/s, Hz.
#include <string>
#include <string_view>

namespace topsim {

/// Output units: an SI value divided by one of these is in that unit (one definition each).
constexpr double kGB = 1e9;             ///< bytes per GB; GB/s means 1e9 bytes/s throughout
constexpr double kGiB = 1073741824.0;   ///< bytes per GiB (2^30)
constexpr double kMiB = 1048576.0;      ///< bytes per MiB (2^20)
constexpr double kMs = 1e-3;            ///< seconds per millisecond
constexpr double kUs = 1e-6;            ///< seconds per microsecond

enum class Quantity { bandwidth, time, size, flop_rate, power, frequency };

/// Parses "<number><unit>" (spaces allowed between them) into SI units.
/// bandwidth: Bps kBps KBps MBps GBps TBps KiBps MiBps GiBps TiBps bps kbps Kbps Mbps Gbps Tbps
///            (also written "GB/s", "Gb/s"); decimal prefixes are powers of 1000, binary of 1024.
/// time: s ms us ns ps.  size: B kB KB MB GB TB KiB MiB GiB TiB.
/// flop_rate: FLOPS kFLOPS MFLOPS GFLOPS TFLOPS PFLOPS (also "TFLOP/s").  power: W kW.
/// frequency: Hz kHz MHz GHz (clock rates).
/// Throws ParseError with the valid units (and the closest one) when the text is not understood.
/// Rates and sizes must be > 0, times >= 0.
double parse_quantity(std::string_view text, Quantity kind);

inline double parse_bandwidth_Bps(std::string_view text) { return parse_quantity(text, Quantity::bandwidth); }
inline double parse_time_s(std::string_view text) { return parse_quantity(text, Quantity::time); }
inline double parse_size_B(std::string_view text) { return parse_quantity(text, Quantity::size); }
inline double parse_flop_rate(std::string_view text) { return parse_quantity(text, Quantity::flop_rate); }

/// Message sizes on the command line as nccl-tests reads them: "8", "1K", "256M", "8G"
/// (K/M/G/T are powers of 1024), plus the explicit units of Quantity::size ("64KiB", "1MB").
/// Returns whole bytes; throws ParseError on anything else, zero included.
double parse_cli_size_B(std::string_view text);

/// Compact size for tables: 1024 -> "1K", 268435456 -> "256M", 1000 -> "1000" (nccl-tests style).
std::string format_size(double size_B);

}  // namespace topsim
