#include "util/error.hpp"

namespace topsim {

namespace {
std::string locate(const std::string& file, const std::string& pointer, const std::string& message) {
  std::string where = file;
  if (!pointer.empty()) where += (where.empty() ? "" : ":") + pointer;
  return where.empty() ? message : where + ": " + message;
}
}  // namespace

InputError::InputError(std::string file, std::string pointer, std::string message)
    : std::runtime_error(locate(file, pointer, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

}  // namespace topsim
