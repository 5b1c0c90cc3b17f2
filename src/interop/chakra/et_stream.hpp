#pragma once
// The byte layer of a Chakra ET file: a varint-length-delimited stream of protobuf messages
// (GlobalMetadata first, then Nodes). Internal to src/interop/chakra.
#include <cstddef>
#include <string>
#include <vector>

#include "interop/chakra/et_def.pb.h"

namespace topsim {

struct EtFile {
  std::string path;
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
  std::vector<std::size_t> offsets;  ///< per node: byte offset of its length prefix
};

/// InputError (file, "byte N") for a file that cannot be read, an empty one, a truncated or
/// over-long varint, a length past the end of the file, or a message that does not parse.
EtFile read_et_file(const std::string& path);
/// The same on bytes already read (`path` names them in errors).
EtFile parse_et_bytes(const std::string& bytes, const std::string& path);

/// InputError when the file cannot be written.
void write_et_file(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata,
                   const std::vector<ChakraProtoMsg::Node>& nodes);

}  // namespace topsim
