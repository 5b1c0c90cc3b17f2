#include <cmath>
#include <fstream>
#include <sstream>

#include "io/io.hpp"
#include "io/json_reader.hpp"
#include "util/error.hpp"

namespace topsim {

namespace {

constexpr const char* kDescription =
    "Per-class accuracy of the simulation on the check rows of scenarios/validation/*.json, cross-validated, in the "
    "developers' guide's metric (geo-mean of 1+|error|, minus 1, in percent), with NCCL's own tuner estimate on the rows "
    "it estimates. A class is GPU generation / server kind / network / quantity for collectives, generation / quantity "
    "otherwise. `topsim validate --cross --ratchet tests/accuracy-ratchet.json` fails when a class's geomean_pct grows "
    "by more than 1 point, when a class with 10 or more NCCL-estimated rows falls behind NCCL's estimate, or when a class "
    "appears or disappears. Written by `topsim validate --cross --write-ratchet FILE`; raising an entry is a commit of its "
    "own that says why.";

}  // namespace

AccuracyRatchet load_accuracy_ratchet(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot read the accuracy ratchet file");
  std::stringstream text;
  text << in.rdbuf();
  Json root = parse_json_text(text.str(), path);
  if (!root.is_object()) fail(SourceRef(path, ""), "expected an object with \"description\" and \"classes\", got " + describe(root));
  ObjectReader r(root, SourceRef(path, ""));
  r.string("description");
  AccuracyRatchet ratchet;
  ratchet.classes = read_array(r, "classes", [](const Json& v, const SourceRef& at) {
    if (!v.is_object()) fail(at, "expected an object, got " + describe(v));
    ObjectReader c(v, at);
    RatchetEntry e;
    e.where = at;
    e.accuracy_class = c.string("class");
    e.rows = c.integer("rows", 1, 1 << 30);
    e.geomean_pct = c.number("geomean_pct", 0, 1e9, false);
    e.median_pct = c.number("median_pct", 0, 1e9, false);
    e.worst_pct = c.number("worst_pct", 0, 1e9, false);
    e.nccl_rows = c.integer("nccl_rows", 0, 1 << 30);
    e.nccl_geomean_pct = c.number("nccl_geomean_pct", 0, 1e9, false);
    e.simulated_on_nccl_rows_pct = c.number("simulated_on_nccl_rows_pct", 0, 1e9, false);
    c.finish();
    return e;
  });
  r.finish();
  for (std::size_t i = 1; i < ratchet.classes.size(); ++i)
    if (!(ratchet.classes[i - 1].accuracy_class < ratchet.classes[i].accuracy_class))
      fail(ratchet.classes[i].where.at("class"), "classes must be sorted by name, each once: '" +
                                                     ratchet.classes[i].accuracy_class + "' follows '" +
                                                     ratchet.classes[i - 1].accuracy_class + "'");
  return ratchet;
}

std::string accuracy_ratchet_json(const AccuracyRatchet& ratchet) {
  // Percentages to 0.01 points: the ratchet's tolerance is 1 point, and fewer digits keep the
  // file's diffs readable.
  auto pct = [](double v) { return std::round(v * 100) / 100; };
  nlohmann::ordered_json root;
  root["description"] = kDescription;
  root["classes"] = nlohmann::ordered_json::array();
  for (const RatchetEntry& e : ratchet.classes) {
    nlohmann::ordered_json c;
    c["class"] = e.accuracy_class;
    c["rows"] = e.rows;
    c["geomean_pct"] = pct(e.geomean_pct);
    c["median_pct"] = pct(e.median_pct);
    c["worst_pct"] = pct(e.worst_pct);
    c["nccl_rows"] = e.nccl_rows;
    c["nccl_geomean_pct"] = pct(e.nccl_geomean_pct);
    c["simulated_on_nccl_rows_pct"] = pct(e.simulated_on_nccl_rows_pct);
    root["classes"].push_back(c);
  }
  return root.dump(1) + "\n";
}

}  // namespace topsim
