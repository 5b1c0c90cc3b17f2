#include "cli/fault_options.hpp"

#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

std::vector<std::string> items_of(const std::vector<std::string>& given) {
  std::vector<std::string> items;
  for (const std::string& g : given)
    for (const std::string& item : split(g, ','))
      if (!item.empty()) items.push_back(item);
  return items;
}

// "NAME=NUMBER", split at the last '=' (ids never contain one).
std::pair<std::string, double> name_value(const std::string& item, const std::string& flag, const char* form) {
  std::size_t at = item.rfind('=');
  if (at == std::string::npos || at == 0 || at + 1 == item.size())
    throw UsageError(flag + " " + item + ": expected " + form);
  std::string value = item.substr(at + 1);
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size()) throw UsageError(flag + " " + item + ": '" + value + "' is not a number; expected " + form);
  return {item.substr(0, at), number};
}

}  // namespace

void add_fault_options(CLI::App& command, FaultArgs& args) {
  command.add_option("--fail", args.fail,
                     "What-if: remove a device (NIC, switch) or a link (A-B by its ends, or #N); repeatable or a comma list")
      ->allow_extra_args(false);
  command.add_option("--degrade", args.degrade, "What-if: LINK=FRACTION, the link keeps that share of its bandwidth (0 < FRACTION <= 1)")
      ->allow_extra_args(false);
  command.add_option("--straggler", args.straggler, "What-if: GPU=FACTOR, that GPU's kernels run FACTOR (>= 1) times slower")
      ->allow_extra_args(false);
}

Faults faults_of(const FaultArgs& args) {
  Faults faults;
  faults.failed = items_of(args.fail);
  for (const std::string& item : items_of(args.degrade)) {
    auto [link, fraction] = name_value(item, "--degrade", "LINK=FRACTION, e.g. gpu0-nvswitch0=0.5");
    faults.degraded.push_back(LinkDegrade{link, fraction});
  }
  for (const std::string& item : items_of(args.straggler)) {
    auto [gpu, factor] = name_value(item, "--straggler", "GPU=FACTOR, e.g. gpu3=1.5");
    faults.stragglers.push_back(Straggler{gpu, factor});
  }
  return faults;
}

double change_pct(double healthy, double faulty) { return healthy > 0 ? 100 * (faulty / healthy - 1) : 0; }

std::string comparison_text(const std::string& faults, const std::string& point_column,
                            const std::vector<FaultComparison>& rows) {
  Table table({{point_column},
               {"healthy_us", 2},
               {"faulty_us", 2},
               {"healthy_busbw", 2},
               {"faulty_busbw", 2},
               {"busbw_change_%", 1}});
  for (const FaultComparison& r : rows)
    table.add_row({r.point, r.healthy_time_s / kUs, r.faulty_time_s / kUs, r.healthy_busbw_Bps / kGB,
                   r.faulty_busbw_Bps / kGB, change_pct(r.healthy_busbw_Bps, r.faulty_busbw_Bps)});
  std::string out = "#\n# what-if: " + faults + ", against the healthy topology (busbw in GB/s)\n";
  for (const std::string& line : split(table.to_text(), '\n'))
    if (!line.empty()) out += "# " + line + "\n";
  return out;
}

}  // namespace topsim
