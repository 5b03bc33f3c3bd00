// `trainsim sweep` as a user runs it: the real binary on real (small)
// scenarios, killed, interrupted, resumed, and spread over MPI ranks; the
// results must be the same bytes as one uninterrupted single-process run.
//
// The binary runs in the repository root, so the point ids are the scenario
// paths as given here ("scenarios/x.json#0").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "planner/sweep/sweep_world.h"
#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif
#ifndef TRAINSIM_BINARY
#define TRAINSIM_BINARY "trainsim"
#endif

namespace trainsim {

using trainsim::test::ReadFile;
namespace {

namespace fs = std::filesystem;

// Eight points, about 2 s of simulation on one thread; the last one does not fit.
const std::vector<std::string> kScenarios = {
    "scenarios/gpt3-175b-p4d.json",       "scenarios/llama2-70b-p5.json",
    "scenarios/llama2-13b-p4d-fsdp.json", "scenarios/llama2-7b-p4d-dp.json",
    "scenarios/resnet50-p3.json",         "scenarios/bert-large-p3.json",
    "tests/cli/data/gpt-1.7b-small.json", "tests/cli/data/gpt3-175b-one-node.json"};

size_t CountLines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

struct RunResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out, err;
};

// Starts `argv` in the repository root, in a process group of its own (as a
// shell would), with stdout and stderr into files under `dir`.
pid_t Start(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> words = args;
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    int in = open("/dev/null", O_RDONLY);
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (setpgid(0, 0) != 0 || in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 ||
        dup2(e, 2) < 0 || chdir(TRAINSIM_SOURCE_DIR) != 0) {
      _exit(126);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

RunResult Wait(pid_t pid, const std::string& dir) {
  RunResult r;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(dir + "/stdout");
  r.err = ReadFile(dir + "/stderr");
  return r;
}

// Waits until `path` holds at least one whole line (a journaled point).
bool AwaitLine(const std::string& path) {
  for (int i = 0; i < 20000; ++i) {
    if (CountLines(ReadFile(path)) >= 1) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return false;
}

bool OnPath(const std::string& program) {
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

class SweepCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sweep_cli_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Sweep(const std::string& out, const std::string& jobs) const {
    std::vector<std::string> args = {TRAINSIM_BINARY, "sweep"};
    args.insert(args.end(), kScenarios.begin(), kScenarios.end());
    // --simulate: these files carry search sections; the runner's tests simulate them.
    args.insert(args.end(), {"--out", Out(out), "--jobs", jobs, "--simulate"});
    return args;
  }
  RunResult Run(const std::vector<std::string>& args) { return Wait(Start(args, dir_), dir_); }
  std::string Out(const std::string& name) const { return dir_ + "/" + name; }
  // The uninterrupted single-process run, on two threads.
  void RunReference() {
    RunResult r = Run(Sweep("whole", "2"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void ExpectSameResults(const std::string& name) const {
    for (const char* file : {"/results.csv", "/results.json"}) {
      const std::string reference = ReadFile(Out("whole") + file);
      ASSERT_FALSE(reference.empty());
      EXPECT_EQ(ReadFile(Out(name) + file), reference) << name << file;
    }
  }

  std::string dir_;
};

TEST_F(SweepCliTest, WritesResultsAndSummarises) {
  RunResult r = Run(Sweep("out", "2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "sweep: 8 points: 7 ok, 1 do not fit, 0 errors (0 from the journal, 8 "
            "evaluated)\nresults: " +
                Out("out") + "/results.csv, " + Out("out") + "/results.json\n");
  EXPECT_EQ(r.err.rfind("sweep: 8 points, 0 already in the journal, 8 to evaluate\n", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("sweep: 8 of 8 points done, "), std::string::npos) << r.err;
  const std::string csv = ReadFile(Out("out") + "/results.csv");
  EXPECT_EQ(CountLines(csv), 9u);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "point,id,scenario,status,message,instance,nodes,gpus,tp,pp,dp,ep,cp,zero_stage,shard_group,"
      "micro_batch,recompute,schedule,pricing,pricing_terms,step_time_s,step_time_low_s,step_time_"
      "high_s,"
      "samples_per_s,tokens_per_s,mfu,time_to_train_h,time_to_train_p90_h,cost_usd,"
      "cost_p90_usd");
  EXPECT_NE(csv.find("\n7,tests/cli/data/gpt3-175b-one-node.json#0,gpt3-175b-one-node,"
                     "does-not-fit,\"needs 347.9 GiB"),
            std::string::npos)
      << csv;
  // Every simulated row carries the 80% error band of its step time, as its detail's band
  // says (a band need not contain the prediction: where the corpus finds the simulator too fast
  // for the family, as for BERT data parallelism on V100, the whole band is slower).
  const nlohmann::json rows = nlohmann::json::parse(ReadFile(Out("out") + "/results.json"))["rows"];
  for (const nlohmann::json& row : rows) {
    if (row["status"] != "ok") continue;
    EXPECT_LT(row["step_time_low_s"].get<double>(), row["step_time_high_s"].get<double>()) << row;
    EXPECT_EQ(row["step_time_low_s"], row["detail"]["band"]["step_time_s"][0]) << row;
    EXPECT_EQ(row["step_time_high_s"], row["detail"]["band"]["step_time_s"][1]) << row;
  }
}

TEST_F(SweepCliTest, AKilledSweepResumesToTheSameBytes) {
  RunReference();
  const std::string journal = Out("cut") + "/journal-0.jsonl";
  pid_t pid = Start(Sweep("cut", "1"), dir_);
  ASSERT_TRUE(AwaitLine(journal));
  kill(-pid, SIGKILL);  // the sweep and the simulator's child
  ASSERT_EQ(Wait(pid, dir_).exit_code, 128 + SIGKILL);
  const size_t journaled = CountLines(ReadFile(journal));
  ASSERT_GE(journaled, 1u);
  ASSERT_LT(journaled, 8u) << "the sweep finished before it was killed";
  EXPECT_FALSE(fs::exists(Out("cut") + "/results.csv"));

  RunResult rest = Run(Sweep("cut", "2"));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.out.find("(" + std::to_string(journaled) + " from the journal, " +
                          std::to_string(8 - journaled) + " evaluated)"),
            std::string::npos)
      << rest.out;
  ExpectSameResults("cut");
}

TEST_F(SweepCliTest, CtrlCFinishesThePointsInFlightAndTheSameCommandContinues) {
  RunReference();
  const std::string journal = Out("cut") + "/journal-0.jsonl";
  pid_t pid = Start(Sweep("cut", "2"), dir_);
  ASSERT_TRUE(AwaitLine(journal));
  kill(-pid, SIGINT);  // as a terminal does: the whole foreground group
  RunResult cut = Wait(pid, dir_);
  ASSERT_EQ(cut.exit_code, 130) << cut.err;
  const size_t journaled = CountLines(ReadFile(journal));
  ASSERT_LT(journaled, 8u) << "the sweep finished before it was interrupted";
  EXPECT_NE(cut.err.find("trainsim: interrupted: " + std::to_string(journaled) +
                         " of 8 points done; run the same command again to continue\n"),
            std::string::npos)
      << cut.err;
  EXPECT_EQ(ReadFile(journal).find("\"error\""), std::string::npos) << ReadFile(journal);
  EXPECT_FALSE(fs::exists(Out("cut") + "/results.csv"));

  RunResult rest = Run(Sweep("cut", "2"));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  ExpectSameResults("cut");
}

TEST_F(SweepCliTest, MpiRanksWriteTheSameBytesAsOneProcess) {
  if (!planner::SweepsCanUseMpi()) GTEST_SKIP() << "this build has no MPI (libopenmpi-dev)";
  if (!OnPath("mpirun")) GTEST_SKIP() << "mpirun is not on PATH (openmpi-bin)";
  RunReference();
  for (int ranks : {2, 3}) {
    const std::string name = "mpi" + std::to_string(ranks);
    std::vector<std::string> args = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                     std::to_string(ranks)};
    std::vector<std::string> sweep = Sweep(name, "1");
    args.insert(args.end(), sweep.begin(), sweep.end());
    RunResult r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out,
              "sweep: 8 points: 7 ok, 1 do not fit, 0 errors (0 from the journal, 8 "
              "evaluated)\nresults: " +
                  Out(name) + "/results.csv, " + Out(name) + "/results.json\n");
    for (int rank = 0; rank < ranks; ++rank) {
      EXPECT_GE(CountLines(ReadFile(Out(name) + "/journal-" + std::to_string(rank) + ".jsonl")),
                8u / ranks)
          << "rank " << rank;
    }
    ExpectSameResults(name);
  }
}

TEST_F(SweepCliTest, BadInputIsRefusedBeforeAnyWork) {
  struct Case {
    std::vector<std::string> args;
    std::string error;  // the first line of stderr
  } cases[] = {
      {{}, "trainsim: sweep needs scenario files"},
      {{"scenarios/resnet50-p3.json", "--jobs", "0"},
       "trainsim: --jobs: expected a whole number of threads >= 1, got \"0\""},
      {{"scenarios/resnet50-p3.json", "--jobs", "2x"},
       "trainsim: --jobs: expected a whole number of threads >= 1, got \"2x\""},
      {{"scenarios/resnet50-p3.json", "--out"}, "trainsim: --out needs a directory"},
      {{"scenarios/resnet50-p3.json", "--fast"}, "trainsim: unknown option --fast"},
      {{"scenarios/nope.json", "--out", Out("x")},
       "trainsim: scenarios/nope.json: cannot read: No such file or directory"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {TRAINSIM_BINARY, "sweep"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunResult r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << c.error;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.error);
  }
  EXPECT_FALSE(fs::exists(Out("x")));
}

TEST_F(SweepCliTest, AScenarioChangedSinceItWasSweptIsRefused) {
  const std::string scenario = dir_ + "/resnet.json";
  fs::copy_file(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/resnet50-p3.json", scenario);
  const std::vector<std::string> args = {TRAINSIM_BINARY, "sweep", scenario, "--out", Out("out")};
  ASSERT_EQ(Run(args).exit_code, 0);
  std::string text = ReadFile(scenario);
  text.replace(text.find("\"epochs\": 90"), 12, "\"epochs\": 45");
  std::ofstream(scenario) << text;
  RunResult r = Run(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(": the inputs of " + scenario + "#0 changed since it was evaluated"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("use another output directory (--out) or remove " + Out("out") + "\n"),
            std::string::npos)
      << r.err;
}

// Without --simulate: a file with a search section is planned, a grid gives
// one simulated point per grid value.
TEST_F(SweepCliTest, PlansSearchSectionsAndExpandsGrids) {
  RunResult r = Run({TRAINSIM_BINARY, "sweep", "tests/cli/data/plan-small.json",
                     "scenarios/sweeps/gpt3-nodes.json", "--out", Out("mixed"), "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rows =
      nlohmann::json::parse(ReadFile(Out("mixed") + "/results.json"))["rows"];
  ASSERT_EQ(rows.size(), 5u);
  const nlohmann::json& plan = rows[0];
  EXPECT_EQ(plan["id"], "tests/cli/data/plan-small.json#0");
  EXPECT_EQ(plan["status"], "ok");
  EXPECT_TRUE(plan["cost_usd"].is_number());
  EXPECT_EQ(plan["detail"]["kind"], "trainsim-plan");
  EXPECT_EQ(plan["pricing"], plan["detail"]["recommendation"]["pricing"]);
  EXPECT_EQ(plan["pricing"], "spot");  // a half-hour job: the terms say how rarely it stops
  EXPECT_EQ(plan["pricing_terms"], "0.0 interruptions expected");
  EXPECT_TRUE(rows[1]["pricing_terms"].is_null());  // a simulated point
  for (int k = 0; k < 4; ++k) {
    const nlohmann::json& point = rows[1 + k];
    EXPECT_EQ(point["id"], "scenarios/sweeps/gpt3-nodes.json#" + std::to_string(k));
    EXPECT_EQ(point["nodes"], 32 << k);
    EXPECT_EQ(point["scenario"], "gpt3-nodes[cluster.nodes=" + std::to_string(32 << k) + "]");
    EXPECT_EQ(point["status"], "ok");
  }
}

}  // namespace
}  // namespace trainsim
