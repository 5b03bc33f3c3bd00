// CloudWatch Logs exports (observe/sagemaker.h UnwrapLogEvents, and ParseCloudWatchRunLog,
// which reads the unwrapped messages as a run log). The first byte picks the run log's format
// as run_log_fuzzer.cc does (0 mod 6: detected); the rest is the export.
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has (a run-log error
//   is moved to its event's message: "fuzz.json:L:C: events[I].message: ..."), or is a
//   documented whole-file error, "fuzz.json: ..." (not a logs export, no event, several
//   streams, no step line); never "fuzz.json:N: " with a line of the unwrapped text;
// - the unwrapped text has one line per origin, each origin at a place the input has and
//   within its message's lines;
// - a run log read has its steps at lines the input has, their iterations rising.
#include <optional>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/sagemaker.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.json";

void CheckUnwrapped(const LogEventsText& t, std::string_view json) {
  int newlines = 0;
  for (char c : t.text) newlines += c == '\n';
  Check(static_cast<size_t>(newlines) == t.lines.size(), "unwrapped lines without an origin");
  for (const LogLineOrigin& o : t.lines) {
    Check(trainsim::fuzz::PositionExists(json, o.message.line, o.message.column),
          "a message at a place the input has not");
    Check(o.line_in_message >= 1 && o.line_in_message <= o.message_lines,
          "a line outside its message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::optional<LogFormat> format = trainsim::fuzz::LogFormatOfByte(data[0]);
  const std::string_view json = trainsim::fuzz::Text(data + 1, size - 1);
  Expected<LogEventsText> t = UnwrapLogEvents(json, kFile, "");
  if (!t.ok()) {
    trainsim::fuzz::CheckLocatedOrWholeFile(t.status().message(), kFile, json);
    return 0;
  }
  CheckUnwrapped(*t, json);
  Expected<RunLog> log = ParseCloudWatchRunLog(json, kFile, format, "");
  if (!log.ok()) {
    trainsim::fuzz::CheckLocatedOrWholeFile(log.status().message(), kFile, json);
    return 0;
  }
  const int lines = trainsim::fuzz::LineCount(json);
  for (size_t i = 0; i < log->steps.size(); ++i) {
    Check(log->steps[i].line >= 1 && log->steps[i].line <= lines,
          "a step at a line the input has not");
    Check(i == 0 || log->steps[i].iteration > log->steps[i - 1].iteration,
          "iterations that do not rise");
  }
  return 0;
}
