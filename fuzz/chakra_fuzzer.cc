// MLCommons Chakra execution traces (observe/chakra.h ReadChakraTrace, from a stream), a
// binary format: length-prefixed protobuf messages.
//
// Checks:
// - every error starts "fuzz.0.et: byte N: " with N at most the input's size (the header
//   documents errors by byte), "fuzz.0.et: cannot read byte N", or is one of the documented
//   whole-file errors: "fuzz.0.et: not a Chakra execution trace: ...", "fuzz.0.et: no timed
//   GPU node ...", "fuzz.0.et: none of its N GPU nodes has a start_time_micros ...";
// - what reads as a trace passes LooksLikeChakra (the sniffing `trainsim observe` does);
// - a trace read has kernels and steps, the rank the file name gives (0) unless its metadata
//   names one, and no step figure that is NaN or negative.
//
// No round trip: trainsim does not write Chakra traces (tests/observe/data/make_chakra_fixture.py
// writes the fixture).
#include <cmath>
#include <sstream>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/chakra.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.0.et";

bool IsWholeFileError(const std::string& message) {
  const std::string file = std::string(kFile) + ": ";
  for (const char* start :
       {"not a Chakra execution trace: ", "no timed GPU node", "none of its "}) {
    if (message.rfind(file + start, 0) == 0) return true;
  }
  return false;
}

// N of "FILE: byte N: " or "FILE: cannot read byte N"; -1 when the message has neither.
int64_t ErrorByte(const std::string& message) {
  const std::string file = std::string(kFile) + ": ";
  size_t i = std::string::npos;
  for (const char* form : {"byte ", "cannot read byte "}) {
    if (message.rfind(file + form, 0) == 0) i = file.size() + std::string(form).size();
  }
  if (i == std::string::npos) return -1;
  const size_t digits = i;
  int64_t n = 0;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])) &&
         i - digits < 18) {
    n = n * 10 + (message[i++] - '0');
  }
  return i > digits ? n : -1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = trainsim::fuzz::Text(data, size);
  std::istringstream in{std::string(bytes)};
  Expected<KinetoTrace> t = ReadChakraTrace(in, kFile);
  if (!t.ok()) {
    const std::string& message = t.status().message();
    if (IsWholeFileError(message)) return 0;
    const int64_t at = ErrorByte(message);
    Check(at >= 0, "an error without a byte", message);
    Check(at <= static_cast<int64_t>(size), "an error at a byte the input has not", message);
    return 0;
  }
  Check(LooksLikeChakra(bytes.substr(0, 1 << 16)), "a trace read that does not look like one");
  Check(t->kernels >= 1 && !t->steps.empty(), "a trace read without kernels or steps");
  Check(t->device_pid >= 0 && t->rank == t->device_pid, "a trace without its rank");
  for (const TraceStep& s : t->steps) {
    Check(!std::isnan(s.wall_s) && !std::isnan(s.compute_s) && !std::isnan(s.exposed_comm_s) &&
              !std::isnan(s.idle_s) && s.idle_s >= 0,
          "a step figure that is NaN or negative");
  }
  return 0;
}
