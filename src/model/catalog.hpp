#pragma once
// Device and link parameter sets, as loaded from models/*.json. Plain data: no JSON here.
// Every quantity is SI (bytes, seconds, bytes/s, FLOP/s) and every parameter carries the
// sentence that says where its number came from (`sources`, keyed by dotted parameter path).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "model/nccl_version.hpp"
#include "model/llm_spec.hpp"
#include "model/megatron_args.hpp"
#include "model/source_ref.hpp"

namespace topsim {

enum class LinkKind { nvlink, pcie, socket, numa, network };
const char* to_string(LinkKind kind);

struct LinkModel {
  std::string name;
  std::string description;
  LinkKind kind = LinkKind::nvlink;
  double bandwidth_Bps = 0;  ///< one link, one direction, line rate (after encoding)
  double efficiency = 1;     ///< fraction of bandwidth_Bps that bulk transfers achieve, in (0, 1]
  double latency_s = 0;      ///< one hop, wire plus SerDes
  int lanes = 0;             ///< PCIe width (16 for x16); 0 for other kinds
  std::string link_layer;    ///< network: "infiniband" or "ethernet" (RoCE); "" when not stated
  Sources sources;
  SourceRef where;
};

/// Peak math throughput of one data type, dense and with 2:4 structured sparsity (0 = no sparse path).
struct MathRate {
  double dense_flops_per_s = 0;
  double sparse_flops_per_s = 0;
};

/// How CUDA copies behave on this GPU generation: what p2pBandwidthLatencyTest-style copies cost.
struct CopyModel {
  double write_latency_s = 0;    ///< SM store to a peer, end-to-end minus the links' own latency
  double memcpy_latency_s = 0;   ///< cudaMemcpy API + copy-engine launch, per copy
  std::optional<double> staging_Bps;        ///< host-staged copies through this GPU, both directions together
  std::optional<double> bidirectional_Bps;  ///< copy-engine traffic in + out of this GPU together
};

/// One MIG GPU-instance profile as NVIDIA's MIG User Guide tabulates it: its SMs, its memory
/// and its share of the memory slices (which carry the HBM bandwidth and L2 with them).
struct MigProfile {
  std::string name;       ///< "1g.5gb"
  int sms = 0;            ///< SMs of one instance (its math rate is this share of the GPU's)
  double memory_B = 0;    ///< memory one instance may allocate
  int memory_slices = 0;  ///< of GpuModel::mig_memory_slices: its share of HBM bandwidth and L2
  int instances = 0;      ///< most instances of this profile on one GPU
};

struct GpuModel {
  std::string name;
  std::string description;
  std::string architecture;     ///< "pascal", "volta", "ampere", "hopper", "ada"
  std::string nvlink_model;     ///< link model name of its NVLinks, "" when it has none
  int nvlink_count = 0;
  std::string pcie_model;       ///< link model name of its host interface
  bool peer_over_pcie = true;   ///< whether the driver allows P2P over PCIe (GeForce 40xx: no)
  double memory_B = 0;
  double memory_Bps = 0;
  int sms = 0;                  ///< streaming multiprocessors (thread blocks of one wave)
  double base_clock_Hz = 0;     ///< datasheet base (guaranteed) SM clock; <= boost_clock_Hz
  double boost_clock_Hz = 0;    ///< datasheet maximum boost SM clock (cudaDeviceProp::clockRate)
  /// Clock at which the datasheet's tensor peaks are reached, where a source states one
  /// (below boost on Hopper and Blackwell); 0 when not stated.
  double tensor_clock_Hz = 0;
  double l2_B = 0;              ///< L2 cache, bytes
  std::string compute_capability;  ///< CUDA compute capability, "8.0", "12.0"
  std::map<std::string, MathRate> math;  ///< by dtype key, e.g. "fp16_tensor", "fp4_tensor"
  CopyModel copy;
  double tdp_W = 0;             ///< board power limit (datasheet "max TDP"); > 0, required
  int mig_memory_slices = 0;    ///< memory slices MIG divides the GPU into; 0: no MIG
  std::vector<MigProfile> mig_profiles;  ///< in the guide's order; empty: no MIG
  std::vector<std::string> pci_device_ids;  ///< "0x20b5", as NCCL's topology XML prints them
  /// cudaDeviceProp::name as nvidia-smi and nccl-tests print it ("NVIDIA A100-SXM4-80GB");
  /// compared through interop/gpu_names.hpp
  std::vector<std::string> device_names;
  Sources sources;
  SourceRef where;
};

enum class SwitchKind { nvswitch, pcie, network };

struct SwitchModel {
  std::string name;
  std::string description;
  SwitchKind kind = SwitchKind::nvswitch;
  int ports = 0;              ///< NVLink ports (nvswitch), network ports (network)
  int lanes = 0;              ///< PCIe lanes (pcie)
  std::string nvlink_model;   ///< NVLink generation its ports speak (nvswitch)
  std::string port_model;     ///< network link model its ports speak (network); "" for any
  bool sharp = false;         ///< network: in-network reduction (SHARP) for NCCL's CollNet
  double latency_s = 0;       ///< one traversal, port to port
  Sources sources;
  SourceRef where;
};

struct CpuModel {
  std::string name;
  std::string description;
  int pcie_lanes = 0;
  double memory_Bps = 0;      ///< DRAM bandwidth of one socket
  double latency_s = 0;       ///< root complex traversal
  /// true when all root ports of a socket sit under one PCIe host bridge (nvidia-smi then prints
  /// PHB between them); false when each root port is its own host bridge (NODE).
  bool shared_host_bridge = true;
  int cores = 0;              ///< physical cores per socket, 0 when not stated
  std::string socket_link;    ///< link model between two sockets of this CPU ("" when not stated)
  int socket_links = 0;       ///< how many such links join two sockets
  /// CPUID as Linux and NCCL's topology XML report it (vendor string, family, models); "" / -1 /
  /// empty when not stated. Several models: steppings of one design sold under this name.
  std::string cpuid_vendor;
  int cpuid_family = -1;
  std::vector<int> cpuid_models;
  Sources sources;
  SourceRef where;
};

struct NicModel {
  std::string name;
  std::string description;
  std::string port_model;     ///< network link model of each port
  int ports = 1;
  std::string pcie_model;
  std::vector<std::string> pci_device_ids;  ///< "0x101d", as NCCL's topology XML prints them
  /// Link layers the card can run ("infiniband", "ethernet"): both for VPI cards, whose PCI id
  /// then does not tell the layer; empty when not stated.
  std::vector<std::string> card_link_layers;
  /// How NCCL's network transport drives the card: "ib_verbs" (net_ib over InfiniBand),
  /// "roce" (net_ib over Ethernet), "efa" (SRD through the aws-ofi-nccl plugin), "socket"
  /// (net_socket over TCP); "" when not stated.
  std::string transport;
  /// Per network step, beyond NCCL's kernel-side network hop (nccl.json network_hop): the
  /// proxy thread noticing the GPU's step, posting it, the card's per-message work and the
  /// completion reaching the receiver. 0 when not stated.
  double message_latency_s = 0;
  /// A Simple receive written by GPUDirect RDMA is flushed before the GPU reads it (net_ib's
  /// iflush: an RDMA read through the card, waited on by the proxy): its cost where NCCL
  /// flushes. 0 when not stated.
  double flush_latency_s = 0;
  Sources sources;
  SourceRef where;
};

/// How NCCL's kernels perform with one protocol on one GPU generation.
struct NcclProtocol {
  std::string name;         ///< "ll", "ll128", "simple"
  double efficiency = 1;    ///< throughput relative to Simple on the same links (flags, packet format, SM work)
  double ring_base_s = 0;   ///< fixed cost of a ring collective
  double tree_base_s = 0;   ///< fixed cost of a tree collective
  double nvlink_hop_s = 0;  ///< cost of one pipeline step over NVLink
  double pcie_hop_s = 0;    ///< cost of one step over PCIe or through host memory
  double network_hop_s = 0; ///< cost of one step over the network
  double chunk_B = 0;       ///< bytes a channel moves per pipeline step (NCCL buffer / NCCL_STEPS)
};

/// NCCL's behaviour on one GPU architecture: what its SM-driven transfers achieve.
struct NcclModel {
  std::string name;                         ///< the architecture, e.g. "ampere"
  std::string description;
  std::optional<double> nvlink_efficiency;  ///< fraction of NVLink line rate NCCL's Simple protocol moves
  std::optional<double> pcie_efficiency;    ///< fraction of PCIe line rate NCCL's transfers move
  std::optional<double> gpu_Bps;            ///< SM-driven traffic in + out of one GPU together, if it binds
  std::optional<double> nvls_efficiency;    ///< NVLink SHARP (in-switch reduction); absent: no NVLS
  /// Host time one thread spends to enqueue and launch one GPU's kernel of a collective (NCCL's
  /// ncclGroupEnd launching each communicator in turn); 0 when the model states none.
  double host_launch_s = 0;
  std::vector<NcclProtocol> protocols;      ///< those NCCL runs on this generation, fastest-latency first
  Sources sources;
  SourceRef where;

