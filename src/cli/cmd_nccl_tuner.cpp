// topsim nccl tuner-conf: the CSV file NCCL's example tuner plugin reads
// (plugins/tuner/example/ in NCCL's tree; the format of v2.30.7-1), filled with the algorithm,
// protocol and channels that topsim's simulation finds fastest per size range, and a comment
// wherever NCCL's own tuner (topsim's model of the --nccl line) picks otherwise.
//
// What the file must look like, as read at v2.30.7-1 (plugins/tuner/example/):
//   - fields: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
//     numPipeOps,regBuff (plugin.c:16-27, README.md:26-65); 8 to 10 fields (plugin.c:29-33).
//   - a line is a comment when its first character is '#', and skipped when it is empty
//     (plugin.c:136, :199); lines are read 256 bytes at a time (plugin.c:14, :197), so a longer
//     line would be split and its tail read as a config: every line written here is shorter.
//   - names: parseCollType, parseAlgorithm, parseProtocol (plugin.c:59-66, :81-90, :107-112);
//     an unknown name silently becomes allreduce, ring or simple, so only those names are written.
//   - a config matches when min_bytes <= nBytes <= max_bytes, nNodes and nRanks equal or -1
//     (plugin.c:381-387); nBytes is the larger of the send and receive buffers
//     (src/enqueue.cc:2127@v2.30.7-1, src/include/enqueue.h:39-41@v2.30.7-1), nccl-tests' size.
//   - channels: the plugin sets *nChannels = 1 before matching (plugin.c:360) and leaves it there
//     for -1 (plugin.c:406-409) or when nothing matches (plugin.c:453-459), and NCCL then runs
//     that one channel (src/enqueue.cc:2178@v2.30.7-1), although README.md:46 says -1 keeps
//     NCCL's default. So every entry names its channel count, and the ranges cover every size.
#include <algorithm>
#include <limits>
#include <memory>

#include "cli/coll_common.hpp"
#include "cli/common.hpp"
#include "collectives/communicator.hpp"
#include "p2p/p2p.hpp"
#include "study/batch.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

/// The plugin's README documents 4294967295 as the largest size (README.md:36@v2.30.7-1); past
/// it (-e above 4 GiB) the last range ends at the largest size_t the plugin's strtoull keeps
/// on a 64-bit host that a long long still holds.
constexpr unsigned long long kDocumentedMax_B = 4294967295ULL;
constexpr unsigned long long kBeyondMax_B = static_cast<unsigned long long>(std::numeric_limits<long long>::max());
/// Every line stays below the plugin's 256-byte read (plugin.c:14@v2.30.7-1), newline included.
constexpr std::size_t kMaxLine = 255;

struct TunerConfArgs {
  std::string topology;
  std::string format;
  std::string ops = "all";
  std::string begin = "8", end = "1G";
  ScaleOut scale;
  std::string gpu;  ///< --gpu what-if
  RequestArgs request;
};

/// The collectives the plugin can name (parseCollType, plugin.c:59-66@v2.30.7-1): NCCL never
/// asks a tuner about sendrecv and alltoall.
const std::vector<CollOp>& tuned_ops() {
  static const std::vector<CollOp> ops = {CollOp::allreduce, CollOp::allgather, CollOp::reducescatter,
                                          CollOp::broadcast, CollOp::reduce};
  return ops;
}

