#include "export/simgrid_xml.hpp"

#include <sstream>

#include "routing/resources.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Routes of every ordered GPU pair are quadratic in GPUs; the engine refuses pair routes beyond
// the same count, for the same reason.
constexpr int kMaxExportGpus = 4096;

// Rates a host's speed is taken from, in order of preference (keys of a GPU model's math table).
const char* const kSpeedDtypes[] = {"fp32", "tf32_tensor"};

std::string attribute(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

double host_speed_flops_per_s(const Topology& t, int gpu) {
  const GpuModel& model = t.gpu_model(gpu);
  for (const char* dtype : kSpeedDtypes) {
    auto it = model.math.find(dtype);
    if (it != model.math.end() && it->second.dense_flops_per_s > 0) return it->second.dense_flops_per_s;
  }
  throw InputError(t.file(), t.device(t.gpu(gpu)).where.pointer,
                   "GPU model '" + model.name + "' has no dense fp32 or tf32_tensor rate, which a SimGrid host "
                   "needs as its speed");
}

// What a resource stands for, for people reading the file: "gpu0-gpu1 nvlink2 x2".
std::string describe(const Topology& t, const Resource& r) {
  std::vector<std::string> parts;
  for (std::size_t index : r.links) {
    const Link& l = t.link(index);
    parts.push_back(t.device(l.a).id + "-" + t.device(l.b).id + " " + l.model_name + " x" + std::to_string(l.count));
  }
  for (Vertex v : r.devices) parts.push_back(t.device(v).id);
  return std::string(to_string(r.kind)) + ": " + join(parts, ", ");
}

}  // namespace

std::string simgrid_platform_xml(const Topology& topology, const RouteOptions& options) {
  const Topology& t = topology;
  if (t.gpu_count() > kMaxExportGpus)
    throw UsageError("routes between individual GPUs are limited to " + std::to_string(kMaxExportGpus) + " GPUs (" +
                     t.name() + " has " + std::to_string(t.gpu_count()) + ")");
  ResourceTable table(t, options.mode);
  // Routes first: they declare the resources, which the file must list before the routes.
  std::ostringstream routes;
  for (int s = 0; s < t.gpu_count(); ++s)
    for (int d = 0; d < t.gpu_count(); ++d) {
      if (s == d) continue;
      Route route = find_route(t, s, d, options);
      routes << "    <route src=\"" << attribute(t.device(t.gpu(s)).id) << "\" dst=\""
             << attribute(t.device(t.gpu(d)).id) << "\" symmetrical=\"NO\">\n";
      for (const Hop& hop : route.path.hops) {
        auto use = table.use(hop);
        if (!use) continue;
        const Resource& r = table.resources()[use->resource];
        routes << "      <link_ctn id=\"" << attribute(r.name) << "\"";
        if (r.sharing == Resource::Sharing::split_duplex) routes << " direction=\"" << (use->up ? "UP" : "DOWN") << "\"";
        routes << "/>\n";
      }
      routes << "    </route>\n";
    }

  std::ostringstream out;
  out << "<?xml version='1.0'?>\n"
      << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<!-- Written by topsim topo export from " << t.name() << ": GPU-to-GPU copies ("
      << (options.peer_access ? "peer access enabled" : "peer access disabled, staged through host memory")
      << "). Bandwidths are bytes/s, latencies seconds, host speeds flop/s (dense fp32). A copy's fixed software "
         "cost is not in the platform; see docs/export.md. -->\n"
      << "<platform version=\"4.1\">\n"
      << "  <config>\n"
      << "    <prop id=\"network/model\" value=\"CM02\"/>\n"
      << "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
      << "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n"
      << "    <prop id=\"network/weight-S\" value=\"0\"/>\n"
      << "    <prop id=\"network/latency-factor\" value=\"1\"/>\n"
      << "    <prop id=\"network/bandwidth-factor\" value=\"1\"/>\n"
      << "  </config>\n"
      << "  <zone id=\"" << attribute(t.name()) << "\" routing=\"Full\">\n";
  for (int g = 0; g < t.gpu_count(); ++g) {
    const Device& d = t.device(t.gpu(g));
    out << "    <host id=\"" << attribute(d.id) << "\" speed=\"" << shortest(host_speed_flops_per_s(t, g)) << "f\">\n"
        << "      <prop id=\"topsim.gpu\" value=\"" << g << "\"/>\n"
        << "      <prop id=\"topsim.model\" value=\"" << attribute(d.model_name) << "\"/>\n"
        << "    </host>\n";
  }
  for (const Resource& r : table.resources()) {
    out << "    <link id=\"" << attribute(r.name) << "\" bandwidth=\"" << shortest(r.capacity_Bps) << "Bps\" latency=\""
        << shortest(r.latency_s) << "s\" sharing_policy=\""
        << (r.sharing == Resource::Sharing::split_duplex ? "SPLITDUPLEX" : "SHARED") << "\">\n"
        << "      <prop id=\"topsim.what\" value=\"" << attribute(describe(t, r)) << "\"/>\n"
        << "    </link>\n";
  }
  out << routes.str() << "  </zone>\n</platform>\n";
  return out.str();
}

}  // namespace topsim
