#include "interop/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[static_cast<std::size_t>(x)] == x ? x : parent[static_cast<std::size_t>(x)] = find(parent[static_cast<std::size_t>(x)]); }
  void unite(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

}  // namespace

void check_smi_view(const SmiMatrix& m, bool pcie_only) {
  bool nvlinks = false;
  for (const auto& row : m.cells)
    for (const std::string& cell : row) nvlinks |= smi_nvlinks(cell).has_value();
  if (pcie_only && nvlinks)
    throw UsageError("--pcie-only: " + m.file + " shows NVLinks (NV# cells), so it is not the PCIe-only view of topo -mp; leave --pcie-only out");
  bool mp = !nvlinks && (m.mp_command_line > 0 || (m.legend_line > 0 && !m.legend_names_nvlinks));
  if (mp && !pcie_only)
    throw InputError(m.file, std::to_string(m.mp_command_line > 0 ? m.mp_command_line : m.legend_line),
                     std::string(m.mp_command_line > 0 ? "the file was printed by nvidia-smi topo -mp"
                                                       : "the legend has no NV# line, as nvidia-smi topo -mp prints it") +
                         ": that view shows PCIe paths only and hides NVLinks, so the machine would import without them; "
                         "run nvidia-smi topo -m instead, or give --pcie-only if a machine without NVLink is meant");
}

namespace {

// The machine the cells of one matrix imply, built in three steps: sockets and their NUMA nodes,
// the PCIe tree, then the endpoints and NVLinks.
class SmiMachine {
 public:
  explicit SmiMachine(const SmiMatrix& m) : m_(m), n_(static_cast<int>(m.labels.size())) {
    machine_.file = m.file;
    machine_.format = "nvidia-smi topo -m";
  }

  ImportedMachine build() {
    find_packages();
    find_domains();
    find_tree();
    add_endpoints();
    return std::move(machine_);
  }

 private:
  std::size_t at(int i) const { return static_cast<std::size_t>(i); }
  const std::string& cell(int a, int b) const { return m_.cells[at(a)][at(b)]; }
  const std::string& label(int i) const { return m_.labels[at(i)]; }
  ImportRef where(int row) const { return ImportRef{std::to_string(m_.lines[at(row)]), ""}; }
  bool pcie(int a, int b) const { return a != b && !smi_nvlinks(cell(a, b)); }
  bool sys(int a, int b) const { return cell(a, b) == "SYS"; }

  [[noreturn]] void contradiction(int a, int b, const std::string& implied) const {
    import_fail(m_.file, where(std::max(a, b)),
                label(std::max(a, b)) + " and " + label(std::min(a, b)) + " read " + cell(a, b) +
                    ", but the other cells put them " + implied + "; the matrix does not describe one PCIe tree");
  }

  // What the affinity columns say a GPU is attached to: its NUMA node(s), else its cores.
  std::string affinity_key(int r) const {
    const std::string& numa = m_.numa_affinity[at(r)];
    const std::string& cpu = m_.cpu_affinity[at(r)];
    return !numa.empty() ? "NUMA Affinity " + numa : !cpu.empty() ? "CPU Affinity " + cpu : std::string();
  }

