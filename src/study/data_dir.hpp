#pragma once
// Where topsim finds its bundled data (models/, topologies/, scenarios/). Looked for in this
// order, the first that applies wins (docs/install.md):
//   1. the TOPSIM_DATA_DIR environment variable, taken as given;
//   2. the prefix the running binary is installed in: <its folder>/<install_relative>, e.g.
//      /usr/bin/../share/topsim for the .deb, found from the binary's own path so that a moved
//      prefix still works;
//   3. the source tree the binary was built from (a binary in build/ reads the checkout).
// --models DIR replaces the models folder alone, whichever data folder is used.
#include <string>

namespace topsim {

/// The places looked at; an empty field is skipped.
struct DataDirSearch {
  std::string env;               ///< TOPSIM_DATA_DIR's value ("" when unset)
  std::string executable;        ///< the running binary's resolved path ("" when unknown)
  std::string install_relative;  ///< from the binary's folder to the installed data ("../share/topsim")
  std::string source_tree;       ///< the checkout the binary was built from
};

struct DataDir {
  std::string path;    ///< empty when none was found
  std::string origin;  ///< "TOPSIM_DATA_DIR", "install prefix" or "source tree"
  std::string tried;   ///< when none was found: why each place did not serve
};

/// The first place of `search` that serves: TOPSIM_DATA_DIR when set (InputError naming it when
/// it is no directory: an explicit choice never falls through to another folder), else the
/// install prefix or the source tree, whichever first holds a models/ folder.
DataDir find_data_dir(const DataDirSearch& search);

}  // namespace topsim
