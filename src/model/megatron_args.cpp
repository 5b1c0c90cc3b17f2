#include "model/megatron_args.hpp"

namespace topsim {

const MegatronRejection& MegatronArgumentTable::rejection(const std::string& key) const {
  auto it = rejections.find(key);
  if (it == rejections.end()) fail(where.at("rejections"), "no rejection '" + key + "' (topsim's code names it)");
  return it->second;
}

const MegatronArgument& MegatronArgumentTable::argument(const std::string& name) const {
  auto it = accepted.find(name);
  if (it == accepted.end()) fail(where.at("accepted"), "no argument '" + name + "' (topsim's code reads it)");
  return it->second;
}

}  // namespace topsim
