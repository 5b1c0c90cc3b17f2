// topsim p2p: predicted p2pBandwidthLatencyTest matrices, or bandwidth against message size.
#include "cli/common.hpp"
#include "study/batch.hpp"
#include "p2p/p2p.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {

struct P2pArgs {
  std::string topology;
  std::string format;
  std::string method = "write";
  bool no_p2p = false;
  std::string size = "160MB";
  std::string latency_size = "4";
  int src = -1;
  int dst = -1;
  std::string begin, end;
  double factor = 2;
  std::string gpu;  ///< --gpu what-if
};

void check_gpu(int index, const char* option, const Topology& t) {
  if (index < 0 || index >= t.gpu_count())
    throw UsageError(std::string(option) + " " + std::to_string(index) + ": " + t.name() + " has " +
                     std::to_string(t.gpu_count()) + " GPUs (0-" + std::to_string(t.gpu_count() - 1) + ")");
}

std::string matrix_block(const std::string& title, int gpus, const std::vector<double>& values, int digits) {
  // p2pBandwidthLatencyTest's layout: "   D\D" header, 6-wide columns, row label first.
  std::string out = title + "\n   D\\D";
  for (int d = 0; d < gpus; ++d) out += " " + std::string(6 - std::min<std::size_t>(6, std::to_string(d).size()), ' ') + std::to_string(d);
  out += "\n";
  std::size_t k = 0;
  for (int s = 0; s < gpus; ++s) {
    std::string label = std::to_string(s);
    out += std::string(6 - std::min<std::size_t>(6, label.size()), ' ') + label;
    for (int d = 0; d < gpus; ++d) {
      std::string cell = s == d ? "-" : fixed(values[k++], digits);
      out += " " + std::string(cell.size() < 6 ? 6 - cell.size() : 0, ' ') + cell;
    }
    out += "\n";
  }
  return out;
}

std::string header(const Topology& t, const P2pOptions& o) {
  std::string copies = !o.peer_access                  ? "every copy staged through host memory"
                       : o.method == CopyMethod::write ? "latency timed as kernel writes"
                                                       : "each copy timed as one cudaMemcpyPeerAsync";
  return "p2p: " + t.label() + " (" + t.file() + "), " + std::to_string(t.gpu_count()) + " GPUs, P2P " +
         (o.peer_access ? "enabled" : "disabled") + ", " + copies + "\n";
}

std::string run_matrix(const Topology& t, P2pBench& bench, const P2pArgs& args, Format format) {
  double size_B = size_option(args.size, "--size");
  double latency_B = size_option(args.latency_size, "--latency-size");
  P2pMatrix m = measure_matrix(bench, t.gpu_count(), size_B, latency_B);
  if (format != Format::table) {
    Table table({{"src"}, {"dst"}, {"size_B", 0}, {"uni_GBps", 2}, {"bi_GBps", 2}, {"latency_us", 2},
                 {"latency_size_B", 0}, {"route"}});
    for (std::size_t i = 0; i < m.bandwidth.size(); ++i) {
      const P2pPoint& p = m.bandwidth[i];
      table.add_row({static_cast<long long>(p.src), static_cast<long long>(p.dst), whole(p.size_B), p.uni_Bps / kGB,
                     p.bi_Bps / kGB, m.latency_s[i] / kUs, whole(m.latency_size_B), std::string(to_string(p.route))});
    }
    return table.render(format);
  }
  std::vector<double> uni, bi, lat;
  for (std::size_t i = 0; i < m.bandwidth.size(); ++i) {
    uni.push_back(m.bandwidth[i].uni_Bps / kGB);
    bi.push_back(m.bandwidth[i].bi_Bps / kGB);
    lat.push_back(m.latency_s[i] / kUs);
  }
  const P2pOptions& o = bench.options();
  std::string p2p = std::string("P2P=") + (o.peer_access ? "Enabled" : "Disabled");
  std::string how = !o.peer_access ? "" : o.method == CopyMethod::write ? " (P2P Writes)" : " (cudaMemcpyPeerAsync)";
  std::string out = header(t, o) + "copy size " + fixed(size_B, 0) + " B, latency copy size " + fixed(latency_B, 0) +
                    " B; diagonal (copies within one GPU) not modelled\n\n";
  out += matrix_block("Unidirectional " + p2p + " Bandwidth Matrix (GB/s)", t.gpu_count(), uni, 2) + "\n";
  out += matrix_block("Bidirectional " + p2p + " Bandwidth Matrix (GB/s)", t.gpu_count(), bi, 2) + "\n";
  out += matrix_block(p2p + " Latency" + how + " Matrix (us)", t.gpu_count(), lat, 2);
  return out;
}

