#pragma once
// Megatron-LM's launch arguments as data (models/megatron.json): the arguments topsim reads into a
// transformer and a layout, each with Megatron's default and where it is defined; the rules by
// which Megatron rejects a combination, each with its citation; and the name of every argument
// Megatron's parser defines, so that the rest are noted as not modelled rather than dropped.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/source_ref.hpp"

namespace topsim {

/// One argument topsim reads ("--num-layers").
struct MegatronArgument {
  /// flag: takes no value and sets the opposite of its default (store_true / store_false);
  /// integer and text: take one value.
  enum class Kind { flag, integer, text } kind = Kind::integer;
  /// Megatron's default as it would be parsed from the command line ("1", "delayed", "true");
  /// nullopt where Megatron's default is None.
  std::optional<std::string> default_value;
  std::string meaning;  ///< what it sets in topsim
  std::string source;   ///< file:line@Megatron-LM@commit
};

/// A combination Megatron refuses: its reason (in topsim's words) and where it refuses.
struct MegatronRejection {
  std::string reason;
  std::string source;
};

struct MegatronArgumentTable {
  std::string commit;  ///< the Megatron-LM commit everything is read at (12 hex digits)
  std::map<std::string, MegatronArgument> accepted;
  /// Arguments Megatron defines that change what runs in a way topsim does not model: refused
  /// (exit 2) with the reason, not noted; `source` is where Megatron defines them.
  std::map<std::string, MegatronRejection> refused;
  std::map<std::string, MegatronRejection> rejections;  ///< by a key the code names
  std::vector<std::string> known;                       ///< every name the parser defines, sorted
  SourceRef where;

  bool empty() const { return accepted.empty(); }
  /// The rejection `key`; InputError at `where` when the file has none (a table out of step with
  /// the code).
  const MegatronRejection& rejection(const std::string& key) const;
  /// The argument `name`'s default; InputError at `where` when the table lacks it.
  const MegatronArgument& argument(const std::string& name) const;
};

}  // namespace topsim
