#pragma once
// Collective requests for the engine's equivalence tests (identical-constraint reduction and
// one op per class of identical work), which run the same grid of operations and sizes.
#include <initializer_list>
#include <optional>
#include <vector>

#include "collectives/communicator.hpp"

namespace topsim::test {

/// One request per operation and size, in that order; `algo` forced when given.
inline std::vector<CollRequest> requests_of(std::initializer_list<CollOp> ops, std::initializer_list<double> sizes_B,
                                            std::optional<Algo> algo = std::nullopt) {
  std::vector<CollRequest> out;
  for (CollOp op : ops)
    for (double size : sizes_B) {
      CollRequest r;
      r.op = op;
      r.size_B = size;
      r.algo = algo;
      out.push_back(r);
    }
  return out;
}

}  // namespace topsim::test
