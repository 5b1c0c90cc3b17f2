#include "interop/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

const char* const kCells = "X, NV# (NV1, NV2, ...), PIX, PXB, PHB, NODE or SYS";

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// nvidia-smi underlines the header on a terminal (ESC[4m ... ESC[0m); a captured file keeps them.
std::string without_escapes(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
      continue;
    }
    if (line[i] != '\r') out += line[i];
  }
  return out;
}

bool is_device_label(const std::string& w) {
  if (w == "CPU" || w == "NUMA" || w == "GPU") return false;
  bool digit = std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  bool name = std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return digit && name;
}

bool numbered(const std::string& w, const std::string& prefix, int n) { return w == prefix + std::to_string(n); }

std::optional<int> nvlink_count(const std::string& cell) {
  if (cell.size() < 3 || cell.compare(0, 2, "NV") != 0) return std::nullopt;
  int n = 0;
  for (std::size_t i = 2; i < cell.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(cell[i])) || n > 1000) return std::nullopt;
    n = n * 10 + (cell[i] - '0');
  }
  return n >= 1 ? std::optional<int>(n) : std::nullopt;
}

bool is_relation(const std::string& w) {
  return w == "X" || nvlink_count(w) || w == "PIX" || w == "PXB" || w == "PHB" || w == "NODE" || w == "SYS" || w == "SOC";
}

// Names of the columns after the devices: tab-separated as nvidia-smi prints them, else the known
// multi-word names matched greedily and any other word as a column of its own.
std::vector<std::string> extra_columns(const std::string& rest) {
  std::vector<std::string> out;
  if (rest.find('\t') != std::string::npos) {
    for (const std::string& part : split(rest, '\t')) {
      std::string name = join(words(part), " ");
      if (!name.empty()) out.push_back(name);
    }
    return out;
  }
  const std::vector<std::string> known = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};
  std::vector<std::string> w = words(rest);
  for (std::size_t i = 0; i < w.size();) {
    bool matched = false;
    for (const std::string& k : known) {
      std::vector<std::string> kw = words(k);
      if (i + kw.size() <= w.size() && std::equal(kw.begin(), kw.end(), w.begin() + static_cast<long>(i))) {
        out.push_back(k);
        i += kw.size();
        matched = true;
        break;
      }
    }
    if (!matched) out.push_back(w[i++]);
  }
  return out;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[static_cast<std::size_t>(x)] == x ? x : parent[static_cast<std::size_t>(x)] = find(parent[static_cast<std::size_t>(x)]); }
  void unite(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

}  // namespace

