// Sanitizer builds (TRAINSIM_SANITIZE) of the programs that start Open MPI
// (trainsim's sweep ranks, trainsim-train): what LeakSanitizer leaves out, and
// why (docs/testing.md). Open MPI keeps allocations of its components until the
// process exits. Those components are dlopen'ed, built without frame pointers,
// and unloaded before the leak check, so the fast unwinder stops inside them
// and the report names no library. The slower unwinder (fast_unwind_on_malloc=0,
// about six times the CPU, so only in processes that start MPI) walks on to the
// Open MPI library (or the event loop of its progress thread) that called them,
// and the suppressions below match it by name.
// Third-party code only: a leak of our own code still fails.
//
// The program's main file defines the sanitizer's hooks with these:
//   extern "C" const char* __asan_default_options() { return kSlowUnwindOptions; }
//   extern "C" const char* __lsan_default_suppressions() { return kOpenMpiLeakSuppressions; }
//   extern "C" const char* __lsan_default_options() { return kLeakOptions; }
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace trainsim {

inline constexpr char kSlowUnwindOptions[] = "fast_unwind_on_malloc=0";
// No table of the suppressions used at exit: the programs' stderr stays theirs.
inline constexpr char kLeakOptions[] = "print_suppressions=0";
inline constexpr char kOpenMpiLeakSuppressions[] =
    "leak:libmpi.so\n"
    "leak:libopen-pal.so\n"
    "leak:libopen-rte.so\n"
    "leak:libhwloc.so\n"
    "leak:libevent_core\n";  // Open MPI's progress thread runs its event loop

// Whether this process started with `name` set in its environment. The sanitizer
// asks for its options before the C library has set up getenv (which then finds
// nothing), so this reads /proc/self/environ (NAME=VALUE entries, each ending in
// NUL) with raw system calls, uninstrumented: neither the sanitizer's read() nor its
// shadow memory for this stack frame is ready yet.
__attribute__((no_sanitize_address, no_sanitize_undefined, noinline)) inline bool
StartedWithVariable(const char* name) {
  const int fd =
      static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  bool found = false, alive = true;  // alive: the entry so far matches `name`
  int at = 0;                        // bytes of the entry matched
  char buf[4096];
  for (ssize_t n; !found && (n = syscall(SYS_read, fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < n && !found; ++i) {
      const char c = buf[i];
      if (c == '\0') {
        alive = true, at = 0;
      } else if (alive && name[at] != '\0' && c == name[at]) {
        ++at;
      } else {
        found = alive && name[at] == '\0' && c == '=';
        alive = false;
      }
    }
  }
  syscall(SYS_close, fd);
  return found;
}

}  // namespace trainsim
