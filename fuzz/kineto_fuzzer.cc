// PyTorch profiler (Kineto) traces (observe/kineto.h ParseKinetoTrace, the text form of
// LoadKinetoTrace).
//
// Checks:
// - every error starts "fuzz.json:L:C: " (JSON that does not parse) at a line and column the
//   input has, or is one of the documented whole-file errors: "fuzz.json: no traceEvents
//   array ...", "fuzz.json: no GPU kernel event ...", "fuzz.json: no ProfilerStep#N
//   annotation ...";
// - a trace read has kernels and steps in order of their start; no step figure is NaN or
//   negative, and no kernel kind is busy longer than its step (rounding aside).
//
// No round trip: trainsim writes Chrome traces of simulated steps (sim/), not Kineto traces.
#include <cmath>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/kineto.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.json";

bool IsWholeFileError(const std::string& message) {
  const std::string file = std::string(kFile) + ": ";
  for (const char* start :
       {"no traceEvents array", "no GPU kernel event", "no ProfilerStep#N annotation"}) {
    if (message.rfind(file + start, 0) == 0) return true;
  }
  return false;
}

// The spacing of doubles at `x`.
double Ulp(double x) { return std::nextafter(std::fabs(x), INFINITY) - std::fabs(x); }

void CheckStep(const TraceStep& s) {
  Check(!std::isnan(s.wall_s) && !std::isnan(s.compute_s) && !std::isnan(s.exposed_comm_s) &&
            !std::isnan(s.idle_s),
        "a step figure that is NaN");
  Check(s.idle_s >= 0, "a negative idle time");
  // Each kind's busy time is a union of kernel spans clipped to the step: no longer than the
  // step, give or take rounding (the step's end is start + duration, rounded at the start's
  // magnitude).
  const double wall_us = s.wall_s * 1e6;
  const double slack_us = 4 * Ulp(std::fabs(s.start_us) + std::fabs(wall_us)) + 1e-9 * wall_us;
  for (double busy : s.kernel_s) {
    Check(!std::isnan(busy) && busy >= 0, "a negative or NaN kernel time");
    if (wall_us >= 0 && std::isfinite(wall_us)) {
      Check(busy * 1e6 <= wall_us + slack_us, "a kind busier than its step is long");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  Expected<KinetoTrace> t = ParseKinetoTrace(text, kFile);
  if (!t.ok()) {
    const std::string& message = t.status().message();
    if (IsWholeFileError(message)) return 0;
    trainsim::fuzz::CheckLocated(message, kFile, text);
    return 0;
  }
  Check(t->kernels >= 1 && !t->steps.empty(), "a trace read without kernels or steps");
  for (size_t i = 0; i < t->steps.size(); ++i) {
    CheckStep(t->steps[i]);
    Check(i == 0 || t->steps[i - 1].start_us <= t->steps[i].start_us, "steps out of order");
  }
  return 0;
}