  const NcclProtocol* protocol(const std::string& name) const;
};

/// The constants of one (architecture, family, dtype) of the kernel model, in the order of the
/// family's parameters (compute/kernel_fit.hpp, kernel_parameters).
struct KernelConstants {
  std::vector<double> values;
};

/// Where a group of kernel constants came from: `topsim calibrate --kernels` writes it.
struct KernelConstantSources {
  std::string fitted;              ///< what was fitted on what (files, kernel_source, method)
  std::vector<std::string> files;  ///< the kernel tables, by file name
  long long rows = 0;              ///< rows the fit used
  double residual = 0;             ///< the fit's error in the guide's metric: geo-mean of 1 + |error|, minus 1
};

/// How kernels perform on one GPU architecture: the fraction of the datasheet peak they reach,
/// and what shapes cost them (models/compute.json).
struct ComputeModel {
  std::string name;  ///< the architecture, e.g. "ampere"
  std::string description;
  double conv_efficiency = 1;         ///< implicit-GEMM convolution relative to a GEMM of its shape
  double memory_efficiency = 1;       ///< streaming kernels: fraction of HBM peak
  double launch_s = 0;                ///< least time of one kernel (launch, ramp up and down)
  /// 2:4 sparse GEMMs: how much faster the main loop's math runs than dense, in (1, 2] (half the
  /// math at most); 0: the architecture has no 2:4 sparse path.
  double sparse_speedup = 0;
  /// Kernel-model constants by group key ("gemm/bf16", "prefill/fp8"; compute/kernel_fit.hpp),
  /// with where each group came from; empty when the architecture has none.
  std::map<std::string, KernelConstants> kernels;
  /// The architecture whose kernel constants this one runs with when no table timed it ("" none);
  /// the catalog copies them into `kernels`.
  std::string kernels_from;
  std::map<std::string, KernelConstantSources> kernel_sources;
  Sources sources;
  SourceRef where;
};

/// How an inference runtime turns a model into kernels (models/frameworks.json
/// "inference_frameworks"): an engine builder fuses, eager PyTorch launches every op.
struct InferenceFrameworkModel {
  std::string name;
  std::string description;
  /// Bias, activation, batch norm and residual adds run in the epilogue of the GEMM or
  /// convolution before them (TensorRT); false: each is a kernel of its own (eager).
  bool fuses_epilogues = false;
  /// Attention as one kernel per layer (TensorRT's fused multi-head attention); false: scores
  /// GEMM, scale, mask, softmax and context GEMM, each a kernel.
  bool fused_attention = false;
  /// Host time to issue one kernel: kernels shorter than it leave the GPU waiting (eager PyTorch
  /// dispatch), seconds.
  double dispatch_s = 0;
  /// Passes (one read and one write) over a 2:4 sparse GEMM's activations beyond the GEMM:
  /// PyTorch's semi-structured linear computes (W x^T)^T, so it transposes its input and output.
  double sparse_transposes = 0;
  /// Host round trip of one query outside the engine (issuing it, copying its input in and its
  /// result out, completing it), seconds: part of a single-stream query's latency.
  double query_s = 0;
  /// Precision defaults of an fp32 model (the framework's TF32 switches as shipped): its
  /// convolutions, and its matmuls (Linear, attention's scores and context), run as tf32 on GPUs
  /// with tf32 tensor cores; false: on the fp32 vector units.
  bool tf32_convolutions = false;
  bool tf32_matmuls = false;
  /// An encoder's batch of variable-length sequences is packed without padding (TensorRT's
  /// var-seqlen BERT): GEMMs run over the sum of the lengths, attention per sequence at its own
  /// length; false: every sequence is padded to the longest the engine takes.
  bool packs_sequences = false;
  Sources sources;
  SourceRef where;
};

/// A published bound on one query's latency under a serving load (MLPerf Inference's Server
/// scenario), for one model (models/frameworks.json "latency_bounds").
struct LatencyBound {
  std::string name;
  std::string description;
  std::string model;      ///< the network or transformer it applies to
  double server_s = 0;    ///< the percentile latency a Server run must stay within
  Sources sources;
  SourceRef where;
};

/// A data-parallel training framework: how it groups gradients for allreduce and what one
/// distributed iteration costs beyond kernels and collectives (models/frameworks.json).
struct FrameworkModel {
  std::string name;
  std::string description;
  double bucket_B = 0;           ///< gradient bucket (PyTorch DDP bucket_cap_mb, Horovod fusion buffer)
  double first_bucket_B = 0;     ///< the first (last layers') bucket, smaller so that comm starts early; 0 = bucket_B
  std::string gradient_dtype;    ///< NCCL type gradients are all-reduced in by default
  double step_overhead_s = 0;    ///< per distributed iteration, on every rank: synchronisation the engine does not see
  /// Fraction of the unfused (eager, one kernel per layer) memory traffic of memory-bound
  /// layers left after the framework's kernel fusion, in (0, 1].
  double elementwise_traffic = 1;
  Sources sources;
  SourceRef where;
};

/// An optimizer step as memory traffic: bytes moved per parameter (master weights, gradients
/// and states read, updated values written).
struct OptimizerModel {
  std::string name;
  std::string description;
  double bytes_per_param = 0;
  double state_bytes_per_param = 0;  ///< optimizer state kept per parameter (momentum, moments)
  Sources sources;
  SourceRef where;
};

/// How a sharded-parameter framework (DeepSpeed ZeRO-3) moves parameters: all-gathers of at most
/// gather_bucket_params elements ahead of each forward and backward, reduce-scatters of at most
/// reduce_bucket_params gradient elements after each backward. A layer larger than a bucket
/// takes several collectives, each paying the ring's latency over every rank.
struct ShardingModel {
  std::string name;
  std::string description;
  double gather_bucket_params = 0;
  double reduce_bucket_params = 0;
  /// Megatron-Core: the bucket grows with the data-parallel group, max(reduce_bucket_params,
  /// this x dp x cp) parameters; 0 for a fixed bucket (DeepSpeed).
  double reduce_bucket_params_per_rank = 0;
  Sources sources;
  SourceRef where;
};

/// Every model of a models/ directory, looked up by name. Lookups that fail throw InputError
/// at the given place with the list of known names.
class Catalog {
 public:
  void add(LinkModel model);
  void add(GpuModel model);
  void add(SwitchModel model);
  void add(CpuModel model);
  void add(NicModel model);
  void add(NcclModel model);
  void add(NcclVersion version);
  /// The release line `models/` runs when none is asked for (file-level "nccl_default").
  void set_default_nccl(const std::string& version, const SourceRef& where);
  void add(ComputeModel model);
  void add(Network network);
  void add(FrameworkModel model);
  void add(InferenceFrameworkModel model);
  void add(LatencyBound bound);
  void add(OptimizerModel model);
  void add(ShardingModel model);
  void add(TransformerSpec model);

