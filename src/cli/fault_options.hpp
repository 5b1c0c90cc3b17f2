#pragma once
// --fail, --degrade and --straggler: the fault what-ifs of coll, scale and run, parsed in one place.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "model/faults.hpp"
#include "report/table.hpp"

namespace topsim {

struct FaultArgs {
  std::vector<std::string> fail;       ///< as given: names, each possibly a comma list
  std::vector<std::string> degrade;    ///< LINK=FRACTION
  std::vector<std::string> straggler;  ///< GPU=FACTOR
};

/// Adds --fail, --degrade and --straggler (each repeatable, or a comma list) to a subcommand.
void add_fault_options(CLI::App& command, FaultArgs& args);

/// The faults those options describe; UsageError naming the flag for a malformed item
/// (no '=', a value that is not a number). Names are checked later, against the topology.
Faults faults_of(const FaultArgs& args);

/// One point run on the healthy topology and with the faults: times and busbw side by side.
struct FaultComparison {
  std::string point;  ///< what the row is ("allreduce 1073741824", "4 servers")
  double healthy_time_s = 0, faulty_time_s = 0;
  double healthy_busbw_Bps = 0, faulty_busbw_Bps = 0;
};

/// The change from healthy to faulty in percent (negative: the faults cost that much).
double change_pct(double healthy, double faulty);

/// The trailing block of a table report: a "# what-if" line naming the faults, then one commented
/// row per point with the healthy and faulty time and busbw and the change of busbw in percent.
std::string comparison_text(const std::string& faults, const std::string& point_column,
                            const std::vector<FaultComparison>& rows);

}  // namespace topsim