SmiMatrix parse_nvidia_smi(const std::string& text, const std::string& file) {
  std::vector<std::string> lines;
  for (const std::string& line : split(text, '\n')) lines.push_back(without_escapes(line));
  SmiMatrix m;
  m.file = file;
  auto fail = [&](std::size_t index, const std::string& message) -> void {
    throw InputError(file, std::to_string(index + 1), message);
  };

  // Header: the first line whose first word is GPU0; anything above it is what nvidia-smi or a
  // shell prompt printed first.
  // A row starts with GPU0 too, but its second word is a relation.
  auto is_header = [](const std::vector<std::string>& w) {
    return !w.empty() && w.front() == "GPU0" && (w.size() < 2 || !is_relation(w[1]));
  };
  std::size_t header = 0;
  while (header < lines.size() && !is_header(words(lines[header]))) ++header;
  if (header == lines.size())
    throw InputError(file, "1",
                     "no header line: expected the column names nvidia-smi topo -m prints first "
                     "(GPU0 GPU1 ... [NIC0 ...] CPU Affinity NUMA Affinity)");
  std::vector<std::string> head = words(lines[header]);
  std::size_t labels_end = 0;
  while (labels_end < head.size() && is_device_label(head[labels_end])) ++labels_end;
  for (std::size_t i = 0; i < labels_end; ++i) {
    const std::string& w = head[i];
    bool gpu = w.compare(0, 3, "GPU") == 0;
    if (gpu && (m.gpus != static_cast<int>(i) || !numbered(w, "GPU", m.gpus)))
      fail(header, "column " + std::to_string(i + 1) + " is '" + w + "', expected GPU" + std::to_string(i) +
                       " (GPUs first, numbered from 0)");
    if (gpu) ++m.gpus;
    m.labels.push_back(w);
  }
  std::size_t rest_at = lines[header].find(head[labels_end - 1]) + head[labels_end - 1].size();
  std::vector<std::string> extras = extra_columns(lines[header].substr(rest_at));
  auto extra_index = [&](const std::string& name) {
    auto it = std::find(extras.begin(), extras.end(), name);
    return it == extras.end() ? -1 : static_cast<int>(it - extras.begin());
  };
  const int cpu_col = extra_index("CPU Affinity"), numa_col = extra_index("NUMA Affinity");
  const std::size_t n = m.labels.size();

  // Rows, one per column label, in the same order.
  std::size_t at = header + 1;
  for (std::size_t r = 0; r < n; ++r, ++at) {
    while (at < lines.size() && words(lines[at]).empty() && r == 0) ++at;
    std::vector<std::string> w = at < lines.size() ? words(lines[at]) : std::vector<std::string>{};
    if (w.empty() || w.front() != m.labels[r])
      fail(std::min(at, lines.size() - 1),
           "expected the row of " + m.labels[r] + " (one row per column, in the header's order), found " +
               (w.empty() ? std::string("no row") : "'" + w.front() + "'"));
    // A missing cell shifts the affinity into the matrix: count the relations that lead the row.
    std::size_t relations = 1;
    while (relations < w.size() && is_relation(w[relations])) ++relations;
    bool shifted = relations < w.size() && relations < n + 1 &&
                   (w[relations] == "N/A" || std::isdigit(static_cast<unsigned char>(w[relations][0])));
    if (w.size() < n + 1 || shifted || relations > n + 1)
      fail(at, "row " + m.labels[r] + " has " + std::to_string(std::min(w.size(), relations) - 1) + " cells, expected " + std::to_string(n) +
                   " (one per column " + m.labels.front() + ".." + m.labels.back() + ")");
    if (w.size() > n + 1 + extras.size())
      fail(at, "row " + m.labels[r] + " has " + std::to_string(w.size() - 1) + " fields, but the header names " +
                   std::to_string(n + extras.size()) + " columns");
    std::vector<std::string> cells(w.begin() + 1, w.begin() + 1 + static_cast<long>(n));
    for (std::size_t c = 0; c < n; ++c) {
      std::string& cell = cells[c];
      if (cell == "SOC") cell = "SYS";  // the name of SYS before driver 384
      bool ok = cell == "X" ? c == r
                            : c != r && (nvlink_count(cell) || cell == "PIX" || cell == "PXB" || cell == "PHB" ||
                                         cell == "NODE" || cell == "SYS");
      if (!ok)
        fail(at, "row " + m.labels[r] + ", column " + m.labels[c] + ": '" + cell + "' is not a relation; expected " +
                     (c == r ? std::string("X (the device itself)") : std::string(kCells)));
      bool gpu_pair = static_cast<int>(r) < m.gpus && static_cast<int>(c) < m.gpus;
      if (nvlink_count(cell) && !gpu_pair)
        fail(at, "row " + m.labels[r] + ", column " + m.labels[c] + ": " + cell +
                     " between a NIC and another device; NVLinks join GPUs only");
      if (c < r && m.cells[c][r] != cell)
        fail(at, "row " + m.labels[r] + ", column " + m.labels[c] + " reads " + cell + " but row " + m.labels[c] +
                     " (line " + std::to_string(m.lines[c]) + ") reads " + m.cells[c][r] +
                     "; the matrix must be symmetric");
    }
    auto extra = [&](int column) {
      std::size_t i = n + 1 + static_cast<std::size_t>(column);
      return column >= 0 && i < w.size() && w[i] != "N/A" ? w[i] : std::string();
    };
    std::string cpu = extra(cpu_col), numa = extra(numa_col);
    if (!cpu.empty()) {
      try {
        parse_int_list(cpu);
      } catch (const ParseError&) {
        fail(at, "row " + m.labels[r] + ": CPU Affinity '" + cpu + "' is not a list of cores like 0-19,40-59 or N/A");
      }
    }
    // 0..4095, the topology file's range for numa_node; the length check keeps stoi in int.
    bool numa_ok = numa.size() <= 4 &&
                   std::all_of(numa.begin(), numa.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!numa.empty() && (!numa_ok || std::stoi(numa) > 4095))
      fail(at, "row " + m.labels[r] + ": NUMA Affinity '" + numa + "' is not a node number (0 to 4095) or N/A");
    m.cells.push_back(cells);
    m.lines.push_back(static_cast<int>(at + 1));
    m.cpu_affinity.push_back(cpu);
    m.numa_affinity.push_back(numa);
  }

  // NIC legend ("  NIC0: mlx5_0"); the rest after the rows is nvidia-smi's legend text.
  std::map<std::string, std::string> legend;
  for (; at < lines.size(); ++at) {
    std::vector<std::string> w = words(lines[at]);
    if (w.size() == 2 && w[0].size() > 1 && w[0].back() == ':' && w[0].compare(0, 3, "NIC") == 0)
      legend[w[0].substr(0, w[0].size() - 1)] = w[1];
  }
  for (std::size_t i = static_cast<std::size_t>(m.gpus); i < n; ++i) {
    const std::string& label = m.labels[i];
    bool numbered_nic = numbered(label, "NIC", static_cast<int>(i) - m.gpus);
    m.nic_names.push_back(legend.count(label) ? legend[label] : numbered_nic ? "" : label);
  }
  return m;
}

