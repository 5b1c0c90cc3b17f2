#include <catch2/catch.hpp>

#include "util/error.hpp"
#include "util/units.hpp"

using namespace topsim;

namespace {
std::string parse_error(const std::string& text, Quantity kind) {
  try {
    parse_quantity(text, kind);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}
std::string cli_error(const std::string& text) {
  try {
    parse_cli_size_B(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("units: bandwidths in bytes and bits, decimal and binary prefixes") {
  CHECK(parse_bandwidth_Bps("25GBps") == 25e9);
  CHECK(parse_bandwidth_Bps("200Gbps") == 25e9);       // 200e9 bits / 8
  CHECK(parse_bandwidth_Bps("100Gb/s") == 12.5e9);
  CHECK(parse_bandwidth_Bps(" 15.754 GB/s ") == Approx(15.754e9));
  CHECK(parse_bandwidth_Bps("1GiBps") == 1073741824.0);
  CHECK(parse_bandwidth_Bps("1e3MBps") == 1e9);
}

TEST_CASE("units: times, sizes and FLOP rates") {
  CHECK(parse_time_s("1.9us") == Approx(1.9e-6));
  CHECK(parse_time_s("0us") == 0.0);
  CHECK(parse_time_s("250ns") == Approx(250e-9));
  CHECK(parse_size_B("80GiB") == 80.0 * 1073741824.0);
  CHECK(parse_size_B("160MB") == 160e6);
  CHECK(parse_flop_rate("312TFLOPS") == 312e12);
  CHECK(parse_flop_rate("19.5 TFLOP/s") == Approx(19.5e12));
}

TEST_CASE("units: clock frequencies") {
  CHECK(parse_quantity("1410MHz", Quantity::frequency) == 1410e6);
  CHECK(parse_quantity("1.98 GHz", Quantity::frequency) == Approx(1.98e9));
  CHECK(parse_quantity("1480.5MHz", Quantity::frequency) == Approx(1480.5e6));
  CHECK(parse_error("1410", Quantity::frequency) ==
        "'1410' has no unit; write a frequency like '1410MHz' (units: Hz, kHz, MHz, GHz)");
  CHECK(parse_error("0GHz", Quantity::frequency) == "frequency must be positive, got '0GHz'");
}

TEST_CASE("units: errors name the problem and the valid units") {
  CHECK(parse_error("25Gbs", Quantity::bandwidth) ==
        "unknown bandwidth unit 'Gbs' in '25Gbs' (did you mean 'Gbps'?); valid: Bps, kBps, KBps, MBps, GBps, TBps, "
        "KiBps, MiBps, GiBps, TiBps, bps, kbps, Kbps, Mbps, Gbps, Tbps");
  CHECK(parse_error("25", Quantity::bandwidth) ==
        "'25' has no unit; write a bandwidth like '25GBps' (units: Bps, kBps, KBps, MBps, GBps, TBps, KiBps, MiBps, "
        "GiBps, TiBps, bps, kbps, Kbps, Mbps, Gbps, Tbps)");
  CHECK(parse_error("0GBps", Quantity::bandwidth) == "bandwidth must be positive, got '0GBps'");
  CHECK(parse_error("-1us", Quantity::time) == "time must not be negative, got '-1us'");
  CHECK(parse_error("fast", Quantity::bandwidth) == "'fast' does not start with a number");
  CHECK(parse_error("1.9sec", Quantity::time) == "unknown time unit 'sec' in '1.9sec' (did you mean 's'?); valid: s, ms, us, ns, ps");
  CHECK(parse_error("25GBs", Quantity::bandwidth).find("(did you mean 'GBps'?)") != std::string::npos);
  CHECK(parse_error("infGBps", Quantity::bandwidth) == "'infGBps' is not a finite number");
}

TEST_CASE("units: command-line message sizes follow nccl-tests") {
  CHECK(parse_cli_size_B("8") == 8);
  CHECK(parse_cli_size_B("1K") == 1024);
  CHECK(parse_cli_size_B("256M") == 268435456.0);
  CHECK(parse_cli_size_B("8G") == 8589934592.0);
  CHECK(parse_cli_size_B("64KiB") == 65536);
  CHECK(parse_cli_size_B("1MB") == 1e6);
  CHECK(cli_error("0") == "message size must be at least 1 byte, got '0'");
  CHECK(cli_error("1.5") == "message size must be a whole number of bytes, got '1.5'");
  CHECK(cli_error("12Q") ==
        "'12Q' is not a message size; write bytes like 8, 1K, 256M, 8G (K/M/G = 1024^1/2/3) or with a unit like 64KiB, 1MB");
}

TEST_CASE("units: sizes print the way nccl-tests users write them") {
  CHECK(format_size(1024) == "1K");
  CHECK(format_size(268435456) == "256M");
  CHECK(format_size(1000) == "1000");
  CHECK(format_size(8589934592.0) == "8G");
}