  const LinkModel& link(const std::string& name, const SourceRef& where) const;
  const GpuModel& gpu(const std::string& name, const SourceRef& where) const;
  const SwitchModel& switch_model(const std::string& name, const SourceRef& where) const;
  const CpuModel& cpu(const std::string& name, const SourceRef& where) const;
  const NicModel& nic(const std::string& name, const SourceRef& where) const;
  /// NCCL model of a GPU architecture, nullptr when models/ has none.
  const NcclModel* nccl(const std::string& architecture) const;
  /// The line NCCL release `version` maps to ("2.18.5", "2.18"; "" for the default): the line of
  /// its major.minor, else the nearest older line, with `note` saying so (empty when exact).
  /// UsageError listing the modelled lines when it is older than the oldest or no release number.
  struct NcclLine {
    const NcclVersion* line = nullptr;
    std::string note;
  };
  NcclLine nccl_line(const std::string& version) const;
  /// nccl_line(version).line, without the note.
  const NcclVersion& nccl_version(const std::string& version) const;
  /// The modelled lines, oldest first.
  std::vector<const NcclVersion*> nccl_lines() const;
  const std::string& default_nccl() const { return default_nccl_; }
  /// Compute model of a GPU architecture; InputError at `where` when models/ has none.
  const ComputeModel& compute(const std::string& architecture, const SourceRef& where) const;
  const Network& network(const std::string& name, const SourceRef& where) const;
  const FrameworkModel& framework(const std::string& name, const SourceRef& where) const;
  const InferenceFrameworkModel& inference_framework(const std::string& name, const SourceRef& where) const;
  /// The Server latency bound published for `model`, or nullptr.
  const LatencyBound* latency_bound(const std::string& model) const;
  const OptimizerModel& optimizer(const std::string& name, const SourceRef& where) const;
  const ShardingModel& sharding(const std::string& name, const SourceRef& where) const;
  const TransformerSpec& transformer(const std::string& name, const SourceRef& where) const;

