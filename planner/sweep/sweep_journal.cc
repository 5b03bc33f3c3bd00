#include "planner/sweep/sweep_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/durable_file.h"

namespace trainsim::planner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status IoError(const std::string& what, const std::string& path) {
  return Status::InvalidInput("cannot " + what + " " + path + ": " + std::strerror(errno));
}

bool IsJournalName(const std::string& name) {
  return name.size() > 14 && name.rfind("journal-", 0) == 0 &&
         name.compare(name.size() - 6, 6, ".jsonl") == 0;
}

// The journal files in `dir`, sorted by name.
std::vector<std::string> JournalFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && IsJournalName(it->path().filename().string())) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

Expected<JournalEntry> ParseLine(const std::string& line, const std::string& where) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("fingerprint") ||
      !j["fingerprint"].is_string() || !j.contains("row")) {
    return Status::InvalidInput(where + ": not a sweep journal line");
  }
  Expected<SweepRow> row = RowFromJson(j["row"], where);
  if (!row.ok()) return row.status();
  return JournalEntry{j["fingerprint"].get<std::string>(), std::move(*row), where};
}

Status ReadJournal(const std::string& path, std::map<std::string, JournalEntry>* entries) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("read", path);
  std::stringstream text;
  text << in.rdbuf();
  std::istringstream lines(text.str());
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (lines.eof()) break;  // no "\n": a line cut by a kill
    if (line.empty()) continue;
    Expected<JournalEntry> e = ParseLine(line, path + ":" + std::to_string(number));
    if (!e.ok()) return e.status();
    entries->emplace(e->row.id, std::move(*e));  // the first entry of an id stays
  }
  return Status::Ok();
}

// The size of the file up to and including its last "\n" (0 when none).
Expected<off_t> CompleteLinesSize(int fd, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return IoError("stat", path);
  char buf[4096];
  for (off_t end = st.st_size; end > 0;) {
    const off_t start = std::max<off_t>(0, end - static_cast<off_t>(sizeof buf));
    const ssize_t n = pread(fd, buf, static_cast<size_t>(end - start), start);
    if (n != end - start) return IoError("read", path);
    for (off_t i = n; i > 0; --i) {
      if (buf[i - 1] == '\n') return start + i;
    }
    end = start;
  }
  return off_t{0};
}

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("write", path);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

std::string JournalFileName(int rank) { return "journal-" + std::to_string(rank) + ".jsonl"; }

Expected<std::map<std::string, JournalEntry>> ReadJournals(const std::string& dir) {
  std::map<std::string, JournalEntry> entries;
  for (const std::string& path : JournalFiles(dir)) {
    if (Status s = ReadJournal(path, &entries); !s.ok()) return s;
  }
  return entries;
}

std::string JournalLine(const SweepRow& row, const std::string& fingerprint) {
  nlohmann::ordered_json line = nlohmann::ordered_json::object();
  line["fingerprint"] = fingerprint;
  line["row"] = RowToJson(row);
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Expected<std::unique_ptr<JournalWriter>> JournalWriter::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("open", path);
  Expected<off_t> complete = CompleteLinesSize(fd, path);
  if (!complete.ok() || ftruncate(fd, *complete) != 0) {
    Status s = complete.ok() ? IoError("truncate", path) : complete.status();
    close(fd);
    return s;
  }
  // The journal's own entry in its folder must survive a crash too (its lines are fsynced
  // one by one as they are appended).
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (Status s = SyncFolder(dir.empty() ? "." : dir); !s.ok()) {
    close(fd);
    return s;
  }
  return std::unique_ptr<JournalWriter>(new JournalWriter(fd, path));
}

JournalWriter::~JournalWriter() { close(fd_); }

Status JournalWriter::Append(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Status s = WriteAll(fd_, line, path_); !s.ok()) return s;
  if (fsync(fd_) != 0) return IoError("sync", path_);
  return Status::Ok();
}

}  // namespace trainsim::planner
