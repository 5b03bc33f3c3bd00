// The real trainsim-calibrate (cpu backend, --quick) with --nccl-tests-out:
// every group its profile measured comes back through trainsim's nccl-tests
// reader (observe/nccl_tests.h) and `trainsim observe` with the profile's
// figures. Full build only: the calibrate-only build (TRAINSIM_CALIBRATE_ONLY)
// has neither the observe library nor the binaries' paths.
#ifdef TRAINSIM_BINARY

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_output.h"
#include "core/hardware_profile.h"
#include "observe/nccl_tests.h"

namespace trainsim::calibrate {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// `binary ARGS > DIR/NAME.out 2> DIR/NAME.err`; the exit status, or -1.
int RunCommand(const std::string& binary, const std::string& args, const fs::path& dir,
               const std::string& name) {
  const std::string command = binary + " " + args + " > " + (dir / (name + ".out")).string() +
                              " 2> " + (dir / (name + ".err")).string();
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One profile group: an op over `ranks` ranks, the points in order.
struct Group {
  std::string op;
  int ranks = 0;
  std::vector<ProfilePoint> points;
};

std::vector<Group> Groups(const HardwareProfile& p) {
  std::vector<Group> groups;
  for (const ProfilePoint& point : p.points) {
    if (point.kind != "collective") continue;
    EXPECT_EQ(point.nodes, 1);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.op == point.what && g.ranks == point.ranks;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{point.what, point.ranks, {}});
    it->points.push_back(point);
  }
  return groups;
}

std::string TestName(const std::string& op) { return op == "send_recv" ? "sendrecv" : op; }

// What a profile figure reads back as: nccl-tests' rounding, then strtod.
double Printed(double value, int width) {
  return std::strtod(NcclTestsNumber(value, width).c_str(), nullptr);
}

// One calibration for the whole suite (a few seconds on a small machine).
class NcclTestsRoundTripTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("nccl-tests-roundtrip-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    status_ = RunCommand(TRAINSIM_CALIBRATE_BINARY,
                         "--backend cpu --quick --out " + (*dir_ / "cpu.json").string() +
                             " --nccl-tests-out " + Prefix(),
                         *dir_, "calibrate");
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Prefix() { return (*dir_ / "cal").string(); }
  static std::string File(const Group& g) {
    return Prefix() + "." + TestName(g.op) + ".ranks" + std::to_string(g.ranks) + ".nodes1.txt";
  }
  void SetUp() override {
    ASSERT_EQ(status_, 0) << ReadFile(*dir_ / "calibrate.err");
    Expected<HardwareProfile> p = LoadHardwareProfile((*dir_ / "cpu.json").string());
    ASSERT_TRUE(p.ok()) << p.status().message();
    profile_ = *p;
    groups_ = Groups(profile_);
    ASSERT_FALSE(groups_.empty());
  }

  static fs::path* dir_;
  static int status_;
  HardwareProfile profile_;
  std::vector<Group> groups_;
};

fs::path* NcclTestsRoundTripTest::dir_ = nullptr;
int NcclTestsRoundTripTest::status_ = -1;

TEST_F(NcclTestsRoundTripTest, OneFilePerMeasuredGroupAndNoOther) {
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(*dir_)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("cal.", 0) == 0) ++files;
  }
  EXPECT_EQ(files, static_cast<int>(groups_.size()));
  for (const Group& g : groups_) EXPECT_TRUE(fs::exists(File(g))) << File(g);
  EXPECT_NE(ReadFile(*dir_ / "calibrate.out")
                .find("nccl-tests outputs written: " + std::to_string(groups_.size()) + " (" +
                      Prefix() + ".*.txt)\n"),
            std::string::npos)
      << ReadFile(*dir_ / "calibrate.out");
}

TEST_F(NcclTestsRoundTripTest, EveryFileReadsBackAsTheProfilesPoints) {
  const std::string gpu = "local-cpu-core: " + profile_.provenance.device;
  for (const Group& g : groups_) {
    SCOPED_TRACE(File(g));
    Expected<observe::NcclTestsRun> run = observe::LoadNcclTests(File(g), std::nullopt);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(observe::ToString(*run->op), TestName(g.op));
    EXPECT_EQ(run->ranks, g.ranks);
    EXPECT_EQ(run->nodes, 1);
    EXPECT_EQ(run->gpu, gpu);
    ASSERT_EQ(run->rows.size(), g.points.size());
    double busbw_sum = 0;
    for (size_t i = 0; i < g.points.size(); ++i) {
      const ProfilePoint& p = g.points[i];
      const observe::NcclRow& r = run->rows[i];
      const double busbw = p.rate / 1e9;
      busbw_sum += busbw;
      EXPECT_EQ(r.bytes, p.bytes);
      EXPECT_EQ(r.busbw_GBps, Printed(busbw, 6));
      EXPECT_NEAR(r.busbw_GBps, busbw, std::max(0.0051, 1e-3 * busbw));
      EXPECT_EQ(r.algbw_GBps, Printed(p.algbw_Bps / 1e9, 6));
      EXPECT_EQ(r.time_us, Printed(p.median_s * 1e6, 7));
      EXPECT_EQ(r.inplace_busbw_GBps, r.busbw_GBps);
      EXPECT_EQ(r.inplace_time_us, r.time_us);
    }
    ASSERT_TRUE(run->avg_busbw_GBps.has_value());
    const double mean = busbw_sum / g.points.size();
    EXPECT_NEAR(*run->avg_busbw_GBps, mean, 1e-5 * mean + 1e-9);  // %g: 6 digits
  }
}

