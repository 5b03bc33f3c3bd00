// trainsim-train itself, alone and under mpirun on this machine: the output
// lines, data and pipeline parallel runs against one rank, a killed rank, a
// stop signal and resume. Skipped when mpirun or the binary is missing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace trainsim::local {

using trainsim::test::ReadFile;
namespace {

#ifdef TRAINSIM_TRAIN_BINARY
constexpr char kBinary[] = TRAINSIM_TRAIN_BINARY;
#else
constexpr char kBinary[] = "";
#endif

using Clock = std::chrono::steady_clock;

// The first mpirun on PATH, or "".
std::string FindMpirun() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/mpirun";
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed by one
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;
};

class Process {
 public:
  // Starts `args` with stdout and stderr into dir/NAME.out and dir/NAME.err.
  Process(const std::vector<std::string>& args, const std::string& dir, const std::string& name)
      : out_(dir + "/" + name + ".out"), err_(dir + "/" + name + ".err"), start_(Clock::now()) {
    std::vector<std::string> words = args;
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {  // Only async-signal-safe calls until exec.
      int in = open("/dev/null", O_RDONLY);
      int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
        _exit(126);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  pid_t pid() const { return pid_; }
  std::string err() const { return ReadFile(err_); }

  // Waits at most `limit_s`; then SIGTERM (mpirun ends its ranks), and
  // SIGKILL 5 s later.
  RunResult Wait(double limit_s) {
    RunResult r;
    int status = 0;
    const Clock::time_point deadline = start_ + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(limit_s));
    pid_t done = 0;
    while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done == 0) {
      r.timed_out = true;
      kill(pid_, SIGTERM);
      for (int i = 0; i < 500 && (done = waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (done == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadFile(out_);
    r.err = ReadFile(err_);
    return r;
  }

 private:
  std::string out_, err_;
  Clock::time_point start_;
  pid_t pid_ = -1;
};

struct Step {
  int step;
  double loss;
};

// The step lines of stdout; `summary` gets the summary line's object.
std::vector<Step> StepLines(const std::string& out, nlohmann::json* summary = nullptr) {
  std::vector<Step> steps;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("summary")) {
      if (summary) *summary = j["summary"];
    } else {
      steps.push_back(Step{j["step"].get<int>(), j["loss"].get<double>()});
    }
  }
  return steps;
}

// Tiny: 2 layers of hidden 32 (or 4 with `layers`), vocab 64, 8 sequences of
// 16 tokens per step in microbatches of 2.
std::string TinyConfig(int steps, int layers = 2) {
  return R"({"layers": )" + std::to_string(layers) +
         R"(, "hidden": 32, "heads": 4, "ffn_hidden": 128, "seq_len": 16, "vocab": 64,)"
         R"( "micro_batch": 2, "global_batch": 8, "lr": 0.01, "steps": )" +
         std::to_string(steps) + "}";
}

class LocalMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(kBinary).empty()) GTEST_SKIP() << "trainsim-train was not built (no MPI)";
    mpirun_ = FindMpirun();
    std::string pattern = (std::filesystem::temp_directory_path() / "local_mpi.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    if (geteuid() == 0) {  // Open MPI refuses root without these
      setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
      setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void NeedMpirun() {
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH (install openmpi-bin)";
  }

  std::string WriteConfig(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // `np` ranks of trainsim-train ARGS under mpirun (started, not waited for).
  std::vector<std::string> MpiArgs(int np, const std::vector<std::string>& args) {
    std::vector<std::string> words = {
        mpirun_, "-np", std::to_string(np), "--oversubscribe", "--bind-to", "none", kBinary};
    words.insert(words.end(), args.begin(), args.end());
    return words;
  }
  RunResult Mpi(int np, const std::vector<std::string>& args, const std::string& name) {
    return Process(MpiArgs(np, args), dir_, name).Wait(60);
  }
  RunResult Alone(const std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> words = {kBinary};
    words.insert(words.end(), args.begin(), args.end());
    return Process(words, dir_, name).Wait(60);
  }

  std::string mpirun_, dir_;
};

TEST_F(LocalMpi, OneRankPrintsAStepLineEachStepAndASummary) {
  const std::string config = WriteConfig("c.json", TinyConfig(30));
  RunResult r = Alone({"--config", config, "--warmup_steps", "2"}, "one");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json summary;
  const std::vector<Step> steps = StepLines(r.out, &summary);
  ASSERT_EQ(steps.size(), 30u);
  EXPECT_EQ(steps.front().step, 1);
  EXPECT_EQ(summary["steps"], 28);
  EXPECT_EQ(summary["first_loss"], steps[2].loss);
  EXPECT_EQ(summary["last_loss"], steps.back().loss);
  EXPECT_GT(summary["median_step_s"].get<double>(), 0);
  EXPECT_LT(steps.back().loss, 1.0);  // from ln 64 = 4.16
  EXPECT_NE(r.err.find("trainsim-train: 1 ranks (pp 1 x dp 1), 4 microbatches of 2 x 16 tokens"),
            std::string::npos)
      << r.err;
}

// The same global batch in 1 rank, 2 replicas, 2 stages and 2 x 2: the
// pipeline does the same arithmetic (equal bit for bit), data parallelism
// sums the gradients in another order (equal to rounding).
TEST_F(LocalMpi, DataAndPipelineParallelRunsReproduceOneRank) {
  NeedMpirun();
  const std::string config = WriteConfig("c.json", TinyConfig(12));
  RunResult one = Alone({"--config", config}, "one");
  RunResult dp = Mpi(2, {"--config", config}, "dp");
  RunResult pp = Mpi(2, {"--config", config, "--pp", "2"}, "pp");
  RunResult both = Mpi(4, {"--config", config, "--pp", "2", "--schedule", "\"gpipe\""}, "both");
  for (const RunResult* r : {&one, &dp, &pp, &both}) ASSERT_EQ(r->exit_code, 0) << r->err;
  const std::vector<Step> reference = StepLines(one.out);
  ASSERT_EQ(reference.size(), 12u);
  EXPECT_LT(reference.back().loss, reference.front().loss - 1);
  for (const RunResult* r : {&dp, &pp, &both}) {
    const std::vector<Step> steps = StepLines(r->out);  // one rank prints
    ASSERT_EQ(steps.size(), reference.size()) << r->out;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (r == &pp) {
        EXPECT_EQ(steps[i].loss, reference[i].loss) << "pp 2, step " << i + 1;
      } else {
        EXPECT_NEAR(steps[i].loss, reference[i].loss, 1e-5 * reference[i].loss) << "step " << i + 1;
      }
    }
  }
  EXPECT_NE(both.err.find("4 ranks (pp 2 x dp 2), 2 microbatches of 2 x 16 tokens per replica and "
                          "step (gpipe)"),
            std::string::npos)
      << both.err;
}

// Waits until dir/latest.json exists (at most 30 s).
bool AwaitCheckpoint(const std::string& dir) {
  for (int i = 0; i < 3000; ++i) {
    if (std::filesystem::exists(dir + "/latest.json")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::vector<pid_t> Children(pid_t parent) {
  std::vector<pid_t> pids;
  FILE* p = popen(("pgrep -P " + std::to_string(parent)).c_str(), "r");
  if (!p) return pids;
  for (int pid = 0; std::fscanf(p, "%d", &pid) == 1;) pids.push_back(pid);
  pclose(p);
  return pids;
}

// Gone, or a zombie waiting for init to reap it (mpirun exited first),
// within 5 seconds: a killed rank that maps the CUDA libraries (the cuda
// backend is linked in) takes a moment to tear down.
bool Ended(pid_t pid) {
  for (int tries = 0; tries < 50; ++tries) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, name, state;
    if (!(stat >> pid_field >> name >> state) || state == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int LatestStep(const std::string& dir) {
  return nlohmann::json::parse(ReadFile(dir + "/latest.json"))["step"].get<int>();
}

// A rank killed with SIGKILL after a checkpoint: mpirun ends the job (no
// survivor hangs in a collective), and a resumed run finishes with the
// losses of a run never killed.
TEST_F(LocalMpi, AKilledRankEndsTheRunAndResumeFinishesItExactly) {
  NeedMpirun();
  const std::string ck = dir_ + "/ck";
  const std::string config =
      WriteConfig("c.json", TinyConfig(30, 4) + "");  // 4 layers: 2 per stage
  RunResult whole = Mpi(4, {"--config", config, "--pp", "2"}, "whole");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::vector<Step> reference = StepLines(whole.out);
  ASSERT_EQ(reference.size(), 30u);

  Process run(MpiArgs(4, {"--config", config, "--pp", "2", "--steps", "100000",
                          "--checkpoint_every", "3", "--checkpoint_dir", ck}),
              dir_, "killed");
  ASSERT_TRUE(AwaitCheckpoint(ck)) << run.err();
  const std::vector<pid_t> ranks = Children(run.pid());
  ASSERT_EQ(ranks.size(), 4u);
  kill(ranks.back(), SIGKILL);
  RunResult killed = run.Wait(30);
  EXPECT_FALSE(killed.timed_out) << "mpirun did not end the job: " << killed.err;
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_LT(killed.seconds, 30);
  for (pid_t pid : ranks) EXPECT_TRUE(Ended(pid)) << "rank process " << pid << " survived";

  const int checkpoint = LatestStep(ck);
  ASSERT_LT(checkpoint, 30) << "the killed run got too far for this test";
  RunResult resumed = Mpi(
      4, {"--config", config, "--pp", "2", "--checkpoint_dir", ck, "--resume", "true"}, "resumed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::vector<Step> rest = StepLines(resumed.out);
  ASSERT_EQ(rest.size(), static_cast<size_t>(30 - checkpoint));
  for (const Step& s : rest) {
    EXPECT_EQ(s.loss, reference[s.step - 1].loss) << "step " << s.step;
  }
  EXPECT_NE(resumed.err.find("resumed from the checkpoint of step " + std::to_string(checkpoint)),
            std::string::npos);
}

// SIGUSR1 to mpirun reaches every rank; they finish the step, agree, print
// the summary and stop with 130.
TEST_F(LocalMpi, ASignalStopsEveryRankAfterTheStep) {
  NeedMpirun();
  const std::string ck = dir_ + "/ck";
  const std::string config = WriteConfig("c.json", TinyConfig(100000));
  Process run(MpiArgs(2, {"--config", config, "--checkpoint_every", "5", "--checkpoint_dir", ck}),
              dir_, "stopped");
  ASSERT_TRUE(AwaitCheckpoint(ck)) << run.err();
  kill(run.pid(), SIGUSR1);
  RunResult r = run.Wait(30);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  nlohmann::json summary;
  const std::vector<Step> steps = StepLines(r.out, &summary);
  ASSERT_FALSE(steps.empty());
  EXPECT_FALSE(summary.is_null());
  const std::string message = "trainsim-train: interrupted at step " +
                              std::to_string(steps.back().step) +
                              "; the last checkpoint is at step " + std::to_string(LatestStep(ck)) +
                              "; run again with resume to continue";
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

TEST_F(LocalMpi, ABadConfigExitsWithTwoAndOneMessage) {
  const std::string config = WriteConfig("c.json", R"({"layers": 2, "tp": 2})");
  RunResult r = Alone({"--config", config}, "bad");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "trainsim-train: " + config + ": missing required field hidden\n");
  RunResult usage = Alone({}, "usage");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(usage.err.substr(0, 63),
            "trainsim-train: no run config: give --config FILE (see --help)\n");
  NeedMpirun();
  const std::string tiny = WriteConfig("t.json", TinyConfig(2));
  RunResult world = Mpi(3, {"--config", tiny, "--pp", "2"}, "world");
  EXPECT_EQ(world.exit_code, 2);
  const std::string line = "trainsim-train: pp = 2 does not divide the 3 ranks\n";
  ASSERT_NE(world.err.find(line), std::string::npos) << world.err;
  EXPECT_EQ(world.err.find(line), world.err.rfind(line)) << "printed by more than one rank";
}

}  // namespace
}  // namespace trainsim::local
