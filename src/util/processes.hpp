#pragma once
// Work items in child processes, `jobs` at a time. SimGrid keeps one engine per process (engine/)
// and never frees a platform, so simulations cannot share a process's threads, and hundreds of
// them in one process would hold every platform; a forked child gets the parent's memory
// (topology, catalog) copy-on-write and sends back bytes. Used by validation and calibration
// (validate/isolated.hpp) and by `plan --jobs`.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace topsim {

class Progress;

/// The CPUs this process may run on (its affinity mask, as nproc counts them); at least 1.
int usable_cpus();

/// The machine's physical memory in bytes (sysconf), 0 when it cannot tell.
double physical_memory_B();

/// Runs work(i) for every i in `items`, each in a forked child of its own (so SimGrid's platforms,
/// never freed, leave the parent's memory flat), at most `jobs` (>= 1) at once, and returns what
/// each returned, in the order of `items`; the answers do not depend on `jobs`. An exception
/// in a child is rethrown here once every item before it has answered (the one a serial run
/// would meet first): UsageError and InputError keep their type and message (exit 2), others
/// become std::runtime_error. A child that dies without an answer (a crash, a signal) is
/// std::runtime_error naming the item. `progress` (may be null) counts the answers taken.
std::vector<std::string> run_in_processes(const std::vector<std::size_t>& items, int jobs,
                                          const std::function<std::string(std::size_t)>& work,
                                          Progress* progress = nullptr);

/// run_in_processes as a work queue: each time fewer than `jobs` children run, next() gives the
/// next item (nullopt: no more, and it is not asked again). take(item, answer) gets each answer
/// in the order next() gave the items, whichever child finishes first, and returns false when
/// nothing after that item matters: the children still running are then stopped. next() and
/// take() run in this process, so take() may change what next() gives. Errors as above, in
/// hand-out order. `progress` (may be null) is refreshed while children run, so that its elapsed
/// time moves between answers; take() tells it the counts.
void run_queue(const std::function<std::optional<std::size_t>()>& next, int jobs,
               const std::function<std::string(std::size_t)>& work,
               const std::function<bool(std::size_t, std::string&&)>& take, Progress* progress = nullptr);

/// A double as text that reads back to the same bits ("%a").
std::string exact_text(double value);

}  // namespace topsim
