#include "sim/isolate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace

Expected<std::string> RunIsolated(const std::function<std::string()>& body) {
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
    close(fds[0]);
    ChildMain(fds[1], body);
  }
  close(fds[1]);
  std::string reply;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    return Status::Internal("simulation process died with signal " +
                            std::to_string(WTERMSIG(wstatus)));
  }
  if (reply.empty()) return Status::Internal("simulation process exited without a result");
  if (reply[0] != '0') return Status::Internal(reply.substr(1));
  return reply.substr(1);
}

}  // namespace trainsim::sim
