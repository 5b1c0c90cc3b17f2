#include "interop/chakra/et_stream.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>

#include "util/error.hpp"

namespace topsim {

namespace {

std::string at_byte(std::size_t offset) { return "byte " + std::to_string(offset); }

// A protobuf base-128 varint: 7 bits per byte, low group first, high bit set on all but the
// last byte; at most 10 bytes for 64 bits.
std::uint64_t read_varint(const std::string& bytes, std::size_t& pos, const std::string& path) {
  const std::size_t start = pos;
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes.size())
      throw InputError(path, at_byte(start),
                       "truncated varint: the file ends at byte " + std::to_string(bytes.size()) +
                           " inside a message's length prefix (the file is cut short)");
    const auto b = static_cast<unsigned char>(bytes[pos++]);
    value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return value;
  }
  throw InputError(path, at_byte(start), "malformed varint: a length prefix longer than 10 bytes (not a Chakra ET file?)");
}

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// One length-delimited message: its bytes, or InputError naming where it went wrong.
template <class Message>
void read_message(const std::string& bytes, std::size_t& pos, const std::string& path, Message& message, const char* what) {
  const std::size_t start = pos;
  const std::uint64_t length = read_varint(bytes, pos, path);
  if (length > bytes.size() - pos)
    throw InputError(path, at_byte(start),
                     std::string(what) + " of " + std::to_string(length) + " bytes, but the file has " +
                         std::to_string(bytes.size() - pos) + " left (the file is cut short)");
  if (length > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ||
      !message.ParseFromArray(bytes.data() + pos, static_cast<int>(length)))
    throw InputError(path, at_byte(start), std::string("the ") + what + " of " + std::to_string(length) +
                                               " bytes does not parse as protobuf (a damaged or non-Chakra file)");
  pos += static_cast<std::size_t>(length);
}

}  // namespace

EtFile read_et_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open the Chakra ET file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path, "", "cannot read the Chakra ET file");
  return parse_et_bytes(bytes, path);
}

EtFile parse_et_bytes(const std::string& bytes, const std::string& path) {
  EtFile file;
  file.path = path;
  if (bytes.empty()) throw InputError(path, at_byte(0), "empty file: a Chakra ET file starts with a GlobalMetadata message");
  std::size_t pos = 0;
  read_message(bytes, pos, path, file.metadata, "GlobalMetadata message");
  while (pos < bytes.size()) {
    file.offsets.push_back(pos);
    file.nodes.emplace_back();
    read_message(bytes, pos, path, file.nodes.back(), "Node message");
  }
  return file;
}

void write_et_file(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata,
                   const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::string out;
  auto put = [&out](const auto& message) {
    std::string body;
    message.SerializeToString(&body);
    append_varint(out, body.size());
    out += body;
  };
  put(metadata);
  for (const auto& node : nodes) put(node);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw InputError(path, "", "cannot write the Chakra ET file");
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!file) throw InputError(path, "", "cannot write the Chakra ET file");
}

}  // namespace topsim
