// The progress line (util/progress.hpp) against a fake clock and a fake terminal.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "util/progress.hpp"

using namespace topsim;

namespace progress_test {

// A terminal that records every write, and a clock the test moves by hand (seconds).
struct FakeTerminal {
  std::vector<std::string> writes;
  double now_s = 100;  // any origin: the line counts from the Progress's construction
  ProgressOutput output(bool terminal = true) {
    ProgressOutput o;
    o.terminal = terminal;
    o.write = [this](const std::string& bytes) { writes.push_back(bytes); };
    o.clock_s = [this] { return now_s; };
    return o;
  }
};

}  // namespace progress_test

using progress_test::FakeTerminal;

TEST_CASE("progress: silent for the first 2 s, then one line redrawn with \\r") {
  FakeTerminal t;
  Progress p("topsim plan", "layouts", t.output());
  t.now_s = 101.9;  // 1.9 s in
  p.update(1, 10, "tp 1 pp 1");
  CHECK(t.writes.empty());
  t.now_s = 102.5;  // 2.5 s in, 3 done: 3 / 2.5 = 1.2 per second; 7 left / 1.2 = 5.83 s
  p.update(3, 10, "tp 2 pp 1");
  REQUIRE(t.writes.size() == 1);
  CHECK(t.writes[0] == "\rtopsim plan: 3/10 layouts, 2.5 s, 1.2/s, about 5.8 s left: tp 2 pp 1\x1b[K");
  // 0.1 s later: too soon to redraw (at most every 0.2 s) ...
  t.now_s = 102.6;
  p.update(4, 10);
  CHECK(t.writes.size() == 1);
  // ... unless the count reached the total.
  p.update(10, 10);
  REQUIRE(t.writes.size() == 2);
  CHECK(t.writes[1] == "\rtopsim plan: 10/10 layouts, 2.6 s, 3.8/s\x1b[K");  // 10 / 2.6 = 3.85
  // The end clears the line, once.
  p.finish();
  p.finish();
  REQUIRE(t.writes.size() == 3);
  CHECK(t.writes[2] == "\r\x1b[K");
}

TEST_CASE("progress: refresh moves the elapsed time while one item runs, slow items show time each") {
  FakeTerminal t;
  Progress p("topsim scale", "server counts", t.output());
  t.now_s = 104;  // 4 s in, 1 of 3 done: 4 s each, 2 left x 4 s = 8 s
  p.update(1, 3);
  t.now_s = 104.1;
  p.refresh();  // 0.1 s after the last draw: nothing
  t.now_s = 106;  // 6 s in: 1 / 6 per second, so 6 s each and 2 x 6 = 12 s left
  p.refresh();
  REQUIRE(t.writes.size() == 2);
  CHECK(t.writes[0] == "\rtopsim scale: 1/3 server counts, 4.0 s, 4.0 s each, about 8.0 s left\x1b[K");
  CHECK(t.writes[1] == "\rtopsim scale: 1/3 server counts, 6.0 s, 6.0 s each, about 12.0 s left\x1b[K");
}

TEST_CASE("progress: an unknown total counts alone, long runs in minutes, long lines cut") {
  FakeTerminal t;
  Progress p("topsim validate", "sources left out", t.output());
  p.update(5, 0);
  // 125 s in, 5 done: 5 / 125 = 0.04 per second, 25 s each; 125 s = 2 min 5 s.
  CHECK(p.line(225) == "topsim validate: 5 sources left out, 2 min 5 s, 25.0 s each");
  p.update(5, 0, std::string(200, 'x'));
  CHECK(p.line(225).size() == 100);
  CHECK(p.line(225).substr(97) == "...");
}

TEST_CASE("progress: nothing at all when not a terminal, or when quiet") {
  FakeTerminal t;
  {
    Progress p("topsim sweep", "points", t.output(false));
    t.now_s = 200;  // 100 s in
    p.update(1, 2);
    p.refresh();
    p.update(2, 2);
  }  // the destructor finishes: nothing to clear either
  CHECK(t.writes.empty());
  // --quiet: stderr_progress draws nothing whatever stderr is.
  CHECK_FALSE(stderr_progress(true).terminal);
}

TEST_CASE("progress: a run shorter than 2 s leaves nothing behind, not even a clear") {
  FakeTerminal t;
  {
    Progress p("topsim plan", "layouts", t.output());
    t.now_s = 101;
    p.update(40, 40);
  }
  CHECK(t.writes.empty());
}
