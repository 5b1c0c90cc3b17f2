#pragma once
#include <map>
#include <string>

namespace topsim {

/// Per parameter path of a model, where its value comes from (a citation or a provenance text).
using Sources = std::map<std::string, std::string>;

/// Where a piece of input came from: the file and the JSON pointer inside it, so that errors
/// found after parsing (a dangling reference, a port count) still name the exact place.
struct SourceRef {
  std::string file;
  std::string pointer;

  SourceRef at(const std::string& key) const;   ///< pointer of a member (escaped per RFC 6901)
  SourceRef at(std::size_t index) const;        ///< pointer of an array element
};

/// Throws InputError at `where`.
[[noreturn]] void fail(const SourceRef& where, const std::string& message);

}  // namespace topsim
