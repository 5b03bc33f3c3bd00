// A trace of the local trainer's steps in the PyTorch profiler's (Kineto's)
// Chrome-trace format (docs/local-run.md section 11), so that `trainsim
// observe` reads it as it reads a real PyTorch job's: every call of the rank's
// Ops as a complete "kernel" event (name, shape), every wait for another rank
// as a "kernel" named mpi_* on its own thread, and every step as a
// "ProfilerStep#N" user annotation. The cpu backend runs its kernels in the
// calling thread, so a call's wall time is the kernel's time.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "launch/local/ops.h"
#include "launch/local/transport.h"

namespace trainsim::local {

class TraceRecorder {
 public:
  TraceRecorder();
  double NowUs() const;  // since the recorder started
  // A complete event from `start_us` to now; `args` a JSON object's text ("{}" for none).
  void Kernel(const char* name, int thread, double start_us, std::string args = "{}");
  void Step(int step, double start_us, double end_us);
  // The trace as Kineto writes it ({"schemaVersion", "traceEvents": [...]}), rank `pid`.
  Status Write(const std::string& path, int pid) const;

 private:
  struct Event {
    std::string name, cat, args;
    int thread = 0;
    double ts = 0, dur = 0;
  };
  std::chrono::steady_clock::time_point start_;
  std::vector<Event> events_;
};

// `inner` with every call recorded (thread 0).
std::unique_ptr<Ops> TracingOps(std::unique_ptr<Ops> inner, TraceRecorder* trace);
// `inner` with every blocking wait recorded (thread 1, names mpi_*).
std::unique_ptr<Transport> TracingTransport(std::unique_ptr<Transport> inner, TraceRecorder* trace);

}  // namespace trainsim::local
