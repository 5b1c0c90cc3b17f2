#pragma once
// A set of GPUs running NCCL collectives: its rings (found once, like ncclCommInit), the flows
// each algorithm drives over them, NCCL's latency terms, and the choice of algorithm, protocol
// and channels by cost, as NCCL's tuner does.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/fabric.hpp"
#include "collectives/op.hpp"
#include "collectives/p2p_schedule.hpp"
#include "collectives/nccl_graph.hpp"
#include "collectives/ring_search.hpp"
#include "collectives/tuner.hpp"
#include "schedule/schedule.hpp"

namespace topsim {

/// How a collective's transfers are simulated.
enum class CollModel {
  flow,   ///< each ring (chain, tree edge set) is one long-lived flow over all its hops: fast at any scale
  steps,  ///< the faithful reference: every pipeline step of every hop is its own transfer
};

struct CollRequest {
  CollOp op = CollOp::allreduce;
  double size_B = 0;  ///< as requested (nccl-tests -b/-e); rounded as nccl-tests does
  DataType dtype{"float", 4};
  int root = 0;       ///< rank of rooted operations
  std::optional<Algo> algo;
  std::optional<Proto> proto;
  std::optional<int> channels;
  TunerLimits limits;          ///< what NCCL's environment allows the tuner (NCCL_ALGO, ...)
  bool simulate_all = false;   ///< simulate every candidate NCCL weighs, not only its choice (--explain)
  CollModel model = CollModel::flow;
  /// GPUs one host thread drives (nccl-tests -g): its ncclGroupEnd launches their kernels one
  /// after another, so back-to-back iterations cannot run faster than that many launches.
  int gpus_per_thread = 1;
};

/// One algorithm/protocol pair NCCL's tuner considered for a request.
struct Candidate {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  NcclEstimate nccl;     ///< NCCL's own estimate, or why it (or topsim) leaves the pair out
  int channels = 0;      ///< the channels it would run
  double latency_s = 0;  ///< topsim's fixed terms: base + steps x per-step cost
  double time_s = -1;    ///< latency plus the simulated flows; -1 when not simulated
};

struct CollResult {
  CollOp op = CollOp::allreduce;
  CollSize size;
  DataType dtype;
  int root = -1;  ///< -1 for unrooted operations, as nccl-tests prints
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  int channels = 0;
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  std::vector<Candidate> candidates;  ///< everything NCCL weighed or left out, chosen one included
  std::string nccl_version;           ///< the release line that chose
  std::string bound;                  ///< what limits the chosen plan: the busiest resource, or latency
  /// The class of that limit: a link class (nvlink, pcie, network, ...), a device limit (gpu,
  /// memory, nvswitch, ...), "latency" (fixed terms are half the time or more) or "channels"
  /// (no resource above 90% busy: the rings or trees do not cover the links' capacity).
  std::string bound_class;
};

/// One hop of a collective between ranks; across servers through NIC index `rail` of each.
struct RankHop {
  int from = 0;
  int to = 0;
  int rail = -1;
};

/// Whether a route crosses an NVSwitch (NVLS needs every GPU behind the same switches).
bool through_nvswitch(const Topology& topology, const Route& route);

class Communicator {
 public:
  /// `gpus`: topology GPU ordinals in rank order (at least one, no repeats). Searches the rings
  /// over the routes `routes` allows (peer access, GPUDirect; its mode is always SM).
  /// Keeps a reference to the topology, which must outlive the communicator.
  /// `version`: the NCCL release line whose tuner chooses.
  /// `ring_graphs`: NCCL searches already run, shared by the communicators of one catalog (the
  /// thousands of an LLM layout search each distinct server once); null searches afresh.
  Communicator(const Topology& topology, std::vector<int> gpus, const NcclVersion& version, RouteOptions routes = {},
               NcclRingGraphCache* ring_graphs = nullptr);
  /// The same, sharing `version` (never null) with other communicators: an LLM layout makes
  /// thousands, and a copy each of the release's tables was 10 KB apiece.
  Communicator(const Topology& topology, std::vector<int> gpus, std::shared_ptr<const NcclVersion> version,
               RouteOptions routes = {}, NcclRingGraphCache* ring_graphs = nullptr);

