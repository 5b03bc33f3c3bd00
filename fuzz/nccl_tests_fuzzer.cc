// nccl-tests output (observe/nccl_tests.h ParseNcclTests). The first byte picks the test
// given as --op: 0 (mod 8) none, 1-7 all_reduce ... reduce; the rest is the output.
//
// Checks:
// - every error starts "fuzz.txt:N: " at a line the output has, or is one of the documented
//   whole-file errors: "fuzz.txt: no nccl-tests result row ...", "fuzz.txt: no \"#  Rank
//   ...\" line ...", "fuzz.txt: the output does not name its test ...";
// - an output read has rows at lines it has, in file order, a test, ranks, and at least one
//   node; a test given as --op is the test read.
//
// No round trip: trainsim writes nccl-tests' layout only from a hardware profile
// (calibrate/nccl_tests_output.h), not from a run read here.
#include <optional>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/nccl_tests.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.txt";

std::optional<NcclOp> OpOf(uint8_t b) {
  const int k = b % 8;
  if (k == 0) return std::nullopt;
  return static_cast<NcclOp>(k - 1);
}

bool IsWholeFileError(const std::string& message) {
  const std::string file = std::string(kFile) + ": ";
  for (const char* start :
       {"no nccl-tests result row", "no \"#  Rank", "the output does not name its test"}) {
    if (message.rfind(file + start, 0) == 0) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::optional<NcclOp> op = OpOf(data[0]);
  const std::string_view text = trainsim::fuzz::Text(data + 1, size - 1);
  const int lines = trainsim::fuzz::LineCount(text);
  Expected<NcclTestsRun> run = ParseNcclTests(text, kFile, op);
  if (!run.ok()) {
    const std::string& message = run.status().message();
    int line = 0;
    if (IsWholeFileError(message)) return 0;
    Check(trainsim::fuzz::StartsWithLine(message, kFile, &line),
          "an error without FILE:LINE: ", message);
    Check(line <= lines, "an error at a line the output has not", message);
    return 0;
  }
  Check(!run->rows.empty() && run->ranks >= 1 && run->nodes >= 1 && run->op,
        "an output read without rows, ranks, nodes or test");
  Check(!op || run->op == op, "another test than --op");
  for (size_t i = 0; i < run->rows.size(); ++i) {
    const int line = run->rows[i].line;
    Check(line >= 1 && line <= lines, "a row at a line the output has not");
    Check(i == 0 || line > run->rows[i - 1].line, "rows out of file order");
  }
  return 0;
}
