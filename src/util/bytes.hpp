#pragma once
// Values as bytes and back, exactly (doubles bit for bit), for a machine talking to itself: a
// child process's answer (util/processes.hpp, plan's LlmResult, scale's rows) and the key of a
// cached computation (collectives/nccl_graph.cpp). Not a file format: no versions, native endianness.
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace topsim {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "ByteWriter: numbers, enums, strings, vectors");
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(const std::string& s) {
    put(s.size());
    out_ += s;
  }
  template <typename T>
  void put(const std::vector<T>& values) {
    put(values.size());
    for (const T& v : values) put(v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

/// Reads what a ByteWriter wrote, in the same order; std::runtime_error(`truncated`) when the
/// bytes run out.
class ByteReader {
 public:
  ByteReader(const std::string& bytes, std::string truncated) : bytes_(bytes), truncated_(std::move(truncated)) {}
  template <typename T>
  void get(T& value) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "ByteReader: numbers, enums, strings, vectors");
    need(sizeof value);
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
  }
  void get(std::string& s) {
    std::size_t n = 0;
    get(n);
    need(n);
    s.assign(bytes_, at_, n);
    at_ += n;
  }
  template <typename T>
  void get(std::vector<T>& values) {
    std::size_t n = 0;
    get(n);
    need(n);  // each element takes at least a byte: a damaged count fails here, not in resize
    values.resize(n);
    for (T& v : values) get(v);
  }
  template <typename T>
  T get() {
    T value{};
    get(value);
    return value;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n) throw std::runtime_error(truncated_);
  }
  const std::string& bytes_;
  std::string truncated_;
  std::size_t at_ = 0;
};

}  // namespace topsim