  /// The route options the platform must be built with to run this communicator.
  const RouteOptions& routes() const { return fabric_.options(); }

  int ranks() const { return fabric_.ranks(); }
  const RingSet& rings() const { return rings_; }
  const Fabric& fabric() const { return fabric_; }
  /// An upper bound on busbw (bytes/s) that no algorithm can beat on this topology: nccl-tests'
  /// bus factors make busbw the bytes each rank must send per second, and every byte leaving a
  /// GPU crosses one of its links; so busbw <= the smallest egress line rate (all links of a
  /// GPU, one direction) among the ranks. NVLS, NVLS-Tree and CollNet reduce in the switches, so
  /// a rank sends only its input once: twice that bound.
  double busbw_bound_Bps(Algo algo) const;

  /// The busbw (bytes/s) no run of `op` on these GPUs can exceed, whichever algorithm NCCL picks:
  /// a measured figure above it is not physically possible here. As busbw_bound_Bps, at line
  /// rate (never an efficiency), with two differences. On one server where every pair of ranks
  /// is joined over NVLink (through NVSwitches or directly), NCCL's P2P transport sends only on
  /// NVLink, so only NVLink links count (DGX A100: 12 x 25 GB/s = 300 GB/s, not 331.5 with PCIe).
  /// It is doubled when any in-switch reduction (NVLS, NVLS-Tree, CollNet) can run `op` here.
  /// Across servers every link of a GPU counts and the NICs are not a limit: loose, never wrong.
  struct BusbwCeiling {
    double Bps = 0;
    int gpu = 0;            ///< the GPU (topology index) whose links set it: the least egress
    std::string links;      ///< those links: "12 x nvlink3 at 25 GB/s"
    std::string doubled_by;  ///< "" or the in-switch algorithms that double it ("nvls")
  };
  BusbwCeiling busbw_ceiling(CollOp op) const;
  /// The NCCL model of the ranks' architecture; InputError when models/ has none.
  const NcclModel& nccl() const;

  /// Routes the platform must declare to run these requests. Call once, before building it.
  PlatformNeeds needs(const std::vector<CollRequest>& requests);

  /// Chooses as the NCCL version's tuner does, then simulates the choice on `runner` (a platform
  /// built with needs() and routes()); with request.simulate_all every weighed candidate too.
  CollResult run(const CollRequest& request, Runner& runner);

  const NcclVersion& version() const { return version_; }
  /// NCCL's estimates for a request and, per candidate, the channels it runs: what the tuner
  /// chooses, without simulating anything. UsageError when nothing allowed can run.
  struct Choice {
    std::vector<Candidate> candidates;
    int chosen = -1;  ///< index in candidates
    /// Whether run() simulates candidate i: the choice, and with `all` every one NCCL weighs.
    bool simulates(std::size_t i, bool all) const {
      return static_cast<int>(i) == chosen || (all && candidates[i].nccl.excluded.empty());
    }
  };
  Choice choose(const CollRequest& request, CollSize size) const;
  /// What NCCL's tuner knows of these GPUs (bandwidths in its per-link figures, counts).
  const TunerTopology& tuner_topology() const { return tuner_; }

  /// Appends `request`'s flows to a larger schedule (a workload), after the ops `after`, with
  /// the algorithm and protocol a run() chose (request.algo and request.proto must be set) on the
  /// channels NCCL gives that pair at this size, as run() did.
  /// Composite indices are shifted by `composite_offset` (this communicator's first composite
  /// on a platform shared with others). Returns the op that finishes last (a zero-time join).
  std::size_t append(const CollRequest& request, Schedule& schedule, const std::vector<std::size_t>& after,
                     std::size_t composite_offset = 0);

  /// Algorithms NCCL can run for an operation on these GPUs, and why one cannot ("" if it can).
  std::string unavailable(CollOp op, Algo algo) const;

