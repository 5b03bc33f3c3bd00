// WriteFileDurably: what it writes, its permissions and errors, and the kill
// test: a child writing two large contents in turn is SIGKILLed at random
// moments, and the destination must always hold one whole content.
#include "core/durable_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

fs::perms Perms(const fs::path& path) { return fs::status(path).permissions() & fs::perms::mask; }

class DurableFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "durable_file_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    umask_ = umask(022);
  }
  void TearDown() override {
    umask(umask_);
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
  mode_t umask_ = 022;
};

TEST_F(DurableFileTest, WritesANewFileWith0644LessTheUmask) {
  ASSERT_TRUE(WriteFileDurably(Path("a.txt"), "hello\n").ok());
  EXPECT_EQ(ReadFile(Path("a.txt")), "hello\n");
  EXPECT_EQ(Perms(Path("a.txt")), static_cast<fs::perms>(0644));
  umask(077);
  ASSERT_TRUE(WriteFileDurably(Path("private.txt"), "").ok());
  EXPECT_EQ(ReadFile(Path("private.txt")), "");
  EXPECT_EQ(Perms(Path("private.txt")), static_cast<fs::perms>(0600));
  EXPECT_EQ(Names(dir_), (std::vector<std::string>{"a.txt", "private.txt"}));
}

TEST_F(DurableFileTest, ReplacesAFileKeepingItsPermissions) {
  std::ofstream(Path("a.txt")) << "a much longer old text\n";
  fs::permissions(Path("a.txt"), static_cast<fs::perms>(0640));
  ASSERT_TRUE(WriteFileDurably(Path("a.txt"), "new\n").ok());
  EXPECT_EQ(ReadFile(Path("a.txt")), "new\n");
  EXPECT_EQ(Perms(Path("a.txt")), static_cast<fs::perms>(0640));
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"a.txt"});
}

TEST_F(DurableFileTest, AnExplicitModeApplies) {
  ASSERT_TRUE(WriteFileDurably(Path("run.sh"), "#!/bin/sh\n", 0755).ok());
  EXPECT_EQ(Perms(Path("run.sh")), static_cast<fs::perms>(0755));
  ASSERT_TRUE(WriteFileDurably(Path("run.sh"), "#!/bin/sh\n", 0644).ok());
  EXPECT_EQ(Perms(Path("run.sh")), static_cast<fs::perms>(0644));
}

TEST_F(DurableFileTest, PiecesAreWrittenInOrder) {
  const std::string_view pieces[] = {"one ", "", "two ", "three\n"};
  ASSERT_TRUE(WriteFileDurably(Path("p.txt"), pieces).ok());
  EXPECT_EQ(ReadFile(Path("p.txt")), "one two three\n");
}

TEST_F(DurableFileTest, ASymbolicLinkIsFollowed) {
  std::ofstream(Path("target.json")) << "old";
  fs::create_symlink("target.json", Path("link.json"));
  ASSERT_TRUE(WriteFileDurably(Path("link.json"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(Path("link.json")));
  EXPECT_EQ(ReadFile(Path("target.json")), "new");
}

TEST_F(DurableFileTest, ErrorsNameThePathAndLeaveNoTemporary) {
  const std::string missing = Path("no/such/p.json");
  EXPECT_EQ(WriteFileDurably(missing, "x").message(),
            missing + ": cannot write: No such file or directory");
  EXPECT_EQ(CheckWritable(missing).message(),
            missing + ": cannot write: No such file or directory");
  // A folder in the way: the temporary is written, the rename fails, the
  // temporary is removed.
  fs::create_directories(Path("taken/inside"));
  EXPECT_EQ(WriteFileDurably(Path("taken"), "x").message(),
            Path("taken") + ": cannot write: Is a directory");
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"taken"});
}

TEST_F(DurableFileTest, AReadOnlyFolderIsAnError) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  fs::create_directories(Path("ro"));
  std::ofstream(Path("ro/p.json")) << "old";
  fs::permissions(Path("ro"), static_cast<fs::perms>(0555));
  EXPECT_EQ(WriteFileDurably(Path("ro/p.json"), "new").message(),
            Path("ro/p.json") + ": cannot write: Permission denied");
  EXPECT_FALSE(CheckWritable(Path("ro/p.json")).ok());
  fs::permissions(Path("ro"), static_cast<fs::perms>(0755));
  EXPECT_EQ(ReadFile(Path("ro/p.json")), "old");
  EXPECT_EQ(Names(Path("ro")), std::vector<std::string>{"p.json"});
}

