#pragma once
// Work items in child processes, `jobs` at a time. SimGrid keeps one engine per process (engine/)
// and never frees a platform, so simulations cannot share a process's threads, and hundreds of
// them in one process would hold every platform; a forked child gets the parent's memory
// (topology, catalog) copy-on-write and sends back bytes. Used by validation and calibration
// (validate/isolated.hpp) and by `plan --jobs`.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace topsim {

/// The CPUs this process may run on (its affinity mask, as nproc counts them); at least 1.
int usable_cpus();

/// Runs work(i) for every i in `items`, each in a forked child of its own (so SimGrid's platforms,
/// never freed, leave the parent's memory flat), at most `jobs` (>= 1) at once, and returns what
/// each returned, in the order of `items`; the answers do not depend on `jobs`. An exception
/// in a child is rethrown here, after the running children finish: UsageError and InputError keep
/// their type and message (exit 2), others become std::runtime_error. A child that dies without an
/// answer (a crash, a signal) is std::runtime_error naming the item.
std::vector<std::string> run_in_processes(const std::vector<std::size_t>& items, int jobs,
                                          const std::function<std::string(std::size_t)>& work);

/// A double as text that reads back to the same bits ("%a").
std::string exact_text(double value);

}  // namespace topsim
