#include "validate/isolated.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "util/error.hpp"
#include "util/text.hpp"

namespace topsim {

namespace {

// Fields are tab-separated, records newline-separated: both are escaped inside fields.
std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

std::string hex(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", value);
  return buffer;
}

std::string serialize(const std::vector<ValidationResult>& results) {
  std::string out;
  for (const ValidationResult& r : results) {
    std::vector<std::string> things(r.things.begin(), r.things.end());
    out += "R\t" + std::string(r.evaluated ? "1" : "0") + "\t" + hex(r.predicted) + "\t" + escape(r.quantity) + "\t" +
           escape(r.detail) + "\t" + escape(join(things, ",")) + "\n";
  }
  return out;
}

std::string serialize_error(const char* kind, const std::string& file, const std::string& pointer,
                            const std::string& message) {
  return std::string("E\t") + kind + "\t" + escape(file) + "\t" + escape(pointer) + "\t" + escape(message) + "\n";
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void run_child(int fd, const std::function<std::vector<ValidationResult>()>& body) {
  std::string out;
  try {
    out = serialize(body());
  } catch (const InputError& e) {
    out = serialize_error("input", e.file(), e.pointer(), e.message());
  } catch (const UsageError& e) {
    out = serialize_error("usage", "", "", e.what());
  } catch (const std::exception& e) {
    out = serialize_error("internal", "", "", e.what());
  }
  write_all(fd, out);
  ::close(fd);
  // _exit, not exit: the child must not run the parent's atexit handlers or flush its buffers.
  ::_exit(0);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::size_t index = 0;
};

Child start_child(const ChildPrediction& asked, std::size_t index) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], asked.body);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], index};
}

// Reads what is there; false at end of file.
bool read_some(int fd, std::string& text) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.append(buffer, static_cast<std::size_t>(n));
    return true;
  }
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::vector<ValidationResult> parse_child(const std::vector<ValidationRow>& rows, const std::string& text, int status) {
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("a prediction's child process ended abnormally (status " + std::to_string(status) + ")");
  std::vector<ValidationResult> results;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f = split(line, '\t');
    if (f.size() == 5 && f[0] == "E") {
      std::string message = unescape(f[4]);
      if (f[1] == "input") throw InputError(unescape(f[2]), unescape(f[3]), message);
      if (f[1] == "usage") throw UsageError(message);
      throw std::runtime_error(message);
    }
    if (f.size() != 6 || f[0] != "R" || results.size() >= rows.size())
      throw std::runtime_error("a prediction's child process wrote an unexpected line: " + line);
    ValidationResult r;
    r.row = rows[results.size()];
    r.evaluated = f[1] == "1";
    r.predicted = std::strtod(f[2].c_str(), nullptr);
    r.error = (r.predicted - r.row.measured()) / r.row.measured();
    r.quantity = unescape(f[3]);
    r.detail = unescape(f[4]);
    for (const std::string& thing : split(unescape(f[5]), ','))
      if (!thing.empty()) r.things.insert(thing);
    results.push_back(r);
  }
  if (results.size() != rows.size())
    throw std::runtime_error("a prediction's child process returned " + std::to_string(results.size()) + " of " +
                             std::to_string(rows.size()) + " rows");
  return results;
}

}  // namespace

std::vector<std::vector<ValidationResult>> evaluate_in_children(const std::vector<ChildPrediction>& asked, int parallel) {
  std::vector<std::string> texts(asked.size());
  std::vector<int> statuses(asked.size(), 0);
  std::vector<Child> running;
  std::size_t next = 0;
  try {
    while (next < asked.size() || !running.empty()) {
      while (next < asked.size() && static_cast<int>(running.size()) < std::max(parallel, 1)) {
        running.push_back(start_child(asked[next], next));
        ++next;
      }
      // Every running child's pipe is drained as it writes, so none blocks on a full pipe.
      std::vector<pollfd> polled;
      for (const Child& c : running) polled.push_back(pollfd{c.fd, POLLIN, 0});
      if (::poll(polled.data(), polled.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      std::vector<Child> still;
      for (std::size_t i = 0; i < running.size(); ++i) {
        Child& c = running[i];
        if (polled[i].revents != 0 && !read_some(c.fd, texts[c.index])) {
          ::close(c.fd);
          statuses[c.index] = wait_for(c.pid);
          continue;
        }
        still.push_back(c);
      }
      running.swap(still);
    }
  } catch (...) {
    for (const Child& c : running) {
      ::kill(c.pid, SIGKILL);
      ::close(c.fd);
      wait_for(c.pid);
    }
    throw;
  }
  std::vector<std::vector<ValidationResult>> results;
  for (std::size_t i = 0; i < asked.size(); ++i) results.push_back(parse_child(*asked[i].rows, texts[i], statuses[i]));
  return results;
}

std::vector<ValidationResult> evaluate_in_child(const std::vector<ValidationRow>& rows,
                                                const std::function<std::vector<ValidationResult>()>& body) {
  return evaluate_in_children({ChildPrediction{&rows, body}}, 1).front();
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

}  // namespace topsim
