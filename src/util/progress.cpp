#include "util/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "util/text.hpp"

namespace topsim {

namespace {

// A terminal line: what does not fit in 100 columns is cut, so that a redraw never wraps (a
// wrapped line is not erased by '\r').
constexpr std::size_t kMaxColumns = 100;
// Between two redraws, in seconds: often enough that the elapsed time moves, rarely enough to
// cost nothing beside a simulation.
constexpr double kRedrawEvery_s = 0.2;
// ANSI "erase to the end of the line": a shorter redraw leaves no tail of the longer one.
const char* const kEraseLine = "\x1b[K";

std::string duration_text(double s) {
  if (s < 60) return fixed(s, 1) + " s";
  const long total = std::lround(s);
  if (total < 3600) return std::to_string(total / 60) + " min " + std::to_string(total % 60) + " s";
  return std::to_string(total / 3600) + " h " + std::to_string(total % 3600 / 60) + " min";
}

}  // namespace

ProgressOutput stderr_progress(bool quiet) {
  ProgressOutput out;
  out.terminal = !quiet && ::isatty(STDERR_FILENO) == 1;
  out.write = [](const std::string& bytes) {
    std::fputs(bytes.c_str(), stderr);
    std::fflush(stderr);
  };
  out.clock_s = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  return out;
}

Progress::Progress(std::string label, std::string unit, ProgressOutput output, double delay_s)
    : label_(std::move(label)), unit_(std::move(unit)), output_(std::move(output)), delay_s_(delay_s) {
  if (output_.terminal) start_s_ = output_.clock_s();
}

Progress::~Progress() { finish(); }

void Progress::update(std::size_t done, std::size_t total, const std::string& what) {
  done_ = done;
  total_ = total;
  what_ = what;
  if (!output_.terminal || finished_) return;
  const double now = output_.clock_s();
  if (now - start_s_ < delay_s_) return;
  if (last_draw_s_ >= 0 && now - last_draw_s_ < kRedrawEvery_s && !(total > 0 && done >= total)) return;
  draw(now);
}

void Progress::refresh() {
  if (!output_.terminal || finished_) return;
  const double now = output_.clock_s();
  if (now - start_s_ < delay_s_ || (last_draw_s_ >= 0 && now - last_draw_s_ < kRedrawEvery_s)) return;
  draw(now);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (output_.terminal && last_draw_s_ >= 0) output_.write(std::string("\r") + kEraseLine);
}

std::string Progress::line(double now_s) const {
  const double elapsed = now_s - start_s_;
  std::string text = label_ + ": " + std::to_string(done_) + (total_ > 0 ? "/" + std::to_string(total_) : "") + " " +
                     unit_ + ", " + duration_text(elapsed);
  if (done_ > 0 && elapsed > 0) {
    const double rate = static_cast<double>(done_) / elapsed;  // items per second
    text += rate >= 1 ? ", " + fixed(rate, 1) + "/s" : ", " + duration_text(1 / rate) + " each";
    if (total_ > done_) text += ", about " + duration_text(static_cast<double>(total_ - done_) / rate) + " left";
  }
  if (!what_.empty()) text += ": " + what_;
  if (text.size() > kMaxColumns) text = text.substr(0, kMaxColumns - 3) + "...";
  return text;
}

void Progress::draw(double now_s) {
  last_draw_s_ = now_s;
  output_.write("\r" + line(now_s) + kEraseLine);
}

}  // namespace topsim
