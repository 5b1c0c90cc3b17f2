#pragma once
// One Chakra node as topsim replays it: its kind, cost, collective or point-to-point parameters
// and dependencies, checked against what topsim can honour. Internal to src/interop/chakra.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interop/chakra/chakra.hpp"
#include "interop/chakra/et_stream.hpp"

namespace topsim {

struct ChakraNode {
  enum class Kind {
    host,        ///< is_cpu_op: a host-side op, its recorded duration on the rank's host stream
    compute,     ///< COMP_NODE on the GPU
    collective,  ///< COMM_COLL_NODE on the GPU
    send,        ///< COMM_SEND_NODE
    recv,        ///< COMM_RECV_NODE
  };
  std::uint64_t id = 0;
  std::string name;
  Kind kind = Kind::compute;
  double duration_s = 0;                ///< duration_micros
  std::optional<double> flops, bytes_B; ///< num_ops, tensor_size
  std::string op;                       ///< collective: nccl-tests name
  std::string pg;                       ///< collective: pg_name ("" for every rank)
  double size_B = 0;                    ///< comm_size
  int peer = -1;                        ///< send: comm_dst; recv: comm_src
  long long tag = 0;                    ///< comm_tag
  std::vector<std::size_t> deps;        ///< indices of the nodes it waits for, in this file
  std::size_t offset = 0;               ///< byte offset in the file
};

/// The nodes of one file, checked (types, attributes, dependencies present, no cycle), and a
/// topological order of them (ties in file order). `ranks` is how many ranks the trace has.
struct ChakraRankFile {
  std::string path;
  std::vector<ChakraNode> nodes;
  std::vector<std::size_t> order;
};
ChakraRankFile parse_rank_file(const EtFile& file, const ChakraReadOptions& options, int ranks);

/// "node 42" (and its name when it has one), the place an InputError names.
std::string node_place(const ChakraNode& node);

}  // namespace topsim
