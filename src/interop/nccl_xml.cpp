#include "interop/nccl_xml.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <map>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// PCI class codes NCCL writes (PCI Code and ID Assignment spec).
bool is_bridge(const std::string& cls) { return cls.compare(0, 6, "0x0604") == 0; }
bool is_display(const std::string& cls) { return cls.compare(0, 4, "0x03") == 0; }
const char* const kNvswitchClass = "0x068000";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct Reader {
  const std::string& text;
  const std::string& file;
  ImportedMachine machine;
  struct Gpu {
    int dev = 0;
    std::string busid;
    ImportedEndpoint endpoint;
    pugi::xml_node node;
  };
  std::vector<Gpu> gpus;
  std::vector<std::pair<int, ImportedEndpoint>> nics;  // net dev, NIC

  int line_of(std::ptrdiff_t offset) const {
    auto end = text.begin() + std::min<std::ptrdiff_t>(std::max<std::ptrdiff_t>(offset, 0), static_cast<std::ptrdiff_t>(text.size()));
    return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
  }

  // "/system/cpu[2]/pci[1]/gpu": an index where a parent has several children of that name.
  std::string path(pugi::xml_node node) const {
    std::string out;
    for (; node && node.type() == pugi::node_element; node = node.parent()) {
      int index = 0, same = 0;
      for (pugi::xml_node s = node.parent().child(node.name()); s; s = s.next_sibling(node.name())) {
        ++same;
        if (s == node) index = same;
      }
      out = "/" + std::string(node.name()) + (same > 1 ? "[" + std::to_string(index) + "]" : "") + out;
    }
    return out;
  }

  ImportRef where(pugi::xml_node node) const { return {std::to_string(line_of(node.offset_debug())), path(node)}; }

  [[noreturn]] void fail(pugi::xml_node node, const std::string& message) const {
    import_fail(file, where(node), message);
  }

  std::string required(pugi::xml_node node, const char* name) const {
    pugi::xml_attribute a = node.attribute(name);
    if (!a) fail(node, "<" + std::string(node.name()) + "> has no '" + name + "' attribute");
    return a.value();
  }

  int integer(pugi::xml_node node, const char* name, int least) const {
    std::string value = required(node, name);
    bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!digits || value.size() > 9 || std::stoi(value) < least)
      fail(node, "'" + std::string(name) + "' is '" + value + "', expected a whole number of at least " + std::to_string(least));
    return std::stoi(value);
  }

  // "0000ffff,ffffffff" (32-bit words, most significant first) -> "0-47".
  std::string cores(pugi::xml_node cpu) const {
    pugi::xml_attribute a = cpu.attribute("affinity");
    if (!a) return "";
    std::vector<std::string> word_list = split(a.value(), ',');
    std::vector<int> set;
    for (std::size_t w = 0; w < word_list.size(); ++w) {
      const std::string& hex = word_list[w];
      if (hex.empty() || hex.size() > 8 || !std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
        fail(cpu, "affinity '" + std::string(a.value()) + "' is not a CPU mask like 00000000,000fffff (hex words)");
      unsigned long bits = std::stoul(hex, nullptr, 16);
      int base = 32 * static_cast<int>(word_list.size() - 1 - w);
      for (int b = 0; b < 32; ++b)
        if (bits >> b & 1UL) set.push_back(base + b);
    }
    std::sort(set.begin(), set.end());
    return int_ranges(set);
  }

  // One <nic> is one card; each <net> in it is a port (a dual-port ConnectX lists two).
  void add_nic(pugi::xml_node nic, pugi::xml_node pci, int socket, int pcie_switch) {
    ImportedEndpoint e;
    int dev = -1;
    e.ports = 0;
    for (pugi::xml_node net : nic.children()) {
      if (std::string(net.name()) != "net") fail(net, "unexpected <" + std::string(net.name()) + "> in <nic>; expected <net>");
      double speed_bps = integer(net, "speed", 1) * 1e6;  // NCCL writes Mb/s
      std::string name = required(net, "name");
      if (e.ports++ == 0) {
        e.name = name;
        e.speed_bps = speed_bps;
        e.where = where(net);
        dev = net.attribute("dev") ? integer(net, "dev", 0) : static_cast<int>(nics.size());
      } else if (*e.speed_bps != speed_bps) {
        fail(net, "port " + name + " runs at " + shortest(speed_bps / 1e9) + " Gb/s but port " + e.name + " of the same <nic> at " +
                      shortest(*e.speed_bps / 1e9) + " Gb/s; topsim models one port speed per card");
      }
    }
    if (e.ports == 0) fail(nic, "<nic> has no <net>; expected <net name=... speed=...> per port");
    e.socket = socket;
    e.pcie_switch = pcie_switch;
    if (pci) e.pci_device = lower(pci.attribute("device").value());
    nics.emplace_back(dev, e);
  }

  void add_gpu(pugi::xml_node gpu, pugi::xml_node pci, int socket, int pcie_switch) {
    Gpu g;
    g.dev = integer(gpu, "dev", 0);
    g.busid = required(pci, "busid");
    g.busid = lower(g.busid);
    // The model: by PCI device id when the catalogue knows it (build_topology_spec), else by sm.
    g.endpoint.sm = required(gpu, "sm");
    g.endpoint.pci_device = lower(pci.attribute("device").value());
    g.endpoint.socket = socket;
    g.endpoint.pcie_switch = pcie_switch;
    g.endpoint.where = where(gpu);
    g.node = gpu;
    for (const Gpu& other : gpus) {
      if (other.dev == g.dev) fail(gpu, "a second GPU with dev " + std::to_string(g.dev));
      if (other.busid == g.busid) fail(pci, "a second GPU at busid " + g.busid);
    }
    gpus.push_back(g);
  }

  // Children of a cpu or of a bridge: bridges nest, endpoints hold a gpu or a nic.
  void walk(pugi::xml_node parent, int socket, int pcie_switch) {
    for (pugi::xml_node child : parent.children()) {
      if (child.type() != pugi::node_element) continue;
      std::string name = child.name();
      if (name == "nic") {
        add_nic(child, pugi::xml_node(), socket, pcie_switch);
      } else if (name == "pci") {
        std::string cls = required(child, "class");
        required(child, "busid");
        if (is_bridge(cls)) {
          int id = static_cast<int>(machine.switches.size());
          machine.switches.push_back({socket, pcie_switch, where(child)});
          walk(child, socket, id);
          continue;
        }
        for (pugi::xml_node inner : child.children()) {
          std::string inner_name = inner.name();
          if (inner_name == "gpu") add_gpu(inner, child, socket, pcie_switch);
          else if (inner_name == "nic") add_nic(inner, child, socket, pcie_switch);
          else if (inner_name == "pci") fail(inner, "<pci> inside a device of class " + cls + "; only bridges (0x0604..) hold devices");
        }
        if (is_display(cls) && !child.child("gpu"))
          fail(child, "a display device (class " + cls + ") without <gpu>; NCCL writes <gpu dev= sm=> for each GPU it uses");
      } else {
        fail(child, "unexpected <" + name + ">; expected <pci> or <nic>");
      }
    }
  }

  void nvlinks() {
    std::map<std::string, int> by_busid;
    for (std::size_t i = 0; i < gpus.size(); ++i) by_busid[gpus[i].busid] = static_cast<int>(i);
    std::map<std::pair<int, int>, ImportedNvlink> direct;
    std::vector<int> switched(gpus.size(), 0);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (pugi::xml_node link : gpus[i].node.children()) {
        if (std::string(link.name()) != "nvlink") fail(link, "unexpected <" + std::string(link.name()) + "> in <gpu>; expected <nvlink>");
        std::string target = required(link, "target");
        std::transform(target.begin(), target.end(), target.begin(), [](unsigned char c) { return std::tolower(c); });
        int count = integer(link, "count", 1);
        std::string tclass = link.attribute("tclass").value();
        if (tclass == kNvswitchClass) {
          switched[i] += count;
          continue;
        }
        if (is_bridge(tclass) || tclass.compare(0, 4, "0x06") == 0)
          fail(link, "an NVLink to a CPU (tclass " + tclass + ", as on POWER9) is not modelled by topsim");
        auto peer = by_busid.find(target);
        if (peer == by_busid.end()) {
          std::vector<std::string> known;
          for (const auto& [busid, index] : by_busid) known.push_back(busid);
          fail(link, "nvlink target '" + target + "' is no GPU of this file (GPU busids: " + join(known, ", ") +
                         "; NVSwitches have tclass " + kNvswitchClass + ")");
        }
        if (peer->second == static_cast<int>(i)) fail(link, "an NVLink from a GPU to itself");
        int a = std::min(static_cast<int>(i), peer->second), b = std::max(static_cast<int>(i), peer->second);
        auto [it, fresh] = direct.try_emplace({a, b}, ImportedNvlink{a, b, count, where(link)});
        if (!fresh && it->second.count != count)
          fail(link, "count " + std::to_string(count) + " but the GPU at " + target + " lists " +
                         std::to_string(it->second.count) + " NVLinks back (line " + it->second.where.line + ")");
      }
    }
    for (const auto& [pair, link] : direct) machine.nvlinks.push_back(link);
    if (std::any_of(switched.begin(), switched.end(), [](int n) { return n > 0; })) {
      if (!machine.nvlinks.empty())
        fail(gpus.front().node, "GPUs with NVLinks both to NVSwitches and to each other; topsim imports one or the other");
      machine.nvswitch_links = switched;
    }
  }
};

}  // namespace

