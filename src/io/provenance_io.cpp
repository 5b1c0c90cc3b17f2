#include "io/provenance_io.hpp"

#include "util/text.hpp"

namespace topsim {

const char* to_string(Provenance::Kind kind) {
  switch (kind) {
    case Provenance::Kind::cited: return "cited";
    case Provenance::Kind::assumed: return "assumed";
    case Provenance::Kind::fitted: return "fitted";
    case Provenance::Kind::carried: return "carried";
  }
  return "?";
}

namespace {

std::vector<std::string> read_ids(ObjectReader& r, const std::string& key) {
  return read_array(r, key, [](const Json& v, const SourceRef& at) { return read_string(v, at); });
}

// A prior is written like the parameter itself: a number, or a quantity string with its unit.
double read_prior(ObjectReader& r) {
  const Json& value = r.required("prior");
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    std::size_t used = 0;
    try {
      double number = std::stod(text, &used);
      if (used > 0) return number;
    } catch (const std::exception&) {
    }
  }
  fail(r.at("prior"), "expected the prior value written like the parameter (a number, or a number with its unit), got " +
                          describe(value));
}

}  // namespace

Provenance read_provenance(const Json& value, const SourceRef& where) {
  Provenance p;
  if (value.is_string()) {
    p.text = value.get<std::string>();
    if (p.text.empty()) fail(where, "a source must say something");
    return p;
  }
  if (!value.is_object())
    fail(where, "expected a citation (a string) or a provenance object ({\"assumed\": ...}, {\"fitted\": ...} or "
                "{\"carried_from\": ...}), got " + describe(value));
  ObjectReader r(value, where);
  if (r.has("assumed")) {
    p.kind = Provenance::Kind::assumed;
    p.text = r.string("assumed");
  } else if (r.has("fitted")) {
    p.kind = Provenance::Kind::fitted;
    p.text = r.string("fitted");
    p.prior = read_prior(r);
    p.prior_source = r.string("prior_source");
    if (r.has("solved_from")) p.solved_from = read_ids(r, "solved_from");
    if (auto method = r.optional_string("method")) {
      p.method = *method;
      if (p.method != "exact" && p.method != "least_squares")
        fail(r.at("method"), unknown_name_message("method", p.method, {"exact", "least_squares"}));
    }
    p.residual = r.optional_number("residual", 0, 1e6, false);
  } else if (r.has("carried_from")) {
    p.kind = Provenance::Kind::carried;
    p.carried_from = r.string("carried_from");
    p.backed_by = read_ids(r, "backed_by");
    if (p.backed_by.empty())
      fail(r.at("backed_by"), "a constant carried from another model needs check rows on its own hardware that back it");
    p.text = r.string("why");
  } else {
    fail(where, "a provenance object needs \"assumed\", \"fitted\" or \"carried_from\"");
  }
  r.finish();
  return p;
}

std::string provenance_text(const Provenance& p) {
  switch (p.kind) {
    case Provenance::Kind::cited: return p.text;
    case Provenance::Kind::assumed: return "assumed: " + p.text;
    case Provenance::Kind::fitted:
      return "fitted: " + p.text + (p.solved_from.empty() ? "" : " (solved from " + join(p.solved_from, ", ") + ")");
    case Provenance::Kind::carried:
      return "carried from " + p.carried_from + ", backed by " + join(p.backed_by, ", ") + ": " + p.text;
  }
  return p.text;
}

}  // namespace topsim
