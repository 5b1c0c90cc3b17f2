#include "model/source_ref.hpp"

#include "util/error.hpp"

namespace topsim {

SourceRef SourceRef::at(const std::string& key) const {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return {file, pointer + "/" + escaped, user_notes};
}

SourceRef SourceRef::at(std::size_t index) const { return {file, pointer + "/" + std::to_string(index), user_notes}; }

void fail(const SourceRef& where, const std::string& message) { throw InputError(where.file, where.pointer, message); }

}  // namespace topsim