  /// Whether the ranks span servers joined by a network (not one NVLink domain).
  bool across_network() const { return network_; }
  /// Across a network: NICs per server used as rails, and their rings' first and last GPUs.
  int rails() const { return static_cast<int>(rails_.size()); }

 private:
  struct Flow {
    bool composite = true;
    std::size_t index = 0;    ///< composite index
    int src = 0, dst = 0;     ///< pair transfer, GPU ordinals
    double payload_B = 0;
    std::vector<RankHop> arcs;  ///< rank hops, for the bound report
  };
  /// Across a network, one rail: the GPU whose NIC it is enters the server, the chain through
  /// every local GPU ends at another GPU near the same NIC. Positions within a server.
  struct Rail {
    std::vector<int> chain;
    int nic = 0;  ///< the NIC index of each server this rail leaves through (RankHop::rail)
  };
  struct Plan {
    double latency_s = 0;
    std::vector<Flow> flows;
    int channels = 0;
  };

  std::string runnable(CollOp op, Algo algo) const;
  /// The request a candidate is planned with: on the channels NCCL's choice gives it.
  static CollRequest planned(const CollRequest& request, const Candidate& candidate);
  void find_tuner_topology();
  /// The rings NCCL's graph search finds on these GPUs (one server), else topsim's own search.
  RingSet search_rings_as_nccl(NcclRingGraphCache* ring_graphs);
  /// The flows and fixed latency of one algorithm: dispatches to the planner of `algo`, one per
  /// file (plan_ring.cpp, plan_tree.cpp, plan_nvls.cpp, plan_collnet.cpp, plan_direct.cpp);
  /// each covers one server and servers joined by a network.
  Plan plan(const CollRequest& request, CollSize size, Algo algo, const NcclProtocol& proto);
  Plan plan_ring(const CollRequest& request, CollSize size, const NcclProtocol& proto);
  Plan plan_tree(const CollRequest& request, CollSize size, const NcclProtocol& proto);
  Plan plan_nvls(const CollRequest& request, CollSize size, const NcclProtocol& proto);
  Plan plan_nvls_tree(const CollRequest& request, CollSize size, const NcclProtocol& proto);
  Plan plan_collnet(const CollRequest& request, CollSize size, const NcclProtocol& proto);
  Plan plan_direct(const CollRequest& request, CollSize size, const NcclProtocol& proto);