TEST_F(DurableFileTest, CheckWritableLeavesNothing) {
  EXPECT_TRUE(CheckWritable(Path("p.json")).ok());
  EXPECT_TRUE(fs::is_empty(dir_));
}

// --- The kill test ---------------------------------------------------------
// A SIGKILL tests what a crash of the writer leaves (the order: temporary,
// rename); what a power loss leaves rests on the fsyncs as well, which no test
// here can cut.

// `bytes` bytes of 64-bit words counting up from a start that `tag` picks:
// two contents differ at every word, and a cut or a mix is visible.
std::string Content(uint64_t tag, size_t bytes) {
  std::string s(bytes, '\0');
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t word = tag << 40 | i / 8;
    std::memcpy(s.data() + i, &word, 8);
  }
  return s;
}

using Writer = bool (*)(const std::string& path, const std::string& bytes);

bool Durable(const std::string& path, const std::string& bytes) {
  return WriteFileDurably(path, bytes).ok();
}

// The writer the helper replaced in one place: truncate and write in place.
bool InPlace(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

struct KillFigures {
  int iterations = 0;
  int initial = 0, a = 0, b = 0;  // what the destination held after a kill
  int torn = 0;                   // anything else
  int strays = 0;                 // kills that left a temporary: landed mid-write
  int cut = 0;                    // of which the temporary was not yet written in full
  double write_s = 0;             // one write, measured before the kills
  double seconds = 0;
};

// Forks a child that writes A, B, A, ... (or B, A, B, ...) to dir/dest.bin with `writer`
// and SIGKILLs it after a random delay (0 to 2 writes' time), `iterations`
// times or until `budget_s` has passed; after each kill, classifies the
// destination and checks that every other file in the folder is a temporary
// named as durable_file.h says (and removes it).
KillFigures KillWhileWriting(const fs::path& dir, Writer writer, int iterations, double budget_s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const std::string dest = (dir / "dest.bin").string();
  const std::string initial = "initial\n", a = Content(0xA, 8 << 20), b = Content(0xB, 12 << 20);
  const std::regex temporary(R"(\.dest\.bin\.[A-Za-z0-9]{6})");
  KillFigures f;
  const auto timed = Clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(writer(dest, i % 2 ? b : a));
  f.write_s = std::chrono::duration<double>(Clock::now() - timed).count() / 4;
  std::ofstream(dest, std::ios::binary | std::ios::trunc) << initial;
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> delay_s(0, 2 * f.write_s);
  for (; f.iterations < iterations; ++f.iterations) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > budget_s) break;
    const pid_t pid = fork();
    if (pid == 0) {  // starts with A or B in turn, so that both land
      for (int i = f.iterations;; ++i) {
        if (!writer(dest, i % 2 ? b : a)) _exit(3);
      }
    }
    EXPECT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer failed";
    const std::string now = ReadFile(dest);
    f.initial += now == initial;
    f.a += now == a;
    f.b += now == b;
    f.torn += now != initial && now != a && now != b;
    bool stray = false;
    for (const std::string& name : Names(dir)) {
      if (name == "dest.bin") continue;
      EXPECT_TRUE(std::regex_match(name, temporary)) << "a stray file named " << name;
      const uintmax_t size = fs::file_size(dir / name);
      f.cut += size != a.size() && size != b.size();
      stray = true;
      fs::remove(dir / name);
    }
    f.strays += stray;
  }
  f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return f;
}

TEST_F(DurableFileTest, AKilledWriterLeavesTheOldFileOrTheNewOne) {
  const KillFigures f = KillWhileWriting(dir_, Durable, 100, 12.0);
  std::printf(
      "kill test: %d kills in %.1f s (one write %.1f ms): initial %d, A %d, B %d, torn %d; "
      "%d left a temporary (killed mid-write), %d of them cut\n",
      f.iterations, f.seconds, f.write_s * 1e3, f.initial, f.a, f.b, f.torn, f.strays, f.cut);
  EXPECT_EQ(f.torn, 0);
  // Not vacuous: both contents landed, and kills fell inside writes.
  EXPECT_GE(f.iterations, 30);
  EXPECT_GT(f.a, 0);
  EXPECT_GT(f.b, 0);
  EXPECT_GT(f.strays, 0);
}

// The same harness catches a writer that is not atomic.
TEST_F(DurableFileTest, TheKillTestCatchesAnInPlaceWriter) {
  const KillFigures f = KillWhileWriting(dir_, InPlace, 20, 5.0);
  std::printf("in-place writer: %d kills, torn %d\n", f.iterations, f.torn);
  EXPECT_GT(f.torn, 0);
}

}  // namespace
}  // namespace trainsim