ImportedMachine parse_nccl_xml(const std::string& text, const std::string& file) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  Reader reader{text, file, {}, {}, {}};
  if (!parsed)
    throw InputError(file, std::to_string(reader.line_of(parsed.offset)),
                     std::string("not well-formed XML: ") + parsed.description() + " (NCCL_TOPO_DUMP_FILE writes <system version=\"1\">...)");
  pugi::xml_node system = doc.document_element();
  if (std::string(system.name()) != "system")
    throw InputError(file, std::to_string(reader.line_of(system.offset_debug())),
                     "the root element is <" + std::string(system.name()) + ">, expected <system> (what NCCL_TOPO_DUMP_FILE writes)");
  ImportedMachine& m = reader.machine;
  m.file = file;
  m.format = "NCCL topology XML";
  for (pugi::xml_node cpu : system.children()) {
    if (cpu.type() != pugi::node_element) continue;
    if (std::string(cpu.name()) != "cpu") reader.fail(cpu, "unexpected <" + std::string(cpu.name()) + ">; expected <cpu>");
    ImportedSocket s;
    if (cpu.attribute("numaid") && std::string(cpu.attribute("numaid").value()) != "-1") s.numa_node = reader.integer(cpu, "numaid", 0);
    s.cores = reader.cores(cpu);
    s.cpu_vendor = cpu.attribute("vendor").value();
    if (cpu.attribute("familyid")) s.cpu_family = reader.integer(cpu, "familyid", 0);
    if (cpu.attribute("modelid")) s.cpu_model = reader.integer(cpu, "modelid", 0);
    s.where = reader.where(cpu);
    m.sockets.push_back(s);
    reader.walk(cpu, static_cast<int>(m.sockets.size()) - 1, -1);
  }
  if (reader.gpus.empty()) reader.fail(system, "no <gpu>; expected <cpu><pci ...><gpu dev= sm=>...</gpu></pci></cpu>");
  reader.nvlinks();
  // GPUs and NICs in device order, as CUDA and NCCL number them.
  std::vector<std::size_t> order(reader.gpus.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reader.gpus[a].dev < reader.gpus[b].dev; });
  std::vector<int> rank(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = static_cast<int>(i);
    m.gpus.push_back(reader.gpus[order[i]].endpoint);
  }
  for (ImportedNvlink& l : m.nvlinks) {
    int a = rank[static_cast<std::size_t>(l.a)], b = rank[static_cast<std::size_t>(l.b)];
    l.a = std::min(a, b);
    l.b = std::max(a, b);
  }
  std::sort(m.nvlinks.begin(), m.nvlinks.end(), [](const ImportedNvlink& x, const ImportedNvlink& y) {
    return std::make_pair(x.a, x.b) < std::make_pair(y.a, y.b);
  });
  if (!m.nvswitch_links.empty()) {
    std::vector<int> switched(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) switched[i] = m.nvswitch_links[order[i]];
    m.nvswitch_links = switched;
  }
  std::stable_sort(reader.nics.begin(), reader.nics.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [dev, nic] : reader.nics) m.nics.push_back(nic);
  return m;
}

}  // namespace topsim
