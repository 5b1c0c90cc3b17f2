#pragma once
// A progress line for long runs (plan, scale, sweep, validate --cross): done/total, what runs,
// elapsed time, rate and time left, redrawn in place with '\r' on a terminal's stderr and
// cleared at the end. Silent for the first `delay_s` (a quick run shows nothing), silent when
// the output is not a terminal (pipes, files, golden tests) or when --quiet asked so. What the
// line draws never reaches stdout.
#include <cstddef>
#include <functional>
#include <string>

namespace topsim {

/// Where the line goes and what time it is: stderr and a steady clock in a command, fakes in tests.
struct ProgressOutput {
  bool terminal = false;                          ///< false: draw nothing at all
  std::function<void(const std::string&)> write;  ///< the bytes of a redraw or of the final clear
  std::function<double()> clock_s;                ///< seconds on a monotonic clock
};

/// stderr when it is a terminal and `quiet` is false (else silent), with std::chrono::steady_clock.
ProgressOutput stderr_progress(bool quiet);

class Progress {
 public:
  /// `label` starts the line ("topsim plan"); `unit` names what is counted ("layouts").
  Progress(std::string label, std::string unit, ProgressOutput output, double delay_s = 2.0);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();  ///< finish()

  /// `done` of `total` items finished (total 0: unknown), `what` the one running now (may be
  /// empty). Draws when `delay_s` has passed since construction and the last draw is at least
  /// 0.2 s old (or done reached total), so that a fast loop does not flood the terminal.
  void update(std::size_t done, std::size_t total, const std::string& what = "");
  /// Draws the last update again if due: the elapsed time moves while one long item runs.
  void refresh();
  /// Clears the line if one was drawn; nothing follows. Called again, does nothing.
  void finish();

  /// Whether anything can still be drawn (a terminal, not --quiet, not finished): waits that
  /// only keep the line's clock moving are pointless otherwise.
  bool active() const { return output_.terminal && !finished_; }

  /// The line as drawn at `now_s` (without '\r' or the erase): for tests and for draw().
  std::string line(double now_s) const;

 private:
  void draw(double now_s);

  std::string label_, unit_, what_;
  ProgressOutput output_;
  double delay_s_;
  double start_s_ = 0;
  double last_draw_s_ = -1;  ///< -1: nothing drawn yet
  std::size_t done_ = 0, total_ = 0;
  bool finished_ = false;
};

}  // namespace topsim
