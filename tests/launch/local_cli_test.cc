// `trainsim launch PLAN --backend local` as a user runs it: the real binary,
// the real trainer under mpirun, a real (quick) cpu calibration profile.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace trainsim {

using trainsim::test::ReadFile;
namespace {

namespace fs = std::filesystem;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class LocalCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v mpirun > /dev/null 2>&1") != 0) {
      GTEST_SKIP() << "mpirun is not installed (openmpi-bin): the local run needs it";
    }
    std::string pattern = (fs::temp_directory_path() / "local_cli_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    profile_ = (dir_ / "cpu.json").string();
    const std::string cmd = std::string(TRAINSIM_CALIBRATE_BINARY) +
                            " --backend cpu --quick --out " + profile_ + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::vector<std::string> Launch(int steps, int checkpoint_every) const {
    return {TRAINSIM_BINARY,
            "launch",
            std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/small.plan.json",
            "--backend",
            "local",
            "--profile",
            profile_,
            "--steps",
            std::to_string(steps),
            "--checkpoint-every",
            std::to_string(checkpoint_every),
            "--out",
            (dir_ / "run").string()};
  }
  pid_t Start(std::vector<std::string> args) const {
    std::vector<char*> argv;
    for (std::string& w : args) argv.push_back(w.data());
    argv.push_back(nullptr);
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }
  static int Wait(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string Out() const { return ReadFile(dir_ / "stdout"); }
  std::string Err() const { return ReadFile(dir_ / "stderr"); }

  fs::path dir_;
  std::string profile_;
};

TEST_F(LocalCliTest, PrintsEachStepBesideThePrediction) {
  ASSERT_EQ(Wait(Start(Launch(4, 0))), 0) << Err();
  const std::string out = Out();
  EXPECT_NE(out.find("(the plan's model scaled down to train here)"), std::string::npos) << out;
  EXPECT_NE(out.find("predicted step (simulator on the profile): "), std::string::npos);
  EXPECT_NE(out.find("running: 'mpirun' '-np' "), std::string::npos);
  EXPECT_EQ(Count(out, "%\n"), 5) << out;  // four step lines and the summary, each with an error
  EXPECT_NE(out.find("median step after warm-up: measured "), std::string::npos);
  EXPECT_NE(out.find(", predicted "), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "run" / "local" / "config.json"));
  EXPECT_TRUE(fs::exists(dir_ / "run" / "local" / "scenario.json"));  // the prediction's
  // The step lines stay beside them, and `trainsim observe` reads the same steady step back
  // and the same prediction (docs/observe.md).
  const fs::path local = dir_ / "run" / "local";
  const std::string kMeasured = "median step after warm-up: measured ";
  const size_t at = out.find(kMeasured);
  ASSERT_NE(at, std::string::npos);
  const double measured = std::stod(out.substr(at + kMeasured.size()));
  ASSERT_EQ(Wait(Start({TRAINSIM_BINARY, "observe", (local / "steps.jsonl").string(), "--warmup",
                        "3", "--scenario", (local / "scenario.json").string(), "--json"})),
            0)
      << Err();
  const nlohmann::json j = nlohmann::json::parse(Out());
  EXPECT_EQ(j["runs"][0]["format"], "trainsim-local");
  EXPECT_EQ(j["runs"][0]["step_lines"], 4);
  EXPECT_NEAR(j["measured_step_s"].get<double>(), measured, 1e-4);
  const size_t p = out.find(", predicted ", at);
  ASSERT_NE(p, std::string::npos);
  EXPECT_NEAR(j["compare"]["predicted_step_s"].get<double>(), std::stod(out.substr(p + 12)), 1e-4);
  // Rank 0's Kineto-format trace: every step annotated, its kernels mostly GEMMs, and its steps
  // as long as the steps the trainer timed.
  ASSERT_EQ(Wait(Start({TRAINSIM_BINARY, "observe", (local / "trace.json").string(), "--warmup",
                        "3", "--json"})),
            0)
      << Err();
  const nlohmann::json t = nlohmann::json::parse(Out());
  ASSERT_EQ(t["traces"][0]["steps"].size(), 4u);
  const nlohmann::json& last = t["traces"][0]["steps"][3];
  EXPECT_GT(last["gemm_s"].get<double>(), 0.5 * last["wall_s"].get<double>());
  EXPECT_NEAR(t["measured_step_s"].get<double>(), measured, 0.1 * measured);
  // The profile refitted from the trace: its GEMM shapes and the memory-bound rate, whose
  // simulated work then takes what the trace's other kernels took (docs/observe.md 3c).
  const std::string refit = (dir_ / "refit.json").string();
  ASSERT_EQ(Wait(Start({TRAINSIM_BINARY, "observe", (local / "trace.json").string(), "--warmup",
                        "3", "--profile", profile_, "--scenario",
                        (local / "scenario.json").string(), "--refit", refit, "--json"})),
            0)
      << Err();
  const nlohmann::json r = nlohmann::json::parse(Out())["refit"];
  EXPECT_GT(r["gemm_shapes"].get<int>(), 3);
  const nlohmann::json& m = r["memory"];
  EXPECT_NEAR(m["refitted_GBps"].get<double>(),
              m["rate_GBps"].get<double>() * m["simulated_memory_bound_s"].get<double>() /
                  m["measured_other_kernels_s"].get<double>(),
              1e-9 * m["rate_GBps"].get<double>());
  ASSERT_EQ(Wait(Start({TRAINSIM_BINARY, "simulate", (local / "scenario.json").string(),
                        "--profile", refit, "--json"})),
            0)
      << Err();
  EXPECT_NEAR(nlohmann::json::parse(Out())["step_time_s"].get<double>(),
              r["refitted_step_s"].get<double>(), 1e-9);
}

// Ctrl-C stops the run after a step (exit 130, a hint); --resume finishes it.
TEST_F(LocalCliTest, CtrlCStopsCleanlyAndResumeFinishes) {
  const pid_t pid = Start(Launch(6, 2));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (Err().find("checkpoint of step 2") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (Err().find("checkpoint of step 2") == std::string::npos) {
    kill(pid, SIGINT);  // stop the run and its ranks before failing
    Wait(pid);
    FAIL() << "no checkpoint of step 2 within 120 s: " << Err();
  }
  kill(pid, SIGINT);
  EXPECT_EQ(Wait(pid), 130) << Err();
  EXPECT_NE(Err().find("trainsim: interrupted after "), std::string::npos) << Err();
  EXPECT_NE(Err().find("--resume to continue"), std::string::npos);
  std::vector<std::string> resume = Launch(6, 2);
  resume.push_back("--resume");
  ASSERT_EQ(Wait(Start(resume)), 0) << Err();
  EXPECT_NE(Out().find("\n     6 "), std::string::npos) << Out();  // the last step ran
  EXPECT_EQ(Out().find("\n     1 "), std::string::npos) << Out();  // the first did not
}

}  // namespace
}  // namespace trainsim