  const std::map<std::string, LinkModel>& links() const { return links_; }
  const std::map<std::string, GpuModel>& gpus() const { return gpus_; }
  const std::map<std::string, SwitchModel>& switches() const { return switches_; }
  const std::map<std::string, CpuModel>& cpus() const { return cpus_; }
  const std::map<std::string, NicModel>& nics() const { return nics_; }
  const std::map<std::string, NcclModel>& nccl_models() const { return nccl_; }
  const std::map<std::string, ComputeModel>& compute_models() const { return compute_; }
  const std::map<std::string, Network>& networks() const { return networks_; }
  const std::map<std::string, TransformerSpec>& transformers() const { return transformers_; }
  /// Megatron-LM's launch arguments (models/megatron.json); InputError when a second file sets them.
  void set_megatron_arguments(MegatronArgumentTable table);
  /// Empty (MegatronArgumentTable::empty()) when no models file has them.
  const MegatronArgumentTable& megatron_arguments() const { return megatron_arguments_; }

  /// Cross-references between models (a GPU's nvlink/pcie model names, a switch's NVLink model, a
  /// NIC's port model) must resolve to models of the right kind; throws InputError otherwise.
  void check_references() const;
  /// Gives each compute model with kernels_from the kernel constants of the architecture it
  /// names (InputError where that model is missing or has none of its own). Run once all files
  /// are read, before check_references.
  void link_kernel_constants();
  /// What loading a user's own models noted (uncited figures), in file order; empty for the
  /// bundled folder, which fails instead.
  const std::vector<std::string>& notes() const { return notes_; }
  void add_note(std::string note) { notes_.push_back(std::move(note)); }

