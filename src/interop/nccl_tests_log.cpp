// nccl-tests' standard output, line by line. Citations are to nccl-tests 2.19.6 under
// ../shared/reference/nccl-src/nccl-tests/src/ (docs/import.md, "nccl-tests logs").
#include "interop/nccl_tests_log.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>

#include "util/error.hpp"

namespace topsim {

int NcclTestsRun::gpu_count() const {
  return ranks.empty() ? threads * gpus_per_thread : static_cast<int>(ranks.size());
}

std::vector<std::string> NcclTestsRun::hosts() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const NcclTestsRank& r : ranks)
    if (seen.insert(r.host).second) out.push_back(r.host);
  return out;
}

// NCCL_VERSION(X,Y,Z) of nccl.h: X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before
// (common.cu:1060 prints the code of a 2.28 library as 22800-something).
std::string nccl_version_of_code(long long code) {
  long long major = code >= 10000 ? code / 10000 : code / 1000;
  long long rest = code >= 10000 ? code % 10000 : code % 1000;
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

std::string place_of(const NcclTestsPoint& point, std::size_t index) {
  return point.line > 0 ? std::to_string(point.line) : "/results/" + std::to_string(index);
}

namespace {

// Bounds that keep every count an int and every size exact in a double (2^53): far above any
// machine nccl-tests has run on.
constexpr long long kMaxRanks = 1 << 20;
constexpr long long kMaxBytes = 1LL << 52;

std::vector<std::string> log_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool log_starts_with(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

std::optional<long long> log_integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<double> log_real(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || v != v) return std::nullopt;
  return v;
}

std::size_t log_digits_from(const std::string& text, std::size_t i) {
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// The launcher's tag before each line: OpenMPI --tag-output "[1,0]<stdout>:", Slurm srun -l
// "0: " (right-aligned), MPICH -prepend-rank and Intel MPI -l "[0] ".
std::string strip_launcher_prefix(const std::string& line) {
  std::size_t i = 0;
  if (!line.empty() && line[0] == '[') {
    std::size_t j = log_digits_from(line, 1);
    if (j > 1 && j < line.size() && line[j] == ',') {
      std::size_t k = log_digits_from(line, j + 1);
      if (k > j + 1 && k < line.size() && line[k] == ']' && k + 1 < line.size() && line[k + 1] == '<') {
        std::size_t close = line.find(">:", k);
        if (close != std::string::npos) return line.substr(close + 2);
      }
    }
    if (j > 1 && j + 1 < line.size() && line[j] == ']' && line[j + 1] == ' ') return line.substr(j + 2);
    return line;
  }
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t j = log_digits_from(line, i);
  if (j > i && j < line.size() && line[j] == ':' && (j + 1 == line.size() || line[j + 1] == ' '))
    return j + 1 == line.size() ? std::string() : line.substr(j + 2);
  return line;
}

// NCCL's own "NCCL version 2.18.5+cuda12.2" (init.cc:694-702 of NCCL 2.30), bare with
// NCCL_DEBUG=VERSION or after "host:pid:tid [0] NCCL INFO" with INFO.
std::optional<std::string> nccl_version_line(const std::string& line) {
  const std::string key = "NCCL version ";
  std::size_t at = line.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + key.size(), j = i;
  while (j < line.size() && (std::isdigit(static_cast<unsigned char>(line[j])) || line[j] == '.')) ++j;
  if (j == i) return std::nullopt;
  return line.substr(i, j - i);
}

// The columns of a result table, from its header line (util.cu:745-760).
struct TableLayout {
  bool per_iter = false;    ///< -I 1: i_min, i_max, i_p99, i_cv% after each column set
  bool timestamps = false;  ///< -S 1: a date and a time at the end of each line
};

class LogParser {
 public:
  explicit LogParser(std::string file) { log_.file = std::move(file); }

  void line(const std::string& raw, int number) {
    line_ = number;
    std::string text = strip_launcher_prefix(raw);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (auto version = nccl_version_line(text)) {
      if (run_) run_->nccl_version = *version;
      else pending_nccl_ = *version;
      return;
    }
    std::size_t first = text.find_first_not_of(' ');
    if (first == std::string::npos) return;
    if (text[first] == '#') comment(text.substr(first + 1));
    else if (std::isdigit(static_cast<unsigned char>(text[first])) && table_) result(log_words(text));
  }

  NcclTestsLog finish() {
    close_run();
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(log_.file, std::to_string(line_), message);
  }

  void close_run() {
    if (run_) log_.runs.push_back(std::move(*run_));
    run_.reset();
    table_.reset();
  }

  void open_run() {
    close_run();
    run_ = NcclTestsRun{};
    if (!pending_nccl_.empty()) run_->nccl_version = pending_nccl_;
    pending_nccl_.clear();
  }

  void comment(const std::string& body) {
    std::vector<std::string> w = log_words(body);
    if (w.empty()) return;
    if (log_starts_with(body, " nccl-tests version")) return tests_version(w);
    if (w[0] == "nThread") return header(w);
    if (w[0] == "Rank") return rank(w);
    if (w[0] == "size") return table_header(w);
    if (w.size() >= 3 && w[0] == "Collective" && w[1] == "test" && (w[2] == "starting:" || w[2] == "concluded:"))
      return program(w);
    if (log_starts_with(body, " Out of bounds values")) return out_of_bounds(body);
    if (log_starts_with(body, " Avg bus bandwidth")) return avg_busbw(body);
  }

  // "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809" (util.cu:623) opens a run.
  void tests_version(const std::vector<std::string>& w) {
    const std::string expected =
        "expected '# nccl-tests version V nccl-headers=CODE nccl-library=CODE' (util.cu:623)";
    if (w.size() < 5 || !log_starts_with(w[4], "nccl-library=")) fail(expected);
    auto code = log_integer(w[4].substr(13));
    if (!code || *code <= 0) fail(expected + ", got nccl-library='" + w[4].substr(13) + "'");
    open_run();
    run_->tests_version = w[2];
    run_->nccl_version = nccl_version_of_code(*code);
  }

  void program(const std::vector<std::string>& w) {
    if (w.size() != 4) fail("expected '# Collective test " + w[2] + " PROGRAM' (util.cu:624, util.cu:780)");
    if (!run_) open_run();
    if (run_->program.empty()) {
      run_->program = w[3];
      run_->program_line = line_;
    } else if (run_->program != w[3]) {
      fail("the run started as " + run_->program + " (line " + std::to_string(run_->program_line) +
           ") but this line names " + w[3]);
    }
    if (w[2] == "concluded:") close_run();
  }

  // "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 ..."
  // (util.cu:625). Logs of nccl-tests before the version line start a run here.
  void header(const std::vector<std::string>& w) {
    const std::string expected =
        "expected '# nThread N nGpus N minBytes N maxBytes N step: N(factor|bytes) ...' (util.cu:625)";
    if (w.size() < 8 || w[2] != "nGpus" || w[4] != "minBytes" || w[6] != "maxBytes") fail(expected);
    auto threads = log_integer(w[1]), gpus = log_integer(w[3]), min = log_integer(w[5]), max = log_integer(w[7]);
    if (!threads || !gpus || !min || !max || *threads < 1 || *gpus < 1 || *min < 0 || *max < *min) fail(expected);
    if (*threads > kMaxRanks || *gpus > kMaxRanks || *threads * *gpus > kMaxRanks)
      fail("nThread " + w[1] + " x nGpus " + w[3] + " is more than the " + std::to_string(kMaxRanks) + " ranks topsim reads");
    if (!run_ || run_->header_line != 0) open_run();
    run_->header_line = line_;
    run_->threads = static_cast<int>(*threads);
    run_->gpus_per_thread = static_cast<int>(*gpus);
    run_->min_B = static_cast<double>(*min);
    run_->max_B = static_cast<double>(*max);
  }

  // "#  Rank  0 Group  0 Pid  12345 on    host-1 device  0 [0000:07:00] NVIDIA A100-SXM4-80GB"
  // (util.cu:687; before Group existed the line had none, which is read too).
  void rank(const std::vector<std::string>& w) {
    const std::string expected =
        "expected '#  Rank N Group N Pid N on HOST device N [BUS ID] GPU NAME' (util.cu:687)";
    if (!run_) fail("a Rank line before the run's '# nThread' header (util.cu:625 prints it first)");
    NcclTestsRank r;
    r.line = line_;
    std::size_t i = 2;
    auto rank_no = log_integer(w.size() > 1 ? w[1] : "");
    if (!rank_no || *rank_no < 0 || *rank_no >= kMaxRanks) fail(expected);
    r.rank = static_cast<int>(*rank_no);
    if (w.size() > 3 && w[2] == "Group") {
      auto group = log_integer(w[3]);
      if (!group || *group < 0 || *group >= kMaxRanks) fail(expected);
      r.group = static_cast<int>(*group);
      i = 4;
    }
    if (w.size() < i + 8 || w[i] != "Pid" || w[i + 2] != "on" || w[i + 4] != "device") fail(expected);
    auto pid = log_integer(w[i + 1]), device = log_integer(w[i + 5]);
    const std::string& bus = w[i + 6];
    if (!pid || !device || *device < 0 || *device >= kMaxRanks || bus.size() < 3 || bus.front() != '[' || bus.back() != ']')
      fail(expected);
    if (run_->ranks.size() >= static_cast<std::size_t>(kMaxRanks)) fail("more than " + std::to_string(kMaxRanks) + " ranks");
    r.pid = static_cast<int>(*pid);
    r.host = w[i + 3];
    r.device = static_cast<int>(*device);
    r.bus_id = bus.substr(1, bus.size() - 2);
    for (std::size_t k = i + 7; k < w.size(); ++k) r.gpu_name += (k > i + 7 ? " " : "") + w[k];
    if (static_cast<int>(run_->ranks.size()) != r.rank)
      fail("rank " + std::to_string(r.rank) + " where rank " + std::to_string(run_->ranks.size()) +
           " was expected (nccl-tests prints the ranks in order, util.cu:705)");
    run_->ranks.push_back(r);
  }

  // "#       size         count      type   redop    root     time   algbw   busbw #wrong ..."
  void table_header(const std::vector<std::string>& w) {
    if (!run_) fail("a result table before the run's '# nThread' header (util.cu:625 prints it first)");
    const std::string expected =
        "expected '# size count type redop root time algbw busbw #wrong time algbw busbw #wrong' (util.cu:757)";
    if (w.size() < 13 || w[1] != "count" || w[2] != "type" || w[3] != "redop" || w[4] != "root") fail(expected);
    if (w[5] != "time" && w[5] != "cputime") fail(expected + ", got '" + w[5] + "' for the time column");
    TableLayout layout;
    for (const std::string& word : w) layout.per_iter = layout.per_iter || word == "i_min";
    layout.timestamps = w.back() == "timestamp";
    run_->cputime = w[5] == "cputime";
    table_ = layout;
  }

  NcclTestsTiming timing(const std::vector<std::string>& w, std::size_t at) {
    static const char* names[] = {"time", "algbw", "busbw"};
    double values[3];
    for (int k = 0; k < 3; ++k) {
      auto v = log_real(w[at + static_cast<std::size_t>(k)]);
      if (!v || *v < 0) fail(std::string(names[k]) + " '" + w[at + static_cast<std::size_t>(k)] + "' is not a number (util.cu:507-511)");
      values[k] = *v;
    }
    NcclTestsTiming t{values[0], values[1], values[2], std::nullopt};
    if (w[at + 3] != "N/A") {
      auto wrong = log_real(w[at + 3]);
      if (!wrong) fail("#wrong '" + w[at + 3] + "' is neither a count nor N/A (util.cu:507-511)");
      t.wrong = *wrong;
    }
    return t;
  }

  // "  1048576  262144  float  sum  -1  51.20  20.48  35.84  0  50.10  20.93  36.63  0"
  // (util.cu:457 preamble; util.cu:507-511 out-of-place then in-place, common.cu:937-940).
  void result(const std::vector<std::string>& w) {
    const std::size_t set = table_->per_iter ? 8 : 4;
    const std::size_t fields = 5 + 2 * set;
    if (w.size() != fields && !(table_->timestamps && w.size() == fields + 2))
      fail("expected a result line of " + std::to_string(fields) +
           " fields (size count type redop root, then time algbw busbw #wrong out-of-place and in-place"
           + (table_->per_iter ? ", each with i_min i_max i_p99 i_cv%" : std::string()) + "; util.cu:457, util.cu:507-511), got " +
           std::to_string(w.size()));
    NcclTestsPoint p;
    p.line = line_;
    auto size = log_integer(w[0]), count = log_integer(w[1]), root = log_integer(w[4]);
    if (!size || *size < 0 || *size > kMaxBytes) fail("size '" + w[0] + "' is not a byte count");
    if (!count || *count < 0 || *count > kMaxBytes) fail("count '" + w[1] + "' is not an element count");
    if (!root || *root < -1 || *root >= kMaxRanks) fail("root '" + w[4] + "' is not a rank (-1 for none)");
    p.size_B = static_cast<double>(*size);
    p.count = *count;
    p.type = w[2];
    p.redop = w[3];
    p.root = static_cast<int>(*root);
    p.out_of_place = timing(w, 5);
    p.in_place = timing(w, 5 + set);
    run_->points.push_back(p);
  }

  // "# Out of bounds values : 0 OK" (util.cu:777); the table ends here.
  void out_of_bounds(const std::string& body) {
    std::vector<std::string> w = log_words(body.substr(body.find("values") + 6));
    auto n = w.size() >= 2 && w[0] == ":" ? log_integer(w[1]) : std::nullopt;
    if (!n || *n < 0 || *n > kMaxBytes || !run_) fail("expected '# Out of bounds values : N OK|FAILED' (util.cu:777) after a result table");
    run_->out_of_bounds = static_cast<int>(*n);
    table_.reset();
  }

  void avg_busbw(const std::string& body) {
    std::vector<std::string> w = log_words(body.substr(body.find("bandwidth") + 9));
    auto bw = w.size() >= 2 && w[0] == ":" ? log_real(w[1]) : std::nullopt;
    if (!bw || !run_) fail("expected '# Avg bus bandwidth : GB/S' (util.cu:778) after a result table");
    run_->avg_busbw_GBps = *bw;
  }

  NcclTestsLog log_;
  std::optional<NcclTestsRun> run_;
  std::optional<TableLayout> table_;
  std::string pending_nccl_;
  int line_ = 0;
};

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file) {
  LogParser parser(file);
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) parser.line(line, ++number);
  return parser.finish();
}

NcclTestsLog parse_nccl_tests_output(const std::string& text, const std::string& file) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_nccl_tests_json(text, file);
  return parse_nccl_tests_log(text, file);
}

}  // namespace topsim
