#pragma once
// Charts of the JSON rows that train, plan, infer and compare write (--format json), for
// `topsim report`. Each function picks the rows of its kind by their fields and returns SVG
// charts (report/chart.hpp), none when no row is of its kind. Numbers are read whatever their
// precision, and text fields (zero, fits) whether written as text or as numbers.
#include <string>
#include <vector>

#include "model/result_spec.hpp"

namespace topsim {

/// train and plan rows (fields mfu and iteration_s). Rows over several GPU counts: MFU and
/// iteration time against GPUs, one series per variant, the fastest row of each count. Rows at
/// one count (plan's ranking, a lone train row): MFU by rank. Both: the iteration time stacked
/// by part (compute, bubble, tp, pp, dp, cp, ep, optimizer: the parts that are not zero).
std::vector<std::string> llm_charts(const std::vector<ResultRow>& rows);

/// infer rows (latency_ms, throughput, unit): throughput per watt and per dollar (when the rows
/// carry per_W, per_usd), and the latency stacked by part (math, memory, launch, comm).
std::vector<std::string> inference_charts(const std::vector<ResultRow>& rows);

/// compare rows (variant, gpus, throughput; no efficiency, mfu or latency): throughput, and per
/// watt and per dollar when carried, against GPUs, one series per variant.
std::vector<std::string> compare_charts(const std::vector<ResultRow>& rows);

}  // namespace topsim