 private:
  void claim_name(const std::string& name, const SourceRef& where);
  template <typename Model>
  void insert(std::map<std::string, Model>& models, Model model);

  std::vector<std::string> notes_;
  std::map<std::string, LinkModel> links_;
  std::map<std::string, GpuModel> gpus_;
  std::map<std::string, SwitchModel> switches_;
  std::map<std::string, CpuModel> cpus_;
  std::map<std::string, NicModel> nics_;
  std::map<std::string, NcclModel> nccl_;  ///< by architecture (its own namespace, not a model name)
  std::map<std::string, NcclVersion> nccl_versions_;  ///< by release line (their own namespace)
  std::string default_nccl_;
  std::map<std::string, ComputeModel> compute_;  ///< by architecture, like nccl_
  std::map<std::string, Network> networks_;
  std::map<std::string, FrameworkModel> frameworks_;
  std::map<std::string, InferenceFrameworkModel> inference_frameworks_;
  std::map<std::string, LatencyBound> latency_bounds_;
  std::map<std::string, OptimizerModel> optimizers_;
  std::map<std::string, ShardingModel> shardings_;
  std::map<std::string, TransformerSpec> transformers_;
  MegatronArgumentTable megatron_arguments_;
  std::map<std::string, SourceRef> names_;  ///< one namespace for all models, so a name is unambiguous
};

}  // namespace topsim