std::vector<CollOp> ops_of(const std::string& text) {
  if (text == "all") return tuned_ops();
  std::vector<std::string> valid;
  for (CollOp op : tuned_ops()) valid.push_back(to_string(op));
  std::vector<CollOp> ops;
  for (const std::string& name : split(text, ',')) {
    CollOp op = parse_op(name);
    if (std::find(tuned_ops().begin(), tuned_ops().end(), op) == tuned_ops().end())
      throw UsageError("-o " + name + ": NCCL's tuner plugin is never asked about " + to_string(op) +
                       " (point-to-point, not tuned); tuner-conf takes " + join(valid, ", ") + " or all");
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  return ops;
}

/// The plugin's algorithm names (parseAlgorithm, plugin.c:81-90@v2.30.7-1). topsim's collnet
/// candidate carries NCCL's CollNet Chain estimate (docs/nccl.md), so it is written as that.
const char* plugin_algorithm(Algo algo) {
  switch (algo) {
    case Algo::ring: return "ring";
    case Algo::tree: return "tree";
    case Algo::nvls: return "nvls";
    case Algo::nvls_tree: return "nvls_tree";
    case Algo::collnet: return "collnet_chain";
    case Algo::pat: return "pat";
    case Algo::direct: break;
  }
  throw std::logic_error("tuner-conf: direct is not a tuned algorithm");
}

/// One candidate as the file names it, with its simulated time.
struct Pick {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  int channels = 0;
  double time_s = 0;
  bool same_choice(const Pick& o) const { return algo == o.algo && proto == o.proto && channels == o.channels; }
  std::string name() const { return std::string(plugin_algorithm(algo)) + "/" + to_string(proto); }
};

/// One swept size: the fastest simulated candidate and NCCL's own pick.
struct SizePoint {
  double size_B = 0;
  Pick best;
  Pick nccl;
  std::string nccl_unrunnable;  ///< what NCCL's estimate prefers but topsim cannot run ("" if none)
};

struct Range {
  CollOp op = CollOp::allreduce;
  unsigned long long min_B = 0, max_B = 0;
  std::vector<SizePoint> points;
};

SizePoint point_of(const CollResult& r) {
  SizePoint p;
  p.size_B = r.size.size_B;
  const Candidate* chosen = nullptr;
  const Candidate* nccl_best = nullptr;
  for (const Candidate& c : r.candidates) {
    if (c.algo == r.algo && c.proto == r.proto) chosen = &c;
    if (c.nccl.time_s >= 0 && (nccl_best == nullptr || c.nccl.time_s < nccl_best->nccl.time_s)) nccl_best = &c;
  }
  if (chosen == nullptr || chosen->time_s < 0) throw std::logic_error("tuner-conf: NCCL's choice was not simulated");
  p.nccl = Pick{chosen->algo, chosen->proto, chosen->channels, chosen->time_s};
  // The least simulated time; on a tie NCCL's own pick stays.
  p.best = p.nccl;
  for (const Candidate& c : r.candidates)
    if (c.time_s >= 0 && c.time_s < p.best.time_s) p.best = Pick{c.algo, c.proto, c.channels, c.time_s};
  if (nccl_best != nullptr && !nccl_best->nccl.excluded.empty())
    p.nccl_unrunnable = std::string(plugin_algorithm(nccl_best->algo)) + "/" + to_string(nccl_best->proto);
  return p;
}

/// Consecutive sizes with one choice become one range, from its first swept size to the byte
/// before the next range's; the first starts at 0, the last ends at `last_B`.
std::vector<Range> ranges_of(CollOp op, const std::vector<SizePoint>& points, unsigned long long last_B) {
  std::vector<Range> ranges;
  for (const SizePoint& p : points) {
    if (ranges.empty() || !ranges.back().points.back().best.same_choice(p.best)) {
      if (!ranges.empty()) ranges.back().max_B = static_cast<unsigned long long>(p.size_B) - 1;
      Range r;
      r.op = op;
      r.min_B = ranges.empty() ? 0 : static_cast<unsigned long long>(p.size_B);
      ranges.push_back(r);
    }
    ranges.back().points.push_back(p);
  }
  if (!ranges.empty()) ranges.back().max_B = last_B;
  return ranges;
}

/// How much slower NCCL's picks simulate than topsim's best over a range: the worst point, and
/// the distinct picks. worst is null when NCCL picks the same everywhere in the range.
struct Difference {
  const SizePoint* worst = nullptr;
  int differing = 0;
  std::vector<std::pair<std::string, std::vector<int>>> picks;  ///< NCCL's pick and its channel counts, in size order
  /// "ring/ll on 4/8/16 channels, ring/ll128 on 24 channels"
  std::string picks_text() const {
    std::vector<std::string> parts;
    for (const auto& [name, channels] : picks) {
      std::vector<std::string> counts;
      for (int c : channels) counts.push_back(std::to_string(c));
      parts.push_back(name + " on " + join(counts, "/") + " channel" + (channels.size() == 1 && channels[0] == 1 ? "" : "s"));
    }
    return join(parts, ", ");
  }
  std::vector<std::string> unrunnable;
};

double slower_pct(const SizePoint& p) { return (p.nccl.time_s / p.best.time_s - 1) * 100; }

Difference difference_of(const Range& range) {
  Difference d;
  for (const SizePoint& p : range.points) {
    if (!p.nccl_unrunnable.empty() &&
        std::find(d.unrunnable.begin(), d.unrunnable.end(), p.nccl_unrunnable) == d.unrunnable.end())
      d.unrunnable.push_back(p.nccl_unrunnable);
    if (p.nccl.same_choice(p.best)) continue;
    ++d.differing;
    auto pick = std::find_if(d.picks.begin(), d.picks.end(), [&](const auto& q) { return q.first == p.nccl.name(); });
    if (pick == d.picks.end()) pick = d.picks.insert(d.picks.end(), {p.nccl.name(), {}});
    if (std::find(pick->second.begin(), pick->second.end(), p.nccl.channels) == pick->second.end())
      pick->second.push_back(p.nccl.channels);
    if (d.worst == nullptr || slower_pct(p) > slower_pct(*d.worst)) d.worst = &p;
  }
  return d;
}

std::string checked_line(std::string line) {
  if (line.size() > kMaxLine) throw std::logic_error("tuner-conf: a line longer than the plugin reads: " + line);
  return line + "\n";
}

// The comment above a range where NCCL's pick differs, e.g. "# NCCL 2.28 picks ring/ll128 on
// 24 channels at 2 of 3 sizes here: up to 12.3% slower simulated (at 131072 B: 30.10 us
// against 26.80 us)".
std::string difference_text(const Range& range, const std::string& line) {
  Difference d = difference_of(range);
  std::string out;
  if (d.worst != nullptr) {
    const SizePoint& w = *d.worst;
    std::string picks = d.picks_text();
    if (picks.size() > 90) picks = std::to_string(d.picks.size()) + " other choices";
    out += checked_line("# NCCL " + line + " picks " + picks + " at " + std::to_string(d.differing) + " of " +
                        std::to_string(range.points.size()) + " sizes here: up to " + fixed(slower_pct(w), 1) +
                        "% slower simulated (at " + fixed(w.size_B, 0) + " B: " + fixed(w.nccl.time_s / kUs, 2) +
                        " us against " + fixed(w.best.time_s / kUs, 2) + " us)");
  }
  if (!d.unrunnable.empty())
    out += checked_line("# NCCL " + line + "'s estimate prefers " + join(d.unrunnable, ", ") +
                        " here, which topsim cannot run; its pick above is the next best");
  return out;
}

std::string conf_text(const std::vector<Range>& ranges, const Topology& t, const Communicator& comm,
                      const TunerConfArgs& args, int nodes) {
  const std::string& line = comm.version().name;
  std::string out;
  out += checked_line("# NCCL tuner plugin configuration (plugins/tuner/example, format of NCCL v2.30.7-1)");
  out += checked_line("# written by topsim nccl tuner-conf for " + t.label() + ": " + std::to_string(comm.ranks()) +
                      " ranks on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + "; NCCL " + line + "'s tuner compared");
  out += checked_line("# Each entry: what topsim's simulation finds fastest at the sizes swept (-b " + args.begin +
                      " to -e " + args.end + ", x2),");
  out += checked_line("# from its first swept size to the byte before the next entry's. The first entry starts at 0,");
  out += checked_line("# the last ends at the plugin's largest size: unmatched sizes would run on one channel.");
  out += checked_line("# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff");
  for (const Range& r : ranges) {
    out += difference_text(r, line);
    const Pick& best = r.points.front().best;
    // numPipeOps and regBuff are -1 (any): topsim models neither grouped operations nor
    // registered buffers (README.md:56-65@v2.30.7-1).
    out += checked_line(std::string(to_string(r.op)) + "," + std::to_string(r.min_B) + "," + std::to_string(r.max_B) +
                        "," + plugin_algorithm(best.algo) + "," + to_string(best.proto) + "," +
                        std::to_string(best.channels) + "," + std::to_string(nodes) + "," +
                        std::to_string(comm.ranks()) + ",-1,-1");
  }
  return out;
}

Table rows_table(const std::vector<Range>& ranges, const Communicator& comm, int nodes) {
  Table table({{"op"}, {"min_B"}, {"max_B"}, {"algo"}, {"proto"}, {"channels"}, {"nodes"}, {"ranks"},
               {"swept_sizes"}, {"first_size_B"}, {"first_time_us", 3}, {"nccl_differs_at"}, {"nccl_picks"}, {"nccl_slower_pct", 1}});
  for (const Range& r : ranges) {
    Difference d = difference_of(r);
    const Pick& best = r.points.front().best;
    table.add_row({std::string(to_string(r.op)), static_cast<long long>(r.min_B), static_cast<long long>(r.max_B),
                   std::string(plugin_algorithm(best.algo)), std::string(to_string(best.proto)),
                   static_cast<long long>(best.channels), static_cast<long long>(nodes),
                   static_cast<long long>(comm.ranks()), static_cast<long long>(r.points.size()),
                   static_cast<long long>(r.points.front().size_B), r.points.front().best.time_s / kUs, static_cast<long long>(d.differing),
                   d.picks.empty() ? std::string("-") : d.picks_text(),
                   d.worst == nullptr ? 0.0 : slower_pct(*d.worst)});
  }
  return table;
}

void run_tuner_conf(const TunerConfArgs& args, Context& context) {
  Format format = parse_format(args.format);
  std::vector<CollOp> ops = ops_of(args.ops);
  double begin_B = size_option(args.begin, "-b"), end_B = size_option(args.end, "-e");
  std::vector<double> sizes = size_series(begin_B, end_B, 2);
  const Topology& t = context.workspace().topology(args.topology, args.scale, args.gpu);
  std::vector<int> gpus(static_cast<std::size_t>(t.gpu_count()));
  for (int g = 0; g < t.gpu_count(); ++g) gpus[static_cast<std::size_t>(g)] = g;
  Communicator comm(t, gpus, nccl_option(context, args.request.nccl), routes_of(args.request));
  if (comm.ranks() < 2) throw UsageError(t.name() + " has one GPU: NCCL tunes nothing for one rank");
  // Every candidate NCCL weighs is simulated (the machinery of coll --explain).
  CollRequest base = request_of(args.request, CollOp::allreduce);
  base.simulate_all = true;
  std::vector<CollRequest> requests;
  for (CollOp op : ops)
    for (double size : sizes) {
      CollRequest r = base;
      r.op = op;
      r.size_B = size;
      // A size that rounds to no element (allgather of 8 B over 8 ranks) is not a message.
      if (nccl_tests_size(op, size, r.dtype, comm.ranks()).count > 0) requests.push_back(r);
    }
  Batch batch;
  PlatformRunner& runner = batch.add(t, comm.routes(), comm.needs(requests));
  int nodes = static_cast<int>(comm.fabric().nodes().size());
  unsigned long long last_B = end_B > static_cast<double>(kDocumentedMax_B) ? kBeyondMax_B : kDocumentedMax_B;
  std::vector<Range> ranges;
  for (CollOp op : ops) {
    std::vector<SizePoint> points;
    for (const CollRequest& r : requests) {
      if (r.op != op) continue;
      SizePoint p = point_of(comm.run(r, runner));
      if (points.empty() || points.back().size_B < p.size_B) points.push_back(p);  // rounding may repeat a size
    }
    if (points.empty()) throw UsageError("-b/-e: no size from " + args.begin + " to " + args.end + " holds one element per rank of " + to_string(op));
    for (Range& r : ranges_of(op, points, last_B)) ranges.push_back(std::move(r));
  }
  context.out = format == Format::table ? conf_text(ranges, t, comm, args, nodes) : rows_table(ranges, comm, nodes).render(format);
}

}  // namespace

void add_nccl_tuner_conf_command(CLI::App& nccl, Context& context) {
  auto* conf = nccl.add_subcommand(
      "tuner-conf",
      "The CSV NCCL's example tuner plugin reads (nccl_tuner.conf): per size range, the algorithm, protocol and "
      "channels topsim's simulation finds fastest");
  auto args = std::make_shared<TunerConfArgs>();
  conf->add_option("topology", args->topology, "Topology or cluster file, or a bundled name")->required();
  conf->add_option("-o,--op", args->ops, "allreduce, allgather, reducescatter, broadcast, reduce (comma-separated), or all")
      ->default_val(args->ops);
  conf->add_option("-b,--minbytes", args->begin, "First size swept (nccl-tests style: 8, 1K, 256M)")->default_val(args->begin);
  conf->add_option("-e,--maxbytes", args->end, "Last size swept (sizes double from -b)")->default_val(args->end);
  add_format_option(*conf, args->format);
  add_scale_out_options(*conf, args->scale);
  add_gpu_option(*conf, args->gpu);
  add_nccl_options(*conf, args->request);
  conf->callback([args, &context]() { run_tuner_conf(*args, context); });
}

}  // namespace topsim
