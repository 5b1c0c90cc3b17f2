// topsim topo export --simgrid-xml: the platform file's hosts, links and routes, checked by hand
// on tests/data/tiny.json and against the routing module on bundled servers.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <regex>

#include "export/simgrid_xml.hpp"
#include "helpers.hpp"
#include "p2p/p2p.hpp"
#include "routing/resources.hpp"

using namespace topsim;
using namespace topsim::test;

namespace {

struct XmlLink {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  std::string sharing;
};

// The <link> elements of an exported file by id (the exporter writes one per line).
std::map<std::string, XmlLink> links_of(const std::string& xml) {
  std::map<std::string, XmlLink> links;
  std::regex element(R"re(<link id="([^"]+)" bandwidth="([^"]+)Bps" latency="([^"]+)s" sharing_policy="([A-Z]+)">)re");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), element); it != std::sregex_iterator(); ++it)
    links[(*it)[1]] = XmlLink{std::stod((*it)[2]), std::stod((*it)[3]), (*it)[4]};
  return links;
}

// The body of the route src -> dst: its <link_ctn> lines, "" when there is none.
std::string route_of(const std::string& xml, const std::string& src, const std::string& dst) {
  std::string head = "<route src=\"" + src + "\" dst=\"" + dst + "\" symmetrical=\"NO\">\n";
  auto at = xml.find(head);
  if (at == std::string::npos) return "";
  at += head.size();
  return xml.substr(at, xml.find("    </route>", at) - at);
}

std::string ctn(const std::string& id, const std::string& direction = "") {
  return "      <link_ctn id=\"" + id + "\"" + (direction.empty() ? "" : " direction=\"" + direction + "\"") + "/>\n";
}

Topology tiny() { return Topology::build(load_topology_spec(test_data("tiny.json")), catalog()); }

}  // namespace

TEST_CASE("export: tiny with peer access is two hosts, one NVLink pair and two copy-engine limits") {
  Topology t = tiny();
  std::string xml = simgrid_platform_xml(t, route_options(P2pOptions{}));
  CHECK(xml.find("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">") != std::string::npos);
  CHECK(xml.find("<platform version=\"4.1\">") != std::string::npos);
  CHECK(xml.find("<prop id=\"network/latency-factor\" value=\"1\"/>") != std::string::npos);
  CHECK(xml.find("<prop id=\"network/TCP-gamma\" value=\"0\"/>") != std::string::npos);
  // Hosts: V100 dense fp32, 15.7 TFLOPS.
  CHECK(xml.find("<host id=\"gpu0\" speed=\"1.57e+13f\">") != std::string::npos);
  CHECK(xml.find("<host id=\"gpu1\" speed=\"1.57e+13f\">") != std::string::npos);
  CHECK(xml.find("<prop id=\"topsim.gpu\" value=\"1\"/>") != std::string::npos);

  auto links = links_of(xml);
  REQUIRE(links.size() == 3);  // PCIe is on no route while NVLink joins the pair
  // links[0], gpu0-gpu1: 2 NVLink 2.0 x 25 GB/s x efficiency 0.9701 = 48.505 GB/s per direction, 0.2 us.
  REQUIRE(links.count("link.0") == 1);
  CHECK(links["link.0"].sharing == "SPLITDUPLEX");
  CHECK(links["link.0"].bandwidth_Bps == Approx(2 * 25e9 * 0.9701).epsilon(1e-12));
  CHECK(links["link.0"].latency_s == Approx(0.2e-6).epsilon(1e-12));
  // V100 copy engines: 271.7 GB/s in and out together, no latency of their own.
  for (const char* gpu : {"gpu0", "gpu1"}) {
    const XmlLink& ce = links[std::string("copy_engine.") + gpu];
    CHECK(ce.sharing == "SHARED");
    CHECK(ce.bandwidth_Bps == Approx(271.7e9).epsilon(1e-12));
    CHECK(ce.latency_s == 0);
  }
  // Forward on link 0 (its "a" end is gpu0) is UP.
  CHECK(route_of(xml, "gpu0", "gpu1") == ctn("copy_engine.gpu0") + ctn("link.0", "UP") + ctn("copy_engine.gpu1"));
  CHECK(route_of(xml, "gpu1", "gpu0") == ctn("copy_engine.gpu1") + ctn("link.0", "DOWN") + ctn("copy_engine.gpu0"));
}

TEST_CASE("export: tiny without peer access stages through cpu0's memory") {
  Topology t = tiny();
  P2pOptions off;
  off.peer_access = false;
  std::string xml = simgrid_platform_xml(t, route_options(off));
  auto links = links_of(xml);
  // GPU -> pcie0 -> cpu0 memory -> pcie0 -> GPU; the switch core is passed twice, link 3 both ways.
  CHECK(route_of(xml, "gpu0", "gpu1") == ctn("copy_engine.gpu0") + ctn("staging.gpu0") + ctn("link.1", "UP") +
                                             ctn("crossbar.pcie0") + ctn("link.3", "UP") + ctn("host_memory.cpu0") +
                                             ctn("link.3", "DOWN") + ctn("crossbar.pcie0") + ctn("link.2", "DOWN") +
                                             ctn("staging.gpu1") + ctn("copy_engine.gpu1"));
  CHECK(links.count("link.0") == 0);
  // PCIe 3 x16: 15.754 GB/s x efficiency 0.6415, 0.1 us a hop.
  CHECK(links["link.1"].bandwidth_Bps == Approx(15.754e9 * 0.6415).epsilon(1e-12));
  CHECK(links["link.1"].latency_s == Approx(0.1e-6).epsilon(1e-12));
  // The switch core moves what its three x16 ports bring in, 3 x 15.754 GB/s; 0.15 us a traversal.
  CHECK(links["crossbar.pcie0"].bandwidth_Bps == Approx(3 * 15.754e9).epsilon(1e-12));
  CHECK(links["crossbar.pcie0"].latency_s == Approx(0.15e-6).epsilon(1e-12));
  // Bounced bytes cross DRAM twice: 76.8 GB/s / 2; the root complex costs 0.1 us.
  CHECK(links["host_memory.cpu0"].bandwidth_Bps == Approx(76.8e9 / 2).epsilon(1e-12));
  CHECK(links["host_memory.cpu0"].latency_s == Approx(0.1e-6).epsilon(1e-12));
  // V100 staged-copy pipeline: 14.41 GB/s.
  CHECK(links["staging.gpu0"].bandwidth_Bps == Approx(14.41e9).epsilon(1e-12));
  // Latencies along the route: 0.1 + 0.15 + 0.1 + 0.1 + 0.1 + 0.15 + 0.1 = 0.8 us.
  CHECK(path_latency_s(t, find_route(t, 0, 1, route_options(off)).path) == Approx(0.8e-6).epsilon(1e-12));
}

TEST_CASE("export: every route's link latencies sum to its path latency (striped NVSwitch planes, staging)") {
  for (const char* name : {"dgx2", "dgx-a100", "dgx1-v100"})
    for (bool peer : {true, false}) {
      Topology t = bundled(name);
      P2pOptions p2p;
      p2p.peer_access = peer;
      RouteOptions options = route_options(p2p);
      std::string xml = simgrid_platform_xml(t, options);
      auto links = links_of(xml);
      std::regex use(R"re(<link_ctn id="([^"]+)")re");
      for (int s = 0; s < t.gpu_count(); ++s)
        for (int d = 0; d < t.gpu_count(); ++d) {
          if (s == d) continue;
          std::string body = route_of(xml, t.device(t.gpu(s)).id, t.device(t.gpu(d)).id);
          REQUIRE(!body.empty());
          double latency_s = 0;
          double narrowest_Bps = std::numeric_limits<double>::infinity();
          for (auto it = std::sregex_iterator(body.begin(), body.end(), use); it != std::sregex_iterator(); ++it) {
            REQUIRE(links.count((*it)[1]) == 1);
            latency_s += links[(*it)[1]].latency_s;
            narrowest_Bps = std::min(narrowest_Bps, links[(*it)[1]].bandwidth_Bps);
          }
          Path path = find_route(t, s, d, options).path;
          INFO(name << " " << s << " -> " << d << (peer ? "" : " (no p2p)"));
          CHECK(latency_s == Approx(path_latency_s(t, path)).epsilon(1e-12));
          CHECK(narrowest_Bps == Approx(path_bandwidth_Bps(t, path, options.mode)).epsilon(1e-12));
        }
    }
}

TEST_CASE("export: a DGX-2 plane bundle is one link, in both directions of the pair") {
  Topology t = bundled("dgx2");
  RouteOptions options = route_options(P2pOptions{});
  ResourceTable table(t, options.mode);
  Route there = find_route(t, 0, 9, options);
  Route back = find_route(t, 9, 0, options);
  auto first_link = [&](const Route& r) {
    for (const Hop& hop : r.path.hops)
      if (hop.kind == Hop::Kind::link) return *table.use(hop);
    FAIL("no link hop");
    return ResourceUse{};
  };
  ResourceUse out = first_link(there);
  const Resource& bundle = table.resources()[out.resource];
  CHECK(bundle.links.size() == 6);  // a V100's six NVLinks, one to each of the baseboard's six NVSwitches
  CHECK(bundle.sharing == Resource::Sharing::split_duplex);
  // 9 -> 0 ends on the same bundle of GPU0's links, in the other direction.
  const Hop* last = nullptr;
  for (const Hop& hop : back.path.hops)
    if (hop.kind == Hop::Kind::link) last = &hop;
  REQUIRE(last != nullptr);
  ResourceUse in = *table.use(*last);
  CHECK(in.resource == out.resource);
  CHECK(in.up != out.up);
}

TEST_CASE("export: hosts of a cluster are named after their devices") {
  Topology t = replicated("dgx1-v100", 2);
  std::string xml = simgrid_platform_xml(t, route_options(P2pOptions{}));
  CHECK(xml.find("<host id=\"n1.gpu7\"") != std::string::npos);
  CHECK(!route_of(xml, "n0.gpu0", "n1.gpu7").empty());
}