ImportedMachine smi_machine(const SmiMatrix& m) {
  ImportedMachine machine;
  machine.file = m.file;
  machine.format = "nvidia-smi topo -m";
  const int n = static_cast<int>(m.labels.size());
  auto cell = [&](int a, int b) -> const std::string& { return m.cells[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]; };
  auto where = [&](int row) { return ImportRef{std::to_string(m.lines[static_cast<std::size_t>(row)]), ""}; };
  auto contradiction = [&](int a, int b, const std::string& implied) {
    import_fail(m.file, where(std::max(a, b)),
                m.labels[static_cast<std::size_t>(std::max(a, b))] + " and " + m.labels[static_cast<std::size_t>(std::min(a, b))] +
                    " read " + cell(a, b) + ", but the other cells put them " + implied +
                    "; the matrix does not describe one PCIe tree");
  };
  auto pcie = [&](int a, int b) { return !nvlink_count(cell(a, b)) && a != b; };

  // Sockets: devices on one socket read anything but SYS; GPUs of one NUMA (or CPU) affinity share one.
  UnionFind socket_of(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (pcie(a, b) && cell(a, b) != "SYS") socket_of.unite(a, b);
  std::map<int, std::string> key_of_root;  // affinity key of each component
  auto affinity_key = [&](int r) {
    const std::string& numa = m.numa_affinity[static_cast<std::size_t>(r)];
    const std::string& cpu = m.cpu_affinity[static_cast<std::size_t>(r)];
    return !numa.empty() ? "numa " + numa : !cpu.empty() ? "cpus " + cpu : std::string();
  };
  std::map<std::string, int> first_with_key;
  for (int r = 0; r < m.gpus; ++r) {
    std::string key = affinity_key(r);
    if (key.empty()) continue;
    if (first_with_key.count(key)) socket_of.unite(r, first_with_key[key]);
    else first_with_key[key] = r;
  }
  for (int r = 0; r < m.gpus; ++r) {
    std::string key = affinity_key(r);
    std::string& known = key_of_root[socket_of.find(r)];
    if (!key.empty() && !known.empty() && known != key)
      import_fail(m.file, where(r), m.labels[static_cast<std::size_t>(r)] + " reads " + key +
                                        " but shares a socket (a PCIe path without SYS) with a GPU of " + known);
    if (!key.empty()) known = key;
  }
  // Components in order of their first device; one with no affinity and no SYS to an earlier
  // socket joins it (nothing says it is elsewhere).
  std::vector<int> socket(static_cast<std::size_t>(n), -1);
  std::vector<int> socket_root;
  for (int d = 0; d < n; ++d) {
    int root = socket_of.find(d);
    auto known = std::find(socket_root.begin(), socket_root.end(), root);
    if (known != socket_root.end()) {
      socket[static_cast<std::size_t>(d)] = static_cast<int>(known - socket_root.begin());
      continue;
    }
    int joined = -1;
    if (key_of_root[root].empty()) {
      for (int s = 0; s < static_cast<int>(socket_root.size()) && joined < 0; ++s) {
        bool sys = false;
        for (int e = 0; e < d; ++e)
          if (socket[static_cast<std::size_t>(e)] == s) sys |= cell(d, e) == "SYS";
        if (!sys) joined = s;
      }
    }
    if (joined >= 0) {
      socket_of.unite(d, socket_root[static_cast<std::size_t>(joined)]);
      socket_root[static_cast<std::size_t>(joined)] = socket_of.find(d);
    } else {
      joined = static_cast<int>(socket_root.size());
      socket_root.push_back(root);
      ImportedSocket s;
      s.where = where(d);
      if (d < m.gpus) {
        s.cores = m.cpu_affinity[static_cast<std::size_t>(d)];
        if (!m.numa_affinity[static_cast<std::size_t>(d)].empty()) s.numa_node = std::stoi(m.numa_affinity[static_cast<std::size_t>(d)]);
      }
      machine.sockets.push_back(s);
    }
    socket[static_cast<std::size_t>(d)] = joined;
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < a; ++b)
      if (socket[static_cast<std::size_t>(a)] == socket[static_cast<std::size_t>(b)] && cell(a, b) == "SYS")
        contradiction(a, b, "on one socket");

  // PCIe tree: PIX shares a switch; PXB shares a parent switch above the switches.
  UnionFind pix(n), pxb(n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (cell(a, b) == "PIX") pix.unite(a, b);
      if (cell(a, b) == "PIX" || cell(a, b) == "PXB") pxb.unite(a, b);
    }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < a; ++b) {
      if (!pcie(a, b)) continue;
      const std::string& c = cell(a, b);
      if (pix.find(a) == pix.find(b) && c != "PIX") contradiction(a, b, "on one PCIe switch (PIX)");
      if (pix.find(a) != pix.find(b) && pxb.find(a) == pxb.find(b) && c != "PXB")
        contradiction(a, b, "under one parent switch (PXB)");
      if (pxb.find(a) != pxb.find(b) && socket[static_cast<std::size_t>(a)] == socket[static_cast<std::size_t>(b)]) {
        if (c != "PHB" && c != "NODE") contradiction(a, b, "on different root ports of one socket (PHB or NODE)");
        bool shared = c == "PHB";
        if (machine.shared_host_bridge && *machine.shared_host_bridge != shared)
          import_fail(m.file, where(std::max(a, b)),
                      "the file reads both PHB and NODE between root ports; topsim models one host-bridge kind per CPU model");
        machine.shared_host_bridge = shared;
      }
    }
  // Switches in the order of their first device: a parent for a PXB group, then its children.
  std::map<int, int> switch_of_pix, parent_of_pxb;
  std::vector<int> pix_size(static_cast<std::size_t>(n), 0), pxb_groups(static_cast<std::size_t>(n), 0);
  for (int d = 0; d < n; ++d) {
    if (pix_size[static_cast<std::size_t>(pix.find(d))]++ == 0) ++pxb_groups[static_cast<std::size_t>(pxb.find(d))];
  }
  std::vector<int> endpoint_switch(static_cast<std::size_t>(n), -1);
  for (int d = 0; d < n; ++d) {
    int p = pix.find(d), x = pxb.find(d);
    bool nested = pxb_groups[static_cast<std::size_t>(x)] > 1;
    if (nested && !parent_of_pxb.count(x)) {
      parent_of_pxb[x] = static_cast<int>(machine.switches.size());
      machine.switches.push_back({socket[static_cast<std::size_t>(d)], -1, where(d)});
    }
    if ((nested || pix_size[static_cast<std::size_t>(p)] > 1) && !switch_of_pix.count(p)) {
      switch_of_pix[p] = static_cast<int>(machine.switches.size());
      machine.switches.push_back({socket[static_cast<std::size_t>(d)], nested ? parent_of_pxb[x] : -1, where(d)});
    }
    endpoint_switch[static_cast<std::size_t>(d)] = switch_of_pix.count(p) ? switch_of_pix[p] : -1;
  }
  for (int d = 0; d < n; ++d) {
    ImportedEndpoint e;
    e.socket = socket[static_cast<std::size_t>(d)];
    e.pcie_switch = endpoint_switch[static_cast<std::size_t>(d)];
    e.where = where(d);
    if (d < m.gpus) {
      machine.gpus.push_back(e);
    } else {
      e.name = m.nic_names[static_cast<std::size_t>(d - m.gpus)];
      machine.nics.push_back(e);
    }
  }
  for (int a = 0; a < m.gpus; ++a)
    for (int b = a + 1; b < m.gpus; ++b)
      if (auto count = nvlink_count(cell(a, b))) machine.nvlinks.push_back({a, b, *count, where(b)});
  return machine;
}

}  // namespace topsim
