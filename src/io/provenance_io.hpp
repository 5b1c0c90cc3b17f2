#pragma once
// Internal to io: one entry of a model's "sources" object, as text or as a provenance object.
#include <string>

#include "io/json_reader.hpp"
#include "model/provenance.hpp"

namespace topsim {

/// "text" is a cited fact; {"assumed": text}; {"fitted": text, "prior": value, "prior_source":
/// text, "solved_from": [ids], "method": "exact"|"least_squares", "residual": x};
/// {"carried_from": id, "backed_by": [ids], "why": text}. Unknown keys are errors.
Provenance read_provenance(const Json& value, const SourceRef& where);

/// One line for people: what `sources` used to say as plain text, with the provenance spelled out.
std::string provenance_text(const Provenance& provenance);

}  // namespace topsim
