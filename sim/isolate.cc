#include "sim/isolate.h"

#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <simgrid/s4u.hpp>

namespace trainsim::sim {
namespace {

// The child's reply: one status byte ('0' ok, '1' error) then the text.
bool WriteAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void ChildMain(int fd, const std::function<std::string()>& body) {
  std::string reply;
  try {
    int argc = 2;
    char arg0[] = "trainsim";
    char arg1[] = "--log=root.thres:critical";
    char* argv[] = {arg0, arg1, nullptr};
    simgrid::s4u::Engine engine(&argc, argv);
    // SimGrid's SIGINT handler calls exit() from the handler, which can
    // deadlock in malloc: let Ctrl-C simply end this process.
    signal(SIGINT, SIG_DFL);
    reply = "0" + body();
  } catch (const std::exception& e) {
    reply = std::string("1simulation failed: ") + e.what();
  } catch (...) {
    reply = "1simulation failed with an unknown exception";
  }
  bool ok = WriteAll(fd, reply);
  close(fd);
  _exit(ok ? 0 : 3);
}

// Waits until `fd` has data or is closed: true. With a cancel flag, looks at
// it every 100 ms and returns false once it is raised.
bool WaitReadable(int fd, const std::atomic<bool>* cancel) {
  pollfd p = {fd, POLLIN, 0};
  while (true) {
    if (cancel && cancel->load()) return false;
    const int ready = poll(&p, 1, cancel ? 100 : -1);
    if (ready > 0 || (ready < 0 && errno != EINTR)) return true;
  }
}

}  // namespace

Expected<std::string> RunIsolated(const std::function<std::string()>& body,
                                  const std::atomic<bool>* cancel) {
  int fds[2];
  if (pipe(fds) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Keep only stdio and our pipe: a pipe another thread of the parent made
    // for its own child must not stay open here, or that child's parent would
    // wait for this process too before it sees the end of its reply.
    int out = fds[1];
    if (out != 3) {
      dup2(out, 3);
      out = 3;
    }
    close_range(4, ~0U, 0);
    ChildMain(out, body);
  }
  close(fds[1]);
  std::string reply;
  char buf[1 << 16];
  bool cancelled = false;
  while (true) {
    if (!WaitReadable(fds[0], cancel)) {
      cancelled = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (cancelled) return Status::Cancelled("simulation cancelled");
  if (WIFSIGNALED(wstatus)) {
    return Status::Internal("simulation process died with signal " +
                            std::to_string(WTERMSIG(wstatus)));
  }
  if (reply.empty()) return Status::Internal("simulation process exited without a result");
  if (reply[0] != '0') return Status::Internal(reply.substr(1));
  return reply.substr(1);
}

}  // namespace trainsim::sim