  // What the planners share.
  /// One group of rings of one order (one server): its share of the bytes and its speed cap.
  struct RingShare {
    const std::vector<int>* order = nullptr;
    int rings = 0;        ///< rings following this order
    double share = 0;     ///< of the bytes
    double cap_Bps = 0;   ///< rings x the ring speed
    std::string tag;      ///< composite key part
  };
  /// The ring groups a request runs on (fewer when it asks for fewer channels); sets plan.channels.
  std::vector<RingShare> ring_shares(const CollRequest& request, Plan& plan) const;
  /// NIC rails a request runs on across servers; sets plan.channels.
  int rail_count(const CollRequest& request, Plan& plan) const;
  /// NCCL's per-step cost of a step inside a server, along rail 0's chain.
  double intra_step_s(const NcclProtocol& proto) const;
  /// One step across the network (docs/nccl.md, "The network's latency path"): NCCL's kernel-side
  /// network hop, the rail's NIC per-message cost, and the GPUDirect flush of a Simple receive
  /// where this NCCL line flushes on these GPUs.
  double net_step_s(const NcclProtocol& proto) const;
  std::vector<int> chain_from_root(const std::vector<int>& order, const CollRequest& request) const;
  /// Double binary trees over the servers: the parent of `server` in tree 0 or 1 (-1: root).
  static int tree_parent(int server, int tree, int servers);
  /// Tree `tree` of rail `rail` upwards: each server to its parent through the rail's NIC, and
  /// first along the rail's chain to its head when `through_chain`.
  std::vector<RankHop> tree_up_hops(int rail, int tree, bool through_chain) const;
  static std::vector<RankHop> reversed(const std::vector<RankHop>& hops);
  void add_flow(Plan& plan, std::size_t composite_index, double payload_B, std::vector<RankHop> arcs) const;
  void add_direct(const CollRequest& request, CollSize size, const NcclProtocol& proto, Plan& plan);
  // NCCL's p2p channels (plan_direct.cpp, p2p_schedule.hpp).
  /// Whether the release line's split of a p2p operation over channels is transcribed.
  bool p2p_split_modelled() const;
  /// The channels NCCL's ncclTopoGetNchannels asks for between two ranks.
  int p2p_peer_channels(int a, int b) const;
  P2pLayout p2p_layout_here() const;
  /// Bytes of one operation: a rank's share per peer (alltoall) or all of it (sendrecv).
  double p2p_op_bytes(CollOp op, CollSize size) const;
  /// The Simple chunk of this communicator's p2p operations (NVLink, PCIe/host or network).
  double p2p_step_B() const;
  /// `ll`: the operation runs LL, which splits by its own step.
  int p2p_op_channels_here(const P2pLayout& layout, double bytes, bool ll) const;
  /// The channels one operation of `request` runs on (what `coll` prints).
  int p2p_channels_for(const CollRequest& request, CollSize size) const;
  /// What one p2p channel between two ranks carries, bytes/s.
  double p2p_channel_Bps(int a, int b) const;
  std::size_t composite(const std::string& key, const std::vector<RankHop>& hops, std::optional<double> cap);
  /// `cap` with the hops' stragglers (Device::slowdown) applied: unchanged when there are none.
  std::optional<double> straggler_cap(const std::vector<RankHop>& hops, std::optional<double> cap) const;
  std::vector<RankHop> rank_order_hops(const std::vector<int>& order, bool closed) const;
  Schedule step_schedule(const CollRequest& request, CollSize size, const NcclProtocol& proto, double latency_s);
  bool short_chain(const CollRequest& request, CollSize size, const NcclProtocol& proto) const;
  void find_rails();
  std::vector<RankHop> rail_ring(int rail) const;

  /// Chains of at most this many chunks per channel run step by step.
  static constexpr double kStepChunks = 16;
  /// Step-by-step runs need GPU-pair routes, which the engine builds up to this many GPUs.
  static constexpr int kMaxStepRanks = 4096;
  /// Whether every hop is NVLink (NCCL's typeIntra == LINK_NVL for these hops).
  bool all_nvlink(const std::vector<RankHop>& arcs) const;
  double step_cost_s(const NcclProtocol& proto, const std::vector<RankHop>& arcs) const;
  /// Raises result.time_s to the host's launches of one iteration when those take longer than the
  /// simulated kernels (nccl-tests -g GPUs per thread), and says so in result.bound.
  void host_bound(const CollRequest& request, const NcclModel& model, CollResult& result) const;
  /// Sets result.bound and result.bound_class for a plan's simulated timings.
  void bound_of(const Plan& plan, const std::vector<OpTiming>& timings, const NcclProtocol& proto, double time_s,
                CollResult& result);
  int ring_subset(std::optional<int> channels, std::vector<int>& multiplicity) const;

  Fabric fabric_;
  /// Owned (shared), so that the catalog it came from need not outlive the communicator.
  std::shared_ptr<const NcclVersion> shared_version_;
  const NcclVersion& version_;  ///< *shared_version_
  TunerTopology tuner_;
  RingSet rings_;
  bool network_ = false;
  std::vector<std::vector<int>> node_ranks_;  ///< ranks of each server, in rank order
  std::vector<Rail> rails_;
  /// Whether rail 0's steps inside a server all run on NVLink (intra_step_s), found on first
  /// ask: the rails are fixed at construction, and the ring spans every server (131,072 hops).
  mutable std::optional<bool> intra_nvlink_;
  bool declaring_ = true;
  std::map<std::string, std::size_t> composite_ids_;
  PlatformNeeds needs_;
};

}  // namespace topsim