  // Packages (sockets): devices on one read anything but SYS; GPUs of one affinity share one,
  // unless GPUs of that affinity read SYS to each other: then it is the cpuset of the job that ran
  // nvidia-smi, not where the GPUs are, and only the cells count.
  void find_packages() {
    UnionFind comp(n_);
    for (int a = 0; a < n_; ++a)
      for (int b = a + 1; b < n_; ++b)
        if (pcie(a, b) && !sys(a, b)) comp.unite(a, b);
    std::map<std::string, std::vector<int>> gpus_of;
    for (int r = 0; r < m_.gpus; ++r)
      if (!affinity_key(r).empty()) gpus_of[affinity_key(r)].push_back(r);
    for (auto& [key, gpus] : gpus_of) {
      std::pair<int, int> apart{-1, -1};
      for (int a : gpus)
        for (int b : gpus)
          for (int x = 0; x < n_ && apart.first < 0; ++x)
            for (int y = 0; y < n_ && apart.first < 0; ++y)
              if (comp.find(x) == comp.find(a) && comp.find(y) == comp.find(b) && sys(x, y)) apart = {a, b};
      if (apart.first >= 0) {
        ignored_.insert(key);
        machine_.notes.push_back(label(apart.first) + " and " + label(apart.second) + " both read " + key +
                                 " but SYS apart: the job that ran nvidia-smi was limited to those CPUs, so the sockets "
                                 "come from the SYS cells and the cores are not recorded");
      }
    }
    for (auto& [key, gpus] : gpus_of)
      if (!ignored_.count(key))
        for (int g : gpus) comp.unite(g, gpus.front());
    // Components in order of their first device; one with no affinity and no SYS to an earlier
    // package joins it (nothing says it is elsewhere).
    package_.assign(at(n_), -1);
    std::vector<int> roots;
    for (int d = 0; d < n_; ++d) {
      auto known = std::find(roots.begin(), roots.end(), comp.find(d));
      if (known != roots.end()) {
        package_[at(d)] = static_cast<int>(known - roots.begin());
        continue;
      }
      int joined = -1;
      bool keyed = false;
      for (int e = d; e < m_.gpus; ++e) keyed |= comp.find(e) == comp.find(d) && !key(e).empty();
      for (int p = 0; p < static_cast<int>(roots.size()) && joined < 0 && !keyed; ++p) {
        bool apart = false;
        for (int e = 0; e < d; ++e) apart |= package_[at(e)] == p && sys(d, e);
        if (!apart) joined = p;
      }
      if (joined >= 0) {
        comp.unite(d, roots[at(joined)]);
        for (int& r : roots) r = comp.find(r);
      } else {
        joined = static_cast<int>(roots.size());
        roots.push_back(comp.find(d));
      }
      package_[at(d)] = joined;
    }
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < a; ++b)
        if (package_[at(a)] == package_[at(b)] && sys(a, b)) contradiction(a, b, "on one socket");
  }

  std::string key(int r) const {
    std::string k = r < m_.gpus ? affinity_key(r) : std::string();
    return ignored_.count(k) ? std::string() : k;
  }

