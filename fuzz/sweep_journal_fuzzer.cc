// Sweep journals (planner/sweep/sweep_journal.h ReadJournals, which reads a folder: the input is
// written to DIR/journal-0.jsonl of a temporary folder) and the fingerprint a journaled row
// is matched by (planner/sweep/sweep_eval.h Fnv1a64Hex).
//
// Checks:
// - every error starts "DIR/journal-0.jsonl:N: " at a line the input has (a journal's
//   errors are per line: "not a sweep journal line", "the row's \"tp\" is missing or
//   mistyped");
// - a line cut by a kill (no final "\n") is ignored: an input without a "\n" reads as no
//   entry, and no error;
// - round trip: every entry written back with JournalLine (the writer's own line) to a
//   second journal reads back to the same ids, and each is written again to the same bytes;
// - the fingerprint of the input is 16 lower-case hex digits, and the fingerprint of the
//   input with one byte changed differs (FNV-1a: each step is a bijection of the state).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "fuzz/fuzz_util.h"
#include "planner/sweep/sweep_eval.h"
#include "planner/sweep/sweep_journal.h"

namespace {

namespace fs = std::filesystem;
using trainsim::Expected;
using trainsim::fuzz::Check;
using trainsim::planner::JournalEntry;
using Entries = std::map<std::string, JournalEntry>;

// The harness's folders: `in` holds the input's journal, `out` the written-back one.
struct Folders {
  std::string in, out;
};

const Folders& Dirs() {
  static const Folders dirs = [] {
    // In memory where there is a tmpfs: a file rewritten in place on ext4 is flushed at close
    // (auto_da_alloc), which made each input cost milliseconds of waiting.
    const char* tmp = std::getenv("TMPDIR");
    std::string root = tmp && *tmp ? tmp : "/tmp";
    if (!tmp && access("/dev/shm", W_OK) == 0) root = "/dev/shm";
    std::string base = root + "/trainsim-journal-fuzz-XXXXXX";
    Check(mkdtemp(base.data()) != nullptr, "cannot make a temporary folder", base);
    fs::create_directory(base + "/in");
    fs::create_directory(base + "/out");
    static std::string made;  // removed when the fuzzer exits
    made = base;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(made, ec);
    });
    return Folders{base + "/in", base + "/out"};
  }();
  return dirs;
}

void WriteJournal(const std::string& dir, std::string_view text) {
  const std::string path = dir + "/" + trainsim::planner::JournalFileName(0);
  std::remove(path.c_str());  // a new file, not one truncated (see Dirs)
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  Check(out.good(), "cannot write the journal", dir);
}

Expected<Entries> ReadBack(const std::string& dir, std::string_view text) {
  WriteJournal(dir, text);
  return trainsim::planner::ReadJournals(dir);
}

void CheckFingerprint(std::string_view text) {
  const std::string fp = trainsim::planner::Fnv1a64Hex(text);
  Check(fp.size() == 16 && fp.find_first_not_of("0123456789abcdef") == std::string::npos,
        "a fingerprint that is not 16 lower-case hex digits", fp);
  if (text.empty()) return;
  std::string changed(text);
  changed[changed.size() / 2] ^= 0x01;
  Check(trainsim::planner::Fnv1a64Hex(changed) != fp, "one byte changed, the same fingerprint", fp);
}

void CheckRoundTrip(const Entries& entries) {
  std::string written;
  for (const auto& [id, e] : entries)
    written += trainsim::planner::JournalLine(e.row, e.fingerprint);
  Expected<Entries> again = ReadBack(Dirs().out, written);
  Check(again.ok(), "the journal written back does not read", again.status().message());
  Check(again->size() == entries.size(), "the journal written back has other entries", written);
  std::string rewritten;
  for (const auto& [id, e] : *again) {
    Check(entries.count(id) == 1, "the journal written back has another id", id);
    rewritten += trainsim::planner::JournalLine(e.row, e.fingerprint);
  }
  Check(rewritten == written, "the journal read back is written differently", written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  CheckFingerprint(text);
  const std::string file = Dirs().in + "/" + trainsim::planner::JournalFileName(0);
  Expected<Entries> entries = ReadBack(Dirs().in, text);
  if (text.find('\n') == std::string_view::npos) {
    Check(entries.ok() && entries->empty(), "a cut line alone is read", text);
  }
  if (!entries.ok()) {
    const std::string& message = entries.status().message();
    int line = 0;
    Check(trainsim::fuzz::StartsWithLine(message, file, &line),
          "an error without FILE:LINE: ", message);
    Check(line <= trainsim::fuzz::LineCount(text), "an error at a line the input has not", message);
    return 0;
  }
  for (const auto& [id, e] : *entries) Check(e.row.id == id, "an entry under another id", id);
  CheckRoundTrip(*entries);
  return 0;
}
