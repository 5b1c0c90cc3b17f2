#pragma once
// What nccl-tests' *_perf binaries print (stdout, and the -J JSON file), as plain structs. The
// format is nccl-tests 2.19.6's (../shared/reference/nccl-src/nccl-tests/src/, util.cu and
// common.cu); docs/import.md lists every line read and where the source prints it.
#include <optional>
#include <string>
#include <vector>

namespace topsim {

/// One column set of a result line: out-of-place or in-place (util.cu:507-511).
struct NcclTestsTiming {
  double time_us = 0;     ///< "time" (or "cputime" with -C 1), microseconds per iteration
  double algbw_GBps = 0;  ///< 1e9 bytes/s
  double busbw_GBps = 0;
  std::optional<double> wrong;  ///< "#wrong"; none when the test printed N/A (-c 0)
};

/// One result line (util.cu:457 preamble, then out-of-place and in-place bodies).
struct NcclTestsPoint {
  double size_B = 0;     ///< the "size" column: max(send, receive) bytes of one rank (common.cu:938)
  long long count = 0;   ///< elements
  std::string type;      ///< nccl-tests' type name (common.cu:46: int8, half, float, bfloat16, ...)
  std::string redop;     ///< sum, prod, max, min, avg, mulsum, or "none" for operations without one
  int root = -1;         ///< -1 for operations without a root
  NcclTestsTiming out_of_place;
  NcclTestsTiming in_place;
  int line = 0;          ///< 1-based line of the log; 0 in a -J file
};

/// One "#  Rank ..." line (util.cu:687).
struct NcclTestsRank {
  int rank = 0;
  int group = 0;
  int pid = 0;
  std::string host;
  int device = 0;        ///< CUDA ordinal on its host
  std::string bus_id;    ///< between the brackets, as printed ("0000:07:00")
  std::string gpu_name;  ///< cudaDeviceProp::name ("NVIDIA A100-SXM4-80GB")
  int line = 0;
};

/// One run of one *_perf binary: its header, device lines, result lines and trailer.
struct NcclTestsRun {
  std::string program;        ///< "all_reduce_perf" (util.cu:624, util.cu:780; JSON: argv[0]); "" when not printed
  int program_line = 0;       ///< where the program was named (0: not named)
  std::string tests_version;  ///< "2.19.6" from "# nccl-tests version" (util.cu:623); "" when absent
  std::string nccl_version;   ///< "2.28.9": the library's code (util.cu:623) or NCCL's own "NCCL version" line
  int threads = 0;            ///< -t
  int gpus_per_thread = 0;    ///< -g
  double min_B = 0, max_B = 0;
  int header_line = 0;        ///< the "# nThread" line (0 in a JSON file)
  bool cputime = false;       ///< the time columns are "cputime" (-C 1)
  std::vector<NcclTestsRank> ranks;
  std::vector<NcclTestsPoint> points;
  std::optional<int> out_of_bounds;        ///< "# Out of bounds values" (util.cu:777)
  std::optional<double> avg_busbw_GBps;    ///< "# Avg bus bandwidth" (util.cu:778)

  /// Ranks of the communicator: one per "# Rank" line, else threads x GPUs of one process.
  int gpu_count() const;
  /// Distinct host names of the rank lines, in first-seen order.
  std::vector<std::string> hosts() const;
};

struct NcclTestsLog {
  std::string file;
  std::vector<NcclTestsRun> runs;
};

/// Reads stdout as nccl-tests prints it: runs one after another, MPI launcher prefixes
/// (`[1,0]<stdout>:`, `0: `, `[0] `) stripped, lines that are neither nccl-tests' nor NCCL's
/// version line (NCCL INFO/WARN, a shell prompt) skipped. A line nccl-tests prints that does
/// not read as it prints it is an InputError at file:line saying what was expected.
NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file);

/// Reads the file -J writes (util.cu:317-379, 454-523, 642-794: JSON version 3); InputError at
/// the JSON pointer otherwise.
NcclTestsLog parse_nccl_tests_json(const std::string& text, const std::string& file);

/// Either of the above: a file whose first non-blank character is '{' is -J's JSON.
NcclTestsLog parse_nccl_tests_output(const std::string& text, const std::string& file);

/// Where point `index` of a run stands in its file: its line, or "/results/<index>" in a -J file.
std::string place_of(const NcclTestsPoint& point, std::size_t index);

/// "2.28.9" from the code nccl-tests prints as nccl-library= (22809; before 2.9, 2708 is 2.7.8).
std::string nccl_version_of_code(long long code);

}  // namespace topsim
