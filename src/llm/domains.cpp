#include "llm/domains.hpp"

#include <algorithm>
#include <numeric>

#include "llm/expert_groups.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

// Union-find over GPU ordinals, path halving.
int find_root(std::vector<int>& parent, int a) {
  while (parent[static_cast<std::size_t>(a)] != a) {
    int& p = parent[static_cast<std::size_t>(a)];
    p = parent[static_cast<std::size_t>(p)];
    a = p;
  }
  return a;
}

void join(std::vector<int>& parent, int a, int b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
}

bool nvlink_device(const Device& d) { return d.type == DeviceType::gpu || d.type == DeviceType::nvswitch; }

}  // namespace

NvlinkDomains nvlink_domains(const Topology& topology) {
  const int n = topology.gpu_count();
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  // One server is one domain: its GPUs reach one another over NVLink or PCIe, never a NIC.
  std::vector<int> first_of_server;
  for (int g = 0; g < n; ++g) {
    const auto server = static_cast<std::size_t>(topology.node_of(g));
    if (server >= first_of_server.size()) first_of_server.resize(server + 1, -1);
    if (first_of_server[server] < 0) first_of_server[server] = g;
    join(parent, first_of_server[server], g);
  }
  // NVLink across servers: a walk over NVLink links through GPUs and NVSwitch chips only (a
  // Grace CPU's C2C link is no way between GPUs), each device visited once.
  const Graph& graph = topology.graph();
  std::vector<char> seen(boost::num_vertices(graph), 0);
  std::vector<Vertex> stack;
  for (int g = 0; g < n; ++g) {
    const Vertex start = topology.gpu(g);
    if (seen[start]) continue;
    seen[start] = 1;
    stack.assign(1, start);
    while (!stack.empty()) {
      const Vertex v = stack.back();
      stack.pop_back();
      if (graph[v].type == DeviceType::gpu) join(parent, g, graph[v].gpu_index);
      for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
        if (topology.link(*e).kind != LinkKind::nvlink) continue;
        const Vertex w = topology.other_end(*e, v);
        if (seen[w] || !nvlink_device(graph[w])) continue;
        seen[w] = 1;
        stack.push_back(w);
      }
    }
  }
  NvlinkDomains out;
  out.of_gpu.assign(static_cast<std::size_t>(n), -1);
  std::vector<int> id_of_root(static_cast<std::size_t>(n), -1);
  std::vector<int> last_server;  // by domain: the last server counted
  for (int g = 0; g < n; ++g) {
    int& id = id_of_root[static_cast<std::size_t>(find_root(parent, g))];
    if (id < 0) {
      id = static_cast<int>(out.gpus.size());
      out.gpus.push_back(0);
      out.servers.push_back(0);
      last_server.push_back(-1);
    }
    const auto d = static_cast<std::size_t>(id);
    out.of_gpu[static_cast<std::size_t>(g)] = id;
    ++out.gpus[d];
    // Servers hold consecutive GPU ordinals, so a new server in a domain is a change of server.
    if (topology.node_of(g) != last_server[d]) {
      ++out.servers[d];
      last_server[d] = topology.node_of(g);
    }
  }
  return out;
}

