// NVLink domains and the tensor, context and expert groups that span them (src/llm/domains.hpp).
// Every count follows from the placement rank = tp + TP (cp + CP (dp + DP pp)) (Megatron's
// tp-cp-dp-pp) and the servers' sizes: GPU g of 8-GPU servers is in domain floor(g / 8).
#include "helpers.hpp"
#include "llm/domains.hpp"
#include "llm/iteration.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

LlmLayout layout(int tp, int cp, int dp, int ep = 1) {
  LlmLayout L;
  L.tp = tp;
  L.cp = cp;
  L.dp = dp;
  L.ep = ep;
  return L;
}

const DimOrder kMegatron = LlmOptions{}.order;

const GroupSpan& span_of(const std::vector<GroupSpan>& spans, const std::string& group) {
  for (const GroupSpan& s : spans)
    if (s.group == group) return s;
  FAIL("no " << group << " span");
  return spans.front();
}

}  // namespace

TEST_CASE("each DGX A100 server is one NVLink domain of 8 GPUs", "[llm][domains]") {
  Topology two = replicated("dgx-a100", 2);
  NvlinkDomains d = nvlink_domains(two);
  CHECK(d.gpus == std::vector<int>{8, 8});
  CHECK(d.servers == std::vector<int>{1, 1});
  CHECK(d.of_gpu[7] == 0);
  CHECK(d.of_gpu[8] == 1);
}

TEST_CASE("tp 16 on 8-GPU servers spans 2 domains and is refused with the sizes named", "[llm][domains]") {
  Topology two = replicated("dgx-a100", 2);
  // tp 16, dp 1: one group, ranks 0..15 at stride 1 = GPUs 0..15, domains 0 and 1.
  std::vector<GroupSpan> spans = group_spans(layout(16, 1, 1), kMegatron, nvlink_domains(two));
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].group == "tp");
  CHECK(spans[0].size == 16);
  CHECK(spans[0].stride == 1);
  CHECK(spans[0].domains == 2);
  CHECK(spans[0].domain_gpus == 8);
  CHECK(spans[0].domain_servers == 1);
  CHECK(spanning_message(spans[0], "dgx-a100") ==
        "--tp 16 spans 2 servers: dgx-a100 has 8 GPUs in one NVLink domain; use --tp 8 or less, or --allow-cross-server-tp");
  CHECK_THROWS_AS(check_group_domains(two, layout(16, 1, 1), kMegatron, "dgx-a100"), UsageError);
  // tp 8, dp 2: groups 0..7 and 8..15, one domain each.
  CHECK(first_spanning(group_spans(layout(8, 1, 2), kMegatron, nvlink_domains(two))) == nullptr);
  // Allowed: the group that spans comes back for the note.
  LlmLayout allowed = layout(16, 1, 1);
  allowed.allow_cross_server_tp = true;
  std::vector<GroupSpan> spanning = check_group_domains(two, allowed, kMegatron, "dgx-a100");
  REQUIRE(spanning.size() == 1);
  CHECK(spanning[0].domains == 2);
}

TEST_CASE("a 72-GPU NVL72 rack is one domain: tp 16 spans 1", "[llm][domains]") {
  Topology rack = bundled("gb200-nvl72-rack");
  NvlinkDomains d = nvlink_domains(rack);
  CHECK(d.gpus == std::vector<int>{72});
  // tp 16, dp 4: 64 of the 72 GPUs, four groups of 16 consecutive GPUs, all in domain 0.
  std::vector<GroupSpan> spans = group_spans(layout(16, 1, 4), kMegatron, d);
  CHECK(span_of(spans, "tp").domains == 1);
  CHECK(check_group_domains(rack, layout(16, 1, 4), kMegatron, "gb200-nvl72-rack").empty());
}

TEST_CASE("an NVL72 built of 18 trays on NVLink switch trays is one domain over 18 servers", "[llm][domains]") {
  Topology nvl72 = Topology::build(expand_cluster(load_cluster_spec(data_path("topologies/clusters/gb200-nvl72.json")),
                                                  load_topology_spec(data_path("topologies/gb200-tray.json")), catalog()),
                                   catalog());
  NvlinkDomains d = nvlink_domains(nvl72);
  CHECK(d.gpus == std::vector<int>{72});
  CHECK(d.servers == std::vector<int>{18});  // 72 GPUs / 4 per tray
  CHECK(span_of(group_spans(layout(16, 1, 4), kMegatron, d), "tp").domains == 1);
}

TEST_CASE("domains of a GB200 NVL72 SuperPOD are its racks", "[llm][domains]") {
  Topology pod = Topology::build(expand_cluster(load_cluster_spec(data_path("topologies/clusters/gb200-nvl72-superpod.json")),
                                                load_topology_spec(data_path("topologies/gb200-nvl72-rack.json")), catalog()),
                                 catalog());
  NvlinkDomains d = nvlink_domains(pod);
  CHECK(d.gpus == std::vector<int>(8, 72));  // 576 GPUs, 8 racks
  // tp 8, cp 16, dp 1 on 128 GPUs: the cp group of tp rank 0 is GPUs 0, 8, ..., 120 (stride 8),
  // racks 0 (GPUs 0..71) and 1 (72..143).
  GroupSpan cp = span_of(group_spans(layout(8, 16, 1), kMegatron, d), "cp");
  CHECK(cp.stride == 8);
  CHECK(cp.domains == 2);
  CHECK(spanning_message(cp, "gb200-nvl72-superpod") ==
        "--cp 16 spans 2 servers: gb200-nvl72-superpod has 72 GPUs in one NVLink domain, 8 per cp rank (the groups inside "
        "it in rank order); use --cp 9 or less, or --allow-cross-server-tp");
}

