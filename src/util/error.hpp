#pragma once
// Error types that the CLI maps to exit codes: InputError and UsageError exit 2,
// anything else that escapes exits 1 (an internal error, a bug in topsim).
#include <stdexcept>
#include <string>

namespace topsim {

/// Bad input data: names the file, the JSON pointer (or line) inside it and what would be valid.
/// what() reads "file:pointer: message", the form users grep for and tests check verbatim.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string message);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

/// Bad command line: an unknown option value, an impossible combination of flags.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value that cannot be parsed (a unit, a number); carries only the reason, callers add the place.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A command that ran to the end but must fail through its exit status (validate missing its
/// accuracy target): the CLI prints the command's output, then what() on stderr, and exits code().
class ExitStatus : public std::runtime_error {
 public:
  ExitStatus(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace topsim
