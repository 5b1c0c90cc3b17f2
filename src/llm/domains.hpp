#pragma once
// NVLink domains and the parallel groups that span them. Tensor, context and expert parallelism
// exchange activations every layer; Megatron keeps their groups inside the GPUs that reach one
// another without a NIC. A group spanning two domains runs its collectives over the network:
// `train` and `plan` refuse it unless the layout allows it (--allow-cross-server-tp).
#include <string>
#include <vector>

#include "llm/layout.hpp"
#include "topology/topology.hpp"

namespace topsim {

/// The GPUs that reach one another without a NIC: those of one server, and those NVLink joins
/// (directly or through NVSwitch chips, a cluster's NVLink fabric included) across servers. A
/// DGX A100 server is one domain of 8; a GB200 NVL72 rack one of 72, whether built as one server
/// or as 18 trays on NVLink switch trays.
struct NvlinkDomains {
  std::vector<int> of_gpu;   ///< by GPU ordinal: its domain, numbered from 0 in GPU order
  std::vector<int> gpus;     ///< by domain: GPUs in it
  std::vector<int> servers;  ///< by domain: servers it holds (1 unless NVLink joins servers)
};
NvlinkDomains nvlink_domains(const Topology& topology);

/// The groups of one kind of a layout, as Placement puts ranks on GPU ordinals 0..gpus-1.
struct GroupSpan {
  std::string group;  ///< "tp", "cp" or "ep"
  int size = 1;       ///< ranks per group
  int stride = 1;     ///< GPU ordinals between consecutive ranks of a group
  int domains = 1;    ///< the most domains one group of this kind spans
  int domain_gpus = 0;  ///< GPUs in the domain of that group's first rank
  int domain_servers = 1;  ///< servers in that domain
};

/// Spans of the layout's tensor-, context- and expert-parallel groups of more than one rank, in
/// that order. Tensor and context groups vary their own coordinate; an expert group is ep ranks
/// etp apart of one stage's tp x cp x dp ranks (Megatron-Core's expert grid, expert_groups.hpp, as
/// src/llm/iteration.cpp builds its all-to-all). `of_gpu` covers at least layout.gpus() GPUs.
std::vector<GroupSpan> group_spans(const LlmLayout& layout, const DimOrder& order, const NvlinkDomains& domains);

/// The first group that spans more than one domain, or nullptr.
const GroupSpan* first_spanning(const std::vector<GroupSpan>& spans);

/// "--tp 16 spans 2 servers: dgx-a100 has 8 GPUs in one NVLink domain; use --tp 8 or less, or
/// --allow-cross-server-tp" (`server` names the topology's server).
std::string spanning_message(const GroupSpan& span, const std::string& server);

/// UsageError with spanning_message() when a group spans domains and the layout does not allow
/// it; else the groups that span (empty when none), for a note.
std::vector<GroupSpan> check_group_domains(const Topology& topology, const LlmLayout& layout, const DimOrder& order,
                                           const std::string& server);

}  // namespace topsim