std::vector<GroupSpan> group_spans(const LlmLayout& L, const DimOrder& order, const NvlinkDomains& domains) {
  const Placement placement(L, order);
  // GPU ordinals between consecutive values of each dimension: the sizes of those inside it.
  std::array<int, 4> stride{};
  int inner = 1;
  const std::array<int, 4> size = {L.tp, L.cp, L.dp, L.pp};
  for (Dim d : order) {
    stride[static_cast<std::size_t>(d)] = inner;
    inner *= size[static_cast<std::size_t>(d)];
  }
  struct Kind {
    const char* name;
    int size;
    Dim dim;
  };
  std::vector<GroupSpan> out;
  std::vector<int> seen;
  // The span of the widest group of a kind: its domains, and the domain of its first rank.
  auto widen = [&](GroupSpan& span, const std::vector<int>& group) {
    seen.clear();
    for (int gpu : group) seen.push_back(domains.of_gpu.at(static_cast<std::size_t>(gpu)));
    std::sort(seen.begin(), seen.end());
    const int count = static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
    if (count > span.domains) {
      span.domains = count;
      const auto d = static_cast<std::size_t>(domains.of_gpu.at(static_cast<std::size_t>(group.front())));
      span.domain_gpus = domains.gpus[d];
      span.domain_servers = domains.servers[d];
    }
  };
  for (const Kind& k : {Kind{"tp", L.tp, Dim::tp}, Kind{"cp", L.cp, Dim::cp}}) {
    if (k.size <= 1) continue;
    GroupSpan span;
    span.group = k.name;
    span.size = k.size;
    span.stride = stride[static_cast<std::size_t>(k.dim)];
    span.domains = 0;
    for (int first = 0; first < placement.ranks(); ++first) {
      const RankCoord c = placement.coord(first);
      const int at = k.dim == Dim::tp ? c.tp : k.dim == Dim::cp ? c.cp : c.dp;
      if (at % k.size != 0) continue;  // not a group's first rank
      std::vector<int> group;
      for (int j = 0; j < k.size; ++j) group.push_back(first + j * span.stride);
      widen(span, group);
    }
    out.push_back(span);
  }
  if (L.ep > 1) {  // expert groups as Megatron-Core builds them (expert_groups.hpp), every stage
    GroupSpan span;
    span.group = "ep";
    span.size = L.ep;
    span.stride = expert_tp(L);
    span.domains = 0;
    for (int s = 0; s < L.pp; ++s)
      for (const std::vector<int>& group : expert_groups(L, placement, s).ep) widen(span, group);
    out.push_back(span);
  }
  return out;
}

const GroupSpan* first_spanning(const std::vector<GroupSpan>& spans) {
  for (const GroupSpan& s : spans)
    if (s.domains > 1) return &s;
  return nullptr;
}

std::string spanning_message(const GroupSpan& s, const std::string& server) {
  const std::string flag = "--" + s.group + " " + std::to_string(s.size);
  std::string text = flag + " spans " + std::to_string(s.domains) + (s.domain_servers > 1 ? " NVLink domains: " : " servers: ") +
                     server + " has " + std::to_string(s.domain_gpus) + " GPUs in one NVLink domain" +
                     (s.domain_servers > 1 ? " (" + std::to_string(s.domain_servers) + " servers)" : "");
  // The largest group below this one that tiles a domain: a divisor of the ranks of this kind
  // one domain holds (each rank `stride` GPUs of the groups placed inside it), so that no group
  // straddles two domains (tp 16 over racks of 72 GPUs straddles; tp 12 does not).
  const int holds = std::max(1, s.domain_gpus / s.stride);
  int fit = 1;
  for (int d = 1; d < s.size && d <= holds; ++d)
    if (holds % d == 0) fit = d;
  if (s.stride > 1)
    text += ", " + std::to_string(s.stride) + " per " + s.group + " rank (the groups inside it in rank order)";
  return text + "; use --" + s.group + " " + std::to_string(fit) + (fit > 1 ? " or less" : "") + ", or --allow-cross-server-tp";
}

std::vector<GroupSpan> check_group_domains(const Topology& topology, const LlmLayout& layout, const DimOrder& order,
                                           const std::string& server) {
  std::vector<GroupSpan> spans = group_spans(layout, order, nvlink_domains(topology));
  const GroupSpan* spanning = first_spanning(spans);
  if (spanning != nullptr && !layout.allow_cross_server_tp) throw UsageError(spanning_message(*spanning, server));
  std::vector<GroupSpan> out;
  for (const GroupSpan& s : spans)
    if (s.domains > 1) out.push_back(s);
  return out;
}

}  // namespace topsim