TEST_CASE("a group that straddles two racks is told a size that tiles them", "[llm][domains]") {
  Topology pod = Topology::build(expand_cluster(load_cluster_spec(data_path("topologies/clusters/gb200-nvl72-superpod.json")),
                                                load_topology_spec(data_path("topologies/gb200-nvl72-rack.json")), catalog()),
                                 catalog());
  // tp 16, dp 8 on 128 GPUs: the group of GPUs 64..79 holds 64..71 of rack 0 and 72..79 of rack
  // 1. Divisors of 72 below 16: 1, 2, 3, 4, 6, 8, 9, 12; the largest is 12.
  GroupSpan tp = span_of(group_spans(layout(16, 1, 8), kMegatron, nvlink_domains(pod)), "tp");
  CHECK(tp.domains == 2);
  CHECK(spanning_message(tp, "gb200-nvl72-superpod") ==
        "--tp 16 spans 2 servers: gb200-nvl72-superpod has 72 GPUs in one NVLink domain; use --tp 12 or less, or "
        "--allow-cross-server-tp");
}

TEST_CASE("GPUs of one server without NVLink are one domain: no NIC between them", "[llm][domains]") {
  NvlinkDomains d = nvlink_domains(bundled("pcie-8x-l40s"));
  CHECK(d.gpus == std::vector<int>{8});
}

TEST_CASE("context groups span at stride tp", "[llm][domains]") {
  Topology two = replicated("dgx-a100", 2);
  // tp 4, cp 4, dp 1: the cp group of tp rank i is GPUs i, i+4, i+8, i+12: domains 0 and 1.
  GroupSpan cp = span_of(group_spans(layout(4, 4, 1), kMegatron, nvlink_domains(two)), "cp");
  CHECK(cp.stride == 4);
  CHECK(cp.domains == 2);
  CHECK(spanning_message(cp, "dgx-a100") ==
        "--cp 4 spans 2 servers: dgx-a100 has 8 GPUs in one NVLink domain, 4 per cp rank (the groups inside it in rank "
        "order); use --cp 2 or less, or --allow-cross-server-tp");
  // tp 4, cp 2, dp 2: cp groups {i, i+4}, inside GPUs 0..7 or 8..15.
  CHECK(first_spanning(group_spans(layout(4, 2, 2), kMegatron, nvlink_domains(two))) == nullptr);
}

TEST_CASE("expert groups are ep ranks strided by etp (tp by default) over a stage's tp x cp x dp ranks", "[llm][domains]") {
  Topology eight = replicated("dgx-h100", 8);
  NvlinkDomains d = nvlink_domains(eight);
  // tp 1, ep 8, dp 64: expert group b is dp ranks 8b..8b+7 = GPUs 8b..8b+7, one server.
  CHECK(first_spanning(group_spans(layout(1, 1, 64, 8), kMegatron, d)) == nullptr);
  // tp 8, ep 8, dp 8: dp rank j of tp rank i is GPU i + 8 j: the group of tp rank 0 is GPUs 0, 8,
  // ..., 56, one per server: 8 domains. The tp groups (GPUs 8j..8j+7) stay inside servers.
  std::vector<GroupSpan> spans = group_spans(layout(8, 1, 8, 8), kMegatron, d);
  CHECK(span_of(spans, "tp").domains == 1);
  const GroupSpan& ep = span_of(spans, "ep");
  CHECK(ep.stride == 8);
  CHECK(ep.domains == 8);
  CHECK(spanning_message(ep, "dgx-h100") ==
        "--ep 8 spans 8 servers: dgx-h100 has 8 GPUs in one NVLink domain, 8 per ep rank (the groups inside it in rank "
        "order); use --ep 1, or --allow-cross-server-tp");
  // tp 2, ep 4, dp 32: the group of tp rank 0, block 0 is dp 0..3 = GPUs 0, 2, 4, 6: one server.
  CHECK(first_spanning(group_spans(layout(2, 1, 32, 4), kMegatron, d)) == nullptr);
}

TEST_CASE("another rank order moves tensor groups across servers", "[llm][domains]") {
  Topology two = replicated("dgx-a100", 2);
  // dp-tp-cp-pp with dp 2, tp 8: GPU = dp + 2 tp, the group of dp rank 0 is GPUs 0, 2, ..., 14.
  GroupSpan tp = span_of(group_spans(layout(8, 1, 2), parse_dim_order("dp-tp-cp-pp"), nvlink_domains(two)), "tp");
  CHECK(tp.stride == 2);
  CHECK(tp.domains == 2);
}
