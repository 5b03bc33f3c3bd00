// Training-run logs (observe/run_log.h ParseRunLog) and their summary (Summarize). The first
// byte picks the format: 0 (mod 6) detects it, 1-5 name megatron, trainsim-local, deepspeed,
// torchtitan, hf-trainer; the rest is the log.
//
// Checks:
// - every error starts "fuzz.log:N: " or "fuzz.log:N:B: " (a trainsim-local JSON line's
//   byte) at a line the log has, or is one of the documented whole-file errors, "fuzz.log:
//   no ... line ..." (nothing matched);
// - a log read has step lines, at lines the log has, their iterations rising, their figures
//   not NaN; the memory it reports is at lines the log has;
// - Summarize reads any log read (after 0, 1 and 1000 warm-up lines): an error names the
//   file; a summary uses samples, min <= median <= max.
//
// No round trip: the formats are other programs' output, and trainsim writes none of them
// (the local trainer's steps.jsonl aside, which is written by launch/local, not from a
// RunLog).
#include <cmath>
#include <optional>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/run_log.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.log";

void CheckLine(int line, std::string_view text, const char* what) {
  Check(line >= 1 && line <= trainsim::fuzz::LineCount(text), what, std::to_string(line));
}

void CheckSummary(const RunLog& log, int warmup) {
  Expected<StepSummary> s = Summarize(log, warmup);
  if (!s.ok()) {
    Check(trainsim::fuzz::StartsWithFile(s.status().message(), kFile),
          "a summary error without the file", s.status().message());
    return;
  }
  Check(s->samples >= 1, "a summary of no sample");
  Check(s->min_step_s <= s->median_step_s && s->median_step_s <= s->max_step_s,
        "a median outside min..max");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::optional<LogFormat> format = trainsim::fuzz::LogFormatOfByte(data[0]);
  const std::string_view text = trainsim::fuzz::Text(data + 1, size - 1);
  Expected<RunLog> log = ParseRunLog(text, kFile, format);
  if (!log.ok()) {
    const std::string& message = log.status().message();
    int line = 0;
    if (trainsim::fuzz::StartsWithLine(message, kFile, &line)) {
      CheckLine(line, text, "an error at a line the log has not");
    } else {
      Check(trainsim::fuzz::StartsWithFile(message, kFile) &&
                message.find(": no ") == std::string(kFile).size(),
            "an error neither at a line nor a documented whole-file one", message);
    }
    return 0;
  }
  Check(!log->steps.empty(), "a log read without a step");
  for (size_t i = 0; i < log->steps.size(); ++i) {
    const StepSample& s = log->steps[i];
    CheckLine(s.line, text, "a step at a line the log has not");
    Check(!std::isnan(s.step_s), "a step of NaN seconds");
    Check(i == 0 || s.iteration > log->steps[i - 1].iteration, "iterations that do not rise");
  }
  if (log->memory.max_allocated_gib) {
    CheckLine(log->memory.allocated_line, text, "memory at a line the log has not");
  }
  if (log->memory.max_reserved_gib) {
    CheckLine(log->memory.reserved_line, text, "memory at a line the log has not");
  }
  for (int warmup : {0, 1, 1000}) CheckSummary(*log, warmup);
  return 0;
}
