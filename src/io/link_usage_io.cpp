#include <limits>

#include "io/io.hpp"
#include "io/json_reader.hpp"

namespace topsim {

bool is_link_usage_file(const std::string& path) { return file_has_top_key(path, "link_usage"); }

LinkUsage load_link_usage(const std::string& path) {
  Json document = parse_json_text(read_text_file(path), path);
  ObjectReader top(document, SourceRef{path, ""});
  const Json& body = top.required("link_usage");
  top.finish();
  expect_object(body, top.at("link_usage"));
  ObjectReader r(body, top.at("link_usage"));
  const double inf = std::numeric_limits<double>::max();
  LinkUsage u;
  u.source = r.string("source");
  u.duration_s = r.number("duration_s", 0, inf, false);
  u.bin_s = r.number("bin_s", 0, inf, false);
  std::size_t bins = 0;
  u.links = read_array(r, "links", [&](const Json& value, const SourceRef& where) {
    ObjectReader l(value, where);
    LinkLoad load;
    load.link = l.string("link");
    load.capacity_Bps = l.number("capacity_GBps", 0, inf, true) * 1e9;
    load.bytes_B = l.number("bytes_B", 0, inf, false);
    l.number("mean_utilisation", 0, 1, false);  // derived from the bins; read so that it is known
    l.number("peak_utilisation", 0, 1, false);
    const Json& series = l.required("utilisation");
    expect_array(series, l.at("utilisation"));
    for (std::size_t i = 0; i < series.size(); ++i) {
      SourceRef at = l.at("utilisation").at(i);
      if (!series[i].is_number() || series[i].get<double>() < 0 || series[i].get<double>() > 1)
        fail(at, "expected a utilisation in [0, 1], got " + describe(series[i]));
      load.utilisation.push_back(series[i].get<double>());
    }
    if (load.utilisation.empty()) fail(l.at("utilisation"), "expected at least one bin");
    if (bins != 0 && load.utilisation.size() != bins)
      fail(l.at("utilisation"), "expected " + std::to_string(bins) + " bins like the first link, got " +
                                    std::to_string(load.utilisation.size()));
    bins = load.utilisation.size();
    l.finish();
    return load;
  });
  r.finish();
  return u;
}

}  // namespace topsim