std::string run_sweep(const Topology& t, P2pBench& bench, const P2pArgs& args, Format format) {
  check_gpu(args.src, "--src", t);
  check_gpu(args.dst, "--dst", t);
  if (args.src == args.dst) throw UsageError("--src and --dst must be different GPUs");
  double begin = size_option(args.begin.empty() ? args.size : args.begin, "-b");
  double end = args.end.empty() ? begin : size_option(args.end, "-e");
  Table table({{"src"}, {"dst"}, {"size_B", 0}, {"uni_GBps", 2}, {"bi_GBps", 2}, {"latency_us", 2}, {"route"}});
  for (double size : size_series(begin, end, args.factor)) {
    P2pPoint p = bench.measure(args.src, args.dst, size);
    table.add_row({static_cast<long long>(p.src), static_cast<long long>(p.dst), whole(p.size_B), p.uni_Bps / kGB,
                   p.bi_Bps / kGB, p.time_s / kUs, std::string(to_string(p.route))});
  }
  if (format != Format::table) return table.render(format);
  return header(t, bench.options()) + "latency_us is the time of one copy of size_B bytes\n\n" + table.to_text();
}

}  // namespace

void add_p2p_command(CLI::App& app, Context& context) {
  CLI::App* p2p = app.add_subcommand(
      "p2p", "Predicted GPU-to-GPU bandwidth and latency, like CUDA's p2pBandwidthLatencyTest");
  auto args = std::make_shared<P2pArgs>();
  p2p->add_option("topology", args->topology, "Topology file, or the name of a bundled one (dgx-a100)")->required();
  add_format_option(*p2p, args->format);
  add_gpu_option(*p2p, args->gpu);
  p2p->add_flag("--no-p2p", args->no_p2p, "Peer access disabled: every copy is staged through host memory");
  p2p->add_option("--method", args->method, "How copies are issued: write (kernel stores, CUDA 11+ test) or memcpy")
      ->check(CLI::IsMember({"write", "memcpy"}))
      ->default_val("write");
  p2p->add_option("--size", args->size, "Bytes per copy for the bandwidth matrices (default 160MB, the test's 40M ints)")
      ->default_val("160MB");
  p2p->add_option("--latency-size", args->latency_size, "Bytes per copy for the latency matrix")->default_val("4");
  auto* src = p2p->add_option("--src", args->src, "Source GPU: sweep message sizes for one pair");
  auto* dst = p2p->add_option("--dst", args->dst, "Destination GPU of the sweep");
  src->needs(dst);
  dst->needs(src);
  p2p->add_option("-b,--minbytes", args->begin, "First size of the sweep (nccl-tests style: 8, 1K, 256M)")->needs(src);
  p2p->add_option("-e,--maxbytes", args->end, "Last size of the sweep")->needs(src);
  p2p->add_option("-f,--stepfactor", args->factor, "Size multiplier between sweep points")->needs(src)->default_val(2);
  p2p->callback([args, &context]() {
    Topology t = context.workspace().topology(args->topology, {}, args->gpu);
    Format format = parse_format(args->format);
    P2pOptions options;
    options.method = parse_copy_method(args->method);
    options.peer_access = !args->no_p2p;
    Batch batch;
    P2pBench bench(t, batch.add(t, route_options(options)), options);
    context.out = args->src >= 0 || args->dst >= 0 ? run_sweep(t, bench, *args, format)
                                                     : run_matrix(t, bench, *args, format);
  });
}

}  // namespace topsim
