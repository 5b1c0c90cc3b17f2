#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace topsim {

/// Per parameter path of a model, where its value comes from (a citation or a provenance text).
using Sources = std::map<std::string, std::string>;

/// Where a piece of input came from: the file and the JSON pointer inside it, so that errors
/// found after parsing (a dangling reference, a port count) still name the exact place.
struct SourceRef {
  SourceRef() = default;
  SourceRef(std::string file_path, std::string json_pointer,
            std::shared_ptr<std::vector<std::string>> notes = nullptr)
      : file(std::move(file_path)), pointer(std::move(json_pointer)), user_notes(std::move(notes)) {}

  std::string file;
  std::string pointer;
  /// Set (and shared by every place inside the file) only for a user's own models: a --models
  /// DIR or a model file given by path. There a model's "description" and "sources" are
  /// optional, and what is not cited is written here as a note instead of failing. Null for the
  /// bundled data, where every number must cite its source.
  std::shared_ptr<std::vector<std::string>> user_notes;

  SourceRef at(const std::string& key) const;   ///< pointer of a member (escaped per RFC 6901)
  SourceRef at(std::size_t index) const;        ///< pointer of an array element
};

/// Throws InputError at `where`.
[[noreturn]] void fail(const SourceRef& where, const std::string& message);

}  // namespace topsim
