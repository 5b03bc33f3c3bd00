// The sweep journal: one JSON line per finished point, appended (one write,
// then fsync) as each point finishes, so that a killed sweep loses no point
// it finished. Each process of a sweep appends to its own file,
// journal-<rank>.jsonl; readers take every journal-*.jsonl in the folder.
//
// A line: {"fingerprint": "...", "row": RowToJson(row)}. A kill can cut only
// the last line of a file (it lacks its "\n"): readers ignore it and the
// writer drops it before appending.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "planner/sweep/sweep_row.h"

namespace trainsim::planner {

struct JournalEntry {
  std::string fingerprint;
  SweepRow row;
  std::string where;  // "out/journal-0.jsonl:3", for messages
};

// "journal-<rank>.jsonl".
std::string JournalFileName(int rank);

// Every entry of the journals in `dir`, by point id; of two entries for one id
// the first (files by name, then lines) stays. No folder or no journal: none.
// A complete line that is not an entry is an error naming file:line.
Expected<std::map<std::string, JournalEntry>> ReadJournals(const std::string& dir);

// The journal line for a finished row, "\n" included.
std::string JournalLine(const SweepRow& row, const std::string& fingerprint);

// Appends lines to one journal file. Thread-safe.
class JournalWriter {
 public:
  // Opens or creates `path` for appending, dropping a cut last line.
  static Expected<std::unique_ptr<JournalWriter>> Open(const std::string& path);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Writes `line` with one write() and makes it durable (fsync).
  Status Append(const std::string& line);

 private:
  JournalWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  std::mutex mu_;
  int fd_;
  std::string path_;
};

}  // namespace trainsim::planner
