// Runs a SimGrid simulation in a child process.
//
// SimGrid's engine is a process-wide singleton that cannot be rebuilt, while
// the planner, the GUI and the tests simulate many clusters in one process.
// RunIsolated forks; the child creates the engine, runs `body` and sends back
// the string it returns (a serialized result); the parent waits for it. A
// crash or exception in the child becomes an Internal status, not a crash of
// the caller. A `cancel` flag raised from another thread (looked at every
// 100 ms) kills the child and gives Status::Cancelled("simulation
// cancelled"). The body may report its progress (ReportProgress); the parent
// hands each report to `on_progress` as it arrives, on the calling thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/status.h"

namespace trainsim::sim {

struct Progress {
  int done = 0, total = 0;  // units of work
  std::string what;         // what is being done now
};
using ProgressFn = std::function<void(const Progress&)>;

Expected<std::string> RunIsolated(const std::function<std::string()>& body,
                                  const std::atomic<bool>* cancel = nullptr,
                                  const ProgressFn& on_progress = {});

// How many threads may run RunIsolated at once: `requested` (at least 1), but 1 in a sanitizer
// build: a child forked while another thread holds AddressSanitizer's allocator lock would wait
// for it forever (GCC 12's libsanitizer has no fork handler for it; docs/testing.md).
int SimulationThreads(int requested);

// Inside RunIsolated's body: sends `p` to the parent's on_progress (nothing
// when it has none, or outside a body).
void ReportProgress(const Progress& p);

}  // namespace trainsim::sim
