#include "sim/isolate.h"

#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <simgrid/s4u.hpp>

namespace trainsim::sim {
namespace {

// The child writes frames: a type byte, the payload's length (4 bytes, host
// order: both ends are one program) and the payload. 'p': a progress report,
// "done total what"; 'r': the reply, one status byte ('0' ok, '1' error) then
// the text, always last.
int progress_fd = -1;  // in the child, when the parent wants progress

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

std::string Frame(char type, const std::string& payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string out(1, type);
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  return out + payload;
}

[[noreturn]] void ChildMain(int fd, const std::function<std::string()>& body, bool progress) {
  if (progress) progress_fd = fd;
  std::string reply;
  try {
    char arg0[] = "trainsim";
    char arg1[] = "--log=root.thres:critical";
#ifdef TRAINSIM_SANITIZE
    // AddressSanitizer does not follow SimGrid's own stack switching: actors on threads.
    char arg2[] = "--cfg=contexts/factory:thread";
    char* argv[] = {arg0, arg1, arg2, nullptr};
    int argc = 3;
#else
    char* argv[] = {arg0, arg1, nullptr};
    int argc = 2;
#endif
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
  progress_fd = -1;
  bool ok = WriteAll(fd, Frame('r', reply));
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

// Takes the complete frames off the front of `buffer`: progress to
// `on_progress`, the reply into *reply.
void TakeFrames(std::string* buffer, const ProgressFn& on_progress, std::string* reply) {
  constexpr std::size_t kHead = 1 + sizeof(uint32_t);
  std::size_t at = 0;
  while (buffer->size() - at >= kHead) {
    uint32_t n = 0;
    std::memcpy(&n, buffer->data() + at + 1, sizeof n);
    if (buffer->size() - at - kHead < n) break;
    const char type = (*buffer)[at];
    std::string payload = buffer->substr(at + kHead, n);
    at += kHead + n;
    if (type == 'r') {
      *reply = std::move(payload);
    } else if (type == 'p' && on_progress) {
      Progress p;
      int used = 0;
      if (std::sscanf(payload.c_str(), "%d %d %n", &p.done, &p.total, &used) >= 2) {
        p.what = payload.substr(static_cast<std::size_t>(used));
        on_progress(p);
      }
    }
  }
  buffer->erase(0, at);
}

}  // namespace

void ReportProgress(const Progress& p) {
  if (progress_fd < 0) return;
  WriteAll(progress_fd,
           Frame('p', std::to_string(p.done) + " " + std::to_string(p.total) + " " + p.what));
}

Expected<std::string> RunIsolated(const std::function<std::string()>& body,
                                  const std::atomic<bool>* cancel, const ProgressFn& on_progress) {
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
    ChildMain(out, body, static_cast<bool>(on_progress));
  }
  close(fds[1]);
  std::string reply, buffer;
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
    buffer.append(buf, static_cast<std::size_t>(n));
    TakeFrames(&buffer, on_progress, &reply);
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

int SimulationThreads(int requested) {
#ifdef TRAINSIM_SANITIZE
  (void)requested;
  return 1;
#else
  return requested > 1 ? requested : 1;
#endif
}

}  // namespace trainsim::sim