  // NUMA nodes: each affinity of a package's GPUs is one, in the order of the first GPU that reads
  // it; a socket with two reads NODE between them (sub-NUMA clustering). Devices without an
  // affinity join the node of a PIX/PXB partner, else their package's first node.
  void find_domains() {
    UnionFind pxb(n_);
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < n_; ++b)
        if (cell(a, b) == "PIX" || cell(a, b) == "PXB") pxb.unite(a, b);
    std::map<std::pair<int, std::string>, int> domain_of;
    domain_.assign(at(n_), -1);
    auto add_domain = [&](int package, const std::string& k, int first) {
      auto [it, added] = domain_of.emplace(std::make_pair(package, k), static_cast<int>(machine_.sockets.size()));
      if (added) {
        ImportedSocket s;
        s.package = package;
        s.where = where(first);
        if (first < m_.gpus && !k.empty()) {
          s.cores = m_.cpu_affinity[at(first)];
          const std::string& numa = m_.numa_affinity[at(first)];
          std::vector<int> nodes = numa.empty() ? std::vector<int>{} : parse_int_list(numa);
          if (!nodes.empty()) s.numa_node = nodes.front();
          if (nodes.size() > 1)
            machine_.notes.push_back(label(first) + " reads NUMA Affinity " + numa +
                                     ", several nodes (a VM or a GPU with memory nodes of its own); its socket is given node " +
                                     std::to_string(*s.numa_node));
        }
        machine_.sockets.push_back(s);
      }
      return it->second;
    };
    for (int pass = 0; pass < 2; ++pass)
      for (int d = 0; d < n_; ++d) {
        if (domain_[at(d)] >= 0) continue;
        if (!key(d).empty()) {
          domain_[at(d)] = add_domain(package_[at(d)], key(d), d);
          continue;
        }
        for (int e = 0; e < n_ && domain_[at(d)] < 0; ++e)
          if (pxb.find(e) == pxb.find(d) && domain_[at(e)] >= 0) domain_[at(d)] = domain_[at(e)];
        if (pass == 1 && domain_[at(d)] < 0) {
          for (const auto& [k, index] : domain_of)
            if (k.first == package_[at(d)] && domain_[at(d)] < 0) domain_[at(d)] = index;
          if (domain_[at(d)] < 0) domain_[at(d)] = add_domain(package_[at(d)], "", d);
        }
      }
    std::map<int, std::vector<std::string>> nodes_of;  // package -> its NUMA nodes
    for (const ImportedSocket& s : machine_.sockets)
      nodes_of[s.package].push_back(s.numa_node ? std::to_string(*s.numa_node) : "?");
    for (const auto& [package, nodes] : nodes_of)
      if (nodes.size() > 1)
        machine_.notes.push_back("socket " + std::to_string(package) + " holds NUMA nodes " + join(nodes, ", ") +
                                 " with NODE between them: one socket split into NUMA nodes (sub-NUMA clustering), "
                                 "joined by the catalogue's numa link");
  }

  // PIX shares a switch; PXB shares a parent switch above the switches; PHB or NODE between root
  // ports of one NUMA node, NODE between NUMA nodes of one socket.
  void find_tree() {
    UnionFind pix(n_), pxb(n_);
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < n_; ++b) {
        if (cell(a, b) == "PIX") pix.unite(a, b);
        if (cell(a, b) == "PIX" || cell(a, b) == "PXB") pxb.unite(a, b);
      }
    for (int a = 0; a < n_; ++a)
      for (int b = 0; b < a; ++b) {
        if (!pcie(a, b)) continue;
        const std::string& c = cell(a, b);
        if (pix.find(a) == pix.find(b) && c != "PIX") contradiction(a, b, "on one PCIe switch (PIX)");
        if (pix.find(a) != pix.find(b) && pxb.find(a) == pxb.find(b) && c != "PXB")
          contradiction(a, b, "under one parent switch (PXB)");
        if (pxb.find(a) == pxb.find(b) || package_[at(a)] != package_[at(b)]) continue;
        if (domain_[at(a)] != domain_[at(b)]) {
          if (c != "NODE") contradiction(a, b, "on different NUMA nodes of one socket (NODE)");
          continue;
        }
        if (c != "PHB" && c != "NODE") contradiction(a, b, "on different root ports of one socket (PHB or NODE)");
        bool shared = c == "PHB";
        if (machine_.shared_host_bridge && *machine_.shared_host_bridge != shared)
          import_fail(m_.file, where(std::max(a, b)),
                      "the file reads both PHB and NODE between root ports; topsim models one host-bridge kind per CPU model");
        machine_.shared_host_bridge = shared;
      }
    // Switches in the order of their first device: a parent for a PXB group, then its children.
    std::map<int, int> switch_of_pix, parent_of_pxb;
    std::vector<int> pix_size(at(n_), 0), pxb_groups(at(n_), 0);
    for (int d = 0; d < n_; ++d)
      if (pix_size[at(pix.find(d))]++ == 0) ++pxb_groups[at(pxb.find(d))];
    switch_.assign(at(n_), -1);
    for (int d = 0; d < n_; ++d) {
      int p = pix.find(d), x = pxb.find(d);
      bool nested = pxb_groups[at(x)] > 1;
      if (nested && !parent_of_pxb.count(x)) {
        parent_of_pxb[x] = static_cast<int>(machine_.switches.size());
        machine_.switches.push_back({domain_[at(d)], -1, where(d)});
      }
      if ((nested || pix_size[at(p)] > 1) && !switch_of_pix.count(p)) {
        switch_of_pix[p] = static_cast<int>(machine_.switches.size());
        machine_.switches.push_back({domain_[at(d)], nested ? parent_of_pxb[x] : -1, where(d)});
      }
      switch_[at(d)] = switch_of_pix.count(p) ? switch_of_pix[p] : -1;
    }
  }

  void add_endpoints() {
    for (int d = 0; d < n_; ++d) {
      ImportedEndpoint e;
      e.socket = domain_[at(d)];
      e.pcie_switch = switch_[at(d)];
      e.where = where(d);
      if (d < m_.gpus) {
        machine_.gpus.push_back(e);
      } else {
        e.name = m_.nic_names[at(d - m_.gpus)];
        machine_.nics.push_back(e);
      }
    }
    for (int a = 0; a < m_.gpus; ++a)
      for (int b = a + 1; b < m_.gpus; ++b)
        if (auto count = smi_nvlinks(cell(a, b))) machine_.nvlinks.push_back({a, b, *count, where(b)});
  }

  const SmiMatrix& m_;
  const int n_;
  ImportedMachine machine_;
  std::set<std::string> ignored_;  ///< affinity keys that do not name a socket (cpuset-limited)
  std::vector<int> package_;       ///< per device: its socket
  std::vector<int> domain_;        ///< per device: its NUMA node, an index into machine_.sockets
  std::vector<int> switch_;        ///< per device: its PCIe switch, -1 on a root port
};

}  // namespace

ImportedMachine smi_machine(const SmiMatrix& m) { return SmiMachine(m).build(); }

}  // namespace topsim
