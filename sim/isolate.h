// Runs a SimGrid simulation in a child process.
//
// SimGrid's engine is a process-wide singleton that cannot be rebuilt, while
// the planner, the GUI and the tests simulate many clusters in one process.
// RunIsolated forks; the child creates the engine, runs `body` and sends back
// the string it returns (a serialized result); the parent waits for it. A
// crash or exception in the child becomes an Internal status, not a crash of
// the caller. A `cancel` flag raised from another thread (looked at every
// 100 ms) kills the child and gives Status::Cancelled("simulation
// cancelled").
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/status.h"

namespace trainsim::sim {

Expected<std::string> RunIsolated(const std::function<std::string()>& body,
                                  const std::atomic<bool>* cancel = nullptr);

}  // namespace trainsim::sim