TEST_F(NcclTestsRoundTripTest, TrainsimObserveReadsAndSimulatesTheAllReduce) {
  const Group* widest = nullptr;
  for (const Group& g : groups_) {
    if (g.op == "all_reduce" && (!widest || g.ranks > widest->ranks)) widest = &g;
  }
  ASSERT_NE(widest, nullptr);
  ASSERT_EQ(RunCommand(TRAINSIM_BINARY, "observe " + File(*widest) + " --json", *dir_, "observe"),
            0)
      << ReadFile(*dir_ / "observe.err");
  const nlohmann::json j = nlohmann::json::parse(ReadFile(*dir_ / "observe.out"));
  const nlohmann::json& run = j.at("nccl_tests").at(0);
  EXPECT_EQ(run.at("op"), "all_reduce");
  EXPECT_EQ(run.at("ranks"), widest->ranks);
  ASSERT_EQ(run.at("rows").size(), widest->points.size());
  for (size_t i = 0; i < widest->points.size(); ++i) {
    EXPECT_EQ(run.at("rows").at(i).at("busbw_GBps").get<double>(),
              Printed(widest->points[i].rate / 1e9, 6));
  }
  if (widest->ranks < 2) GTEST_SKIP() << "one core: no collective to simulate";
  // Beside the simulated collective on the profile's own catalog entry.
  const fs::path catalog = *dir_ / "catalog.json";
  std::ofstream(catalog) << profile_.catalog_json;
  ASSERT_EQ(
      RunCommand(TRAINSIM_BINARY,
                 "observe " + File(*widest) + " --instance local-cpu --catalog " + catalog.string(),
                 *dir_, "compare"),
      0)
      << ReadFile(*dir_ / "compare.err");
  EXPECT_NE(ReadFile(*dir_ / "compare.out").find("simulated on local-cpu"), std::string::npos)
      << ReadFile(*dir_ / "compare.out");
}

// An incomplete run writes no nccl-tests output: Ctrl-C once the collectives
// have started (as tests/cli's CtrlCWritesWhatWasMeasuredAsAnIncompleteProfile).
TEST(NcclTestsOutputCliTest, AnInterruptedRunWritesNone) {
  const fs::path dir =
      fs::temp_directory_path() / ("nccl-tests-interrupted-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string profile = (dir / "cut.json").string(), prefix = (dir / "cal").string();
  const fs::path out = dir / "calibrate.out", err = dir / "calibrate.err";
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(TRAINSIM_CALIBRATE_BINARY, TRAINSIM_CALIBRATE_BINARY, "--backend", "cpu", "--quick",
          "--out", profile.c_str(), "--nccl-tests-out", prefix.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 600 && ReadFile(err).find("[collectives 3/") == std::string::npos; ++i) {
    usleep(50 * 1000);
  }
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << ReadFile(err);
  EXPECT_EQ(WEXITSTATUS(status), 2) << ReadFile(err);
  EXPECT_NE(ReadFile(out).find("nccl-tests outputs not written: the run is incomplete\n"),
            std::string::npos)
      << ReadFile(out);
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    EXPECT_NE(e.path().filename().string().rfind("cal.", 0), 0u) << e.path();
  }
  fs::remove_all(dir);
}

TEST(NcclTestsOutputCliTest, AMissingFolderIsRefusedBeforeMeasuring) {
  const fs::path dir =
      fs::temp_directory_path() / ("nccl-tests-no-folder-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string prefix = (dir / "no" / "cal").string();
  EXPECT_EQ(RunCommand(TRAINSIM_CALIBRATE_BINARY,
                       "--backend cpu --quick --out " + (dir / "p.json").string() +
                           " --nccl-tests-out " + prefix,
                       dir, "calibrate"),
            1);
  EXPECT_EQ(ReadFile(dir / "calibrate.err"), "trainsim-calibrate: --nccl-tests-out " + prefix +
                                                 ": no folder " + (dir / "no").string() + "\n");
  EXPECT_FALSE(fs::exists(dir / "p.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainsim::calibrate

#endif  // TRAINSIM_BINARY
