#include "util/processes.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "util/bytes.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"

namespace topsim {

namespace {

// A child's answer: one kind byte, then the payload (the work's bytes or an error's fields).
enum class Answer : char { ok = 'o', usage = 'u', input = 'i', other = 'x' };

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::size_t slot = 0;  // position in the hand-out order
  std::string bytes;
};

[[noreturn]] void child_main(int fd, std::size_t item, const std::function<std::string(std::size_t)>& work) {
  std::string answer;
  try {
    answer = static_cast<char>(Answer::ok) + work(item);
  } catch (const InputError& e) {
    ByteWriter fields;
    for (const std::string* f : {&e.file(), &e.pointer(), &e.message()}) fields.put(*f);
    answer = static_cast<char>(Answer::input) + fields.take();
  } catch (const UsageError& e) {
    answer = static_cast<char>(Answer::usage) + std::string(e.what());
  } catch (const std::exception& e) {
    answer = static_cast<char>(Answer::other) + std::string(e.what());
  }
  const bool sent = write_all(fd, answer);
  ::close(fd);
  // A forked child must not run the parent's exit path (atexit handlers, static destructors,
  // SimGrid's engine teardown, stdio buffers it inherited): _exit is the one way out.
  ::_exit(sent ? 0 : 1);
}

}  // namespace

std::string exact_text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", value);
  return buffer;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

double physical_memory_B() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page_B = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_B > 0 ? static_cast<double>(pages) * static_cast<double>(page_B) : 0.0;
}

namespace {

void stop_all(std::vector<Child>& running) {
  for (const Child& c : running) {
    ::kill(c.pid, SIGKILL);
    ::close(c.fd);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

[[noreturn]] void rethrow(const std::string& a) {
  const std::string body = a.substr(1);
  switch (static_cast<Answer>(a.front())) {
    case Answer::input: {
      ByteReader fields(body, "an InputError from a child process, damaged");
      const auto file = fields.get<std::string>(), pointer = fields.get<std::string>(), message = fields.get<std::string>();
      throw InputError(file, pointer, message);
    }
    case Answer::usage: throw UsageError(body);
    default: throw std::runtime_error(body);
  }
}

}  // namespace

void run_queue(const std::function<std::optional<std::size_t>()>& next, int jobs,
               const std::function<std::string(std::size_t)>& work,
               const std::function<bool(std::size_t, std::string&&)>& take, Progress* progress) {
  jobs = std::max(jobs, 1);
  std::vector<std::size_t> handed;                  // items, in the order next() gave them
  std::vector<std::optional<std::string>> answers;  // by position: the child's whole answer
  std::vector<Child> running;
  std::size_t delivered = 0;
  bool more = true;
  bool failed = false;  // an answer is an error: launch nothing more
  auto start = [&](std::size_t slot) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(nullptr);  // what the parent buffered is written once, not once per child
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(pipe_fds[0]);
      for (const Child& c : running) ::close(c.fd);
      child_main(pipe_fds[1], handed[slot], work);
    }
    ::close(pipe_fds[1]);
    running.push_back({pid, pipe_fds[0], slot, {}});
  };
  try {
    while (true) {
      // Answers in hand-out order: an early one waits for those before it, and the first
      // failure in that order is the one a serial run would have met.
      while (delivered < answers.size() && answers[delivered]) {
        std::string& a = *answers[delivered];
        if (a.front() != static_cast<char>(Answer::ok)) {
          stop_all(running);
          rethrow(a);
        }
        const bool again = take(handed[delivered], a.substr(1));
        answers[delivered].reset();
        ++delivered;
        if (!again) {
          stop_all(running);
          return;
        }
      }
      while (more && !failed && static_cast<int>(running.size()) < jobs) {
        std::optional<std::size_t> item = next();
        if (!item) {
          more = false;
          break;
        }
        handed.push_back(*item);
        answers.emplace_back();
        start(handed.size() - 1);
      }
      if (running.empty()) return;
      std::vector<pollfd> fds;
      for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
      // With a progress line that can be drawn, wake every 250 ms to redraw its elapsed time.
      const bool ticking = progress != nullptr && progress->active();
      const int ready = ::poll(fds.data(), fds.size(), ticking ? 250 : -1);
      if (ready < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      if (progress != nullptr) progress->refresh();
      for (std::size_t k = running.size(); k-- > 0;) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Child& c = running[k];
        char buffer[1 << 16];
        ssize_t n = ::read(c.fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          c.bytes.append(buffer, static_cast<std::size_t>(n));
          continue;
        }
        ::close(c.fd);
        int status = 0;
        while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
        const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !c.bytes.empty();
        answers[c.slot] = clean ? std::move(c.bytes)
                                : std::string(1, static_cast<char>(Answer::other)) + "the child process for item " +
                                      std::to_string(handed[c.slot]) + " ended abnormally (status " +
                                      std::to_string(status) + ") without an answer";
        failed = failed || answers[c.slot]->front() != static_cast<char>(Answer::ok);
        running.erase(running.begin() + static_cast<long>(k));
      }
    }
  } catch (...) {
    stop_all(running);
    throw;
  }
}

std::vector<std::string> run_in_processes(const std::vector<std::size_t>& items, int jobs,
                                          const std::function<std::string(std::size_t)>& work, Progress* progress) {
  std::vector<std::string> out(items.size());
  std::size_t given = 0, taken = 0;
  run_queue([&]() -> std::optional<std::size_t> { return given < items.size() ? std::optional(items[given++]) : std::nullopt; },
            jobs, work, [&](std::size_t, std::string&& answer) {
              out[taken++] = std::move(answer);
              if (progress != nullptr) progress->update(taken, items.size());
              return true;
            },
            progress);
  return out;
}

}  // namespace topsim
