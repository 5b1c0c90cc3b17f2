// topsim compute: what one kernel (a GEMM, a convolution or a streaming copy) costs on one GPU,
// and what bounds it: math at the fraction of peak its shape reaches, memory, or the launch.
#include <array>
#include <memory>
#include <stdexcept>

#include "cli/common.hpp"
#include "cli/kernel_tables.hpp"
#include "compute/kernel.hpp"
#include "compute/mig.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace topsim {

namespace {
constexpr double kTera = 1e12;

struct ComputeArgs {
  std::string gpu;
  std::string gemm;
  std::string bytes;
  std::string dtype = "fp16";
  std::string sparsity = "dense";
  int batch = 1;
  bool conv = false;
  std::string mig;
  std::string format;
  std::string shapes;  ///< --shapes FILE: a kernel table, one prediction per row
};

/// "M,N,K" as three positive integers; UsageError naming --gemm otherwise.
std::array<double, 3> gemm_shape(const std::string& text) {
  std::array<double, 3> shape{};
  std::size_t count = 0, begin = 0;
  for (;;) {
    std::size_t end = text.find(',', begin);
    std::string part = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    bool digits = !part.empty() && part.size() <= 9 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stol(part) == 0 || count == 3)
      throw UsageError("--gemm " + text + ": expected M,N,K, three positive integers (e.g. 8192,8192,8192)");
    shape[count++] = static_cast<double>(std::stol(part));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (count != 3) throw UsageError("--gemm " + text + ": expected M,N,K, three positive integers (e.g. 8192,8192,8192)");
  return shape;
}

Kernel kernel_of(const ComputeArgs& args) {
  if (args.gemm.empty() == args.bytes.empty())
    throw UsageError("give exactly one kernel: --gemm M,N,K (a GEMM, or a convolution with --conv) or --bytes SIZE "
                     "(a streaming memory kernel)");
  Kernel kernel;
  if (!args.bytes.empty()) {
    kernel.kind = Kernel::Kind::memory;
    kernel.bytes_B = size_option(args.bytes, "--bytes");
    if (!(kernel.bytes_B > 0)) throw UsageError("--bytes " + args.bytes + ": a memory kernel moves at least one byte");
    return kernel;
  }
  std::array<double, 3> shape = gemm_shape(args.gemm);
  kernel.kind = args.conv ? Kernel::Kind::conv : Kernel::Kind::gemm;
  kernel.m = shape[0];
  kernel.n = shape[1];
  kernel.k = shape[2];
  kernel.batch = args.batch;
  kernel.dtype = args.dtype;
  kernel.sparse = args.sparsity == "2:4";
  return kernel;
}

std::string kernel_label(const Kernel& kernel) {
  if (kernel.kind == Kernel::Kind::memory) return "memory " + fixed(kernel.bytes_B, 0) + " B";
  return std::string(kernel.kind == Kernel::Kind::conv ? "conv " : "gemm ") + fixed(kernel.m, 0) + "x" +
         fixed(kernel.n, 0) + "x" + fixed(kernel.k, 0);
}

KernelCost cost_of(const GpuModel& gpu, const ComputeModel& model, const Kernel& kernel) {
  std::string why = kernel_unavailable(gpu, kernel);
  if (!why.empty()) throw UsageError(why);
  try {
    return kernel_cost(gpu, model, kernel);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

/// What the table's numbers are relative to, for the reader of the text form.
std::string header(const GpuModel& gpu, const ComputeModel& model, const Kernel& kernel, const KernelCost& cost) {
  std::string out = "# topsim compute: " + gpu.name + " (" + gpu.description + "), " + std::to_string(gpu.sms) +
                    " SMs, " + fixed(gpu.memory_Bps / kGB, 0) + " GB/s memory; " + model.name + " compute model\n";
  std::string memory = "memory at " + fixed(model.memory_efficiency * 100, 0) + "% of peak";
  std::string launch = "launch " + fixed(model.launch_s / kUs, 2) + " us";
  if (kernel.kind == Kernel::Kind::memory) return out + "# time = max(" + memory + ", " + launch + ")\n";
  double peak = cost.flops / (cost.math_s * cost.efficiency);
  out += "# GEMM model (tiles in waves over the SMs, split-K, L2/HBM traffic, power-limited clock) with the " +
         model.name + " constants solved from NVIDIA's kernel tables (topsim calibrate --kernels); efficiency: "
         "fraction of the " + fixed(peak / kTera, 1) + " TFLOPS " + kernel.dtype +
         (kernel.sparse ? " 2:4 sparse" : " dense") + " peak this shape reaches\n";
  if (kernel.sparse)
    out += "# speedup: dense time / 2:4 sparse time of the same shape; the sparse main loop runs " +
           fixed(model.sparse_speedup, 3) + "x faster, never more than 2x\n";
  return out;
}

}  // namespace

void add_compute_command(CLI::App& app, Context& context) {
  CLI::App* compute = app.add_subcommand("compute", "What one kernel costs on one GPU: GEMM, convolution or memory");
  auto args = std::make_shared<ComputeArgs>();
  compute->add_option("--gpu", args->gpu, "GPU model (models/gpus.json), e.g. a100, h100")->required();
  auto* gemm = compute->add_option("--gemm", args->gemm, "GEMM shape M,N,K: C[MxN] = A[MxK] B[KxN], B the weights");
  auto* bytes = compute->add_option("--bytes", args->bytes, "A streaming kernel moving SIZE bytes (read plus written)");
  auto* dtype = compute->add_option("--dtype", args->dtype, "Math type: fp64, fp32, tf32, fp16, bf16, fp8, int8; fp8_block or mxfp8 for block-scaled fp8 GEMMs")
                    ->default_val("fp16");
  auto* sparsity = compute->add_option("--sparsity", args->sparsity, "dense, or 2:4 (structured sparse weights B)")
                       ->check(CLI::IsMember({"dense", "2:4"}))
                       ->default_val("dense");
  auto* batch = compute->add_option("--batch", args->batch, "Independent GEMMs of that shape in one kernel")
                    ->check(CLI::Range(1, 1 << 20))
                    ->default_val(1);
  auto* conv = compute->add_flag("--conv", args->conv, "The GEMM is a convolution (implicit GEMM of that shape)");
  for (CLI::Option* option : {gemm, dtype, sparsity, batch, conv}) option->excludes(bytes);
  auto* mig = compute->add_option("--mig", args->mig, "Run on one MIG instance of the GPU, e.g. 1g.10gb");
  auto* shapes = compute->add_option("--shapes", args->shapes,
                                     "A kernel table (CSV, GEMM or attention, docs/formats.md \"Kernel tables\"): "
                                     "one prediction per row, in order")
                     ->check(CLI::ExistingFile);
  for (CLI::Option* option : {gemm, bytes, dtype, sparsity, batch, conv, mig}) shapes->excludes(option);
  add_format_option(*compute, args->format);
  compute->callback([args, &context]() {
    if (!args->shapes.empty()) {
      KernelCommandArgs table;
      table.files = {args->shapes};
      table.gpu = args->gpu;
      table.format = args->format;
      context.out = shapes_report(context, table);
      return;
    }
    Format format = parse_format(args->format);
    Kernel kernel = kernel_of(*args);
    const Catalog& catalog = context.workspace().catalog();
    const GpuModel* found = nullptr;
    try {
      found = &catalog.gpu(args->gpu, {});
    } catch (const InputError& e) {
      throw UsageError("--gpu: " + e.message());
    }
    GpuModel instance;
    if (!args->mig.empty()) {
      try {
        MigRequest request = parse_mig(args->mig);
        if (request.instances != 1) throw UsageError("--mig " + args->mig + ": compute runs one kernel on one instance");
        instance = mig_instance(*found, request);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      found = &instance;
    }
    const GpuModel& gpu = *found;
    const ComputeModel& model = catalog.compute(gpu.architecture, gpu.where);
    KernelCost cost = cost_of(gpu, model, kernel);
    double speedup = 1;
    if (kernel.sparse) {
      Kernel dense = kernel;
      dense.sparse = false;
      speedup = cost_of(gpu, model, dense).time_s / cost.time_s;
    }

    bool text = format == Format::table;
    bool memory = kernel.kind == Kernel::Kind::memory;
    std::vector<Column> columns = {{"gpu"}, {"kernel"}, {"dtype"}, {"sparsity"}, {"batch"}};
    std::vector<Cell> row = {gpu.name, kernel_label(kernel), memory ? std::string("-") : kernel.dtype,
                             memory ? std::string("-") : args->sparsity, static_cast<long long>(kernel.batch)};
    if (text) {
      columns.insert(columns.end(), {{"time_us", 2}, {"tflops", 1}, {"efficiency", 3}, {"math_us", 2},
                                     {"memory_us", 2}, {"bound"}, {"speedup", 3}});
      row.insert(row.end(), {cost.time_s / kUs, cost.flops / cost.time_s / kTera, cost.efficiency, cost.math_s / kUs,
                             cost.memory_s / kUs, cost.bound, speedup});
    } else {
      columns.insert(columns.end(), {{"time_s", 9}, {"tflops", 2}, {"efficiency", 4}, {"math_us", 3}, {"memory_us", 3},
                                     {"flops", 0}, {"bytes_B", 0}, {"bound"}, {"speedup", 3}});
      row.insert(row.end(), {cost.time_s, cost.flops / cost.time_s / kTera, cost.efficiency, cost.math_s / kUs,
                             cost.memory_s / kUs, whole(cost.flops), whole(cost.bytes_B), cost.bound, speedup});
    }
    Table table(columns);
    table.add_row(row);
    context.out = text ? header(gpu, model, kernel, cost) + table.to_text() : table.render(format);
  });
}

}  // namespace topsim
