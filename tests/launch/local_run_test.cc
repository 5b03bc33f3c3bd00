#include "launch/local_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "launch/trainer_process.h"
#include "tests/test_util.h"

namespace trainsim::launch {
namespace {

LaunchPlan Plan(const std::string& file) {
  Expected<LaunchPlan> p = LoadPlanFile(
      std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/" + file, test::BuiltinCatalog());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

TEST(SizeLocalRun, KeepsASmallModelAndMapsTheLayoutOntoTheRanks) {
  LaunchPlan plan = Plan("small.plan.json");  // 8 layers, hidden 1024, seq 1024: too long
  plan.scenario.model.seq_len = 256;          // now small enough to train as it is
  plan.scenario.parallel.pp = 2;
  plan.scenario.training.micro_batch = 8;
  LocalOptions o;
  o.ranks = 4;
  Expected<LocalRunConfig> c = SizeLocalRun(plan, o);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->scaled_down);
  EXPECT_EQ(c->config.layers, 8);
  EXPECT_EQ(c->config.hidden, 1024);
  EXPECT_EQ(c->config.pp, 2);
  EXPECT_EQ(c->config.dp, 2);
  EXPECT_EQ(c->config.micro_batch, 4);                 // at most 4 here
  EXPECT_EQ(c->config.global_batch, 2 * 4 * (2 * 2));  // dp x micro batch x 2 pp microbatches
  EXPECT_EQ(c->config.checkpoint_dir, "launch-out/local/checkpoints");
}

TEST(SizeLocalRun, ScalesDownALargeModel) {
  LaunchPlan plan = Plan("small.plan.json");
  plan.scenario.model.seq_len = 2048;
  plan.scenario.parallel.pp = 8;
  LocalOptions o;
  o.ranks = 3;  // pp: the largest divisor of 3 ranks up to min(plan pp 8, 4 layers)
  Expected<LocalRunConfig> c = SizeLocalRun(plan, o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->scaled_down);
  EXPECT_EQ(c->config.pp, 3);
  EXPECT_EQ(c->config.dp, 1);
  EXPECT_EQ(c->config.layers % c->config.pp, 0);  // 4 layers rounded up to 6
  EXPECT_EQ(c->config.layers, 6);
  o.ranks = 0;
  EXPECT_EQ(SizeLocalRun(plan, o).status().message(),
            "--ranks: expected at least 1 process, got 0");
}

TEST(PredictionScenario, UsesTheCpuProfileAndChecksItsCores) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("local_run_test." + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  const std::string profile = dir + "/cpu.json";
  const std::string cmd = std::string(TRAINSIM_CALIBRATE_BINARY) + " --backend cpu --quick --out " +
                          profile + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  Expected<int> cores = ProfileCores(profile);
  ASSERT_TRUE(cores.ok()) << cores.status().message();
  local::RunConfig c;
  c.layers = 4, c.hidden = 512, c.heads = 8, c.ffn_hidden = 2048, c.seq_len = 128, c.vocab = 256;
  c.micro_batch = 1, c.global_batch = 8, c.pp = 1;
  c.dp = *cores;
  Expected<Scenario> s = PredictionScenario(c, profile, "local-cpu", dir + "/local/scenario.json",
                                            test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->instance.name, "local-cpu");
  EXPECT_EQ(s->total_gpus(), *cores);
  EXPECT_NE(s->profile, nullptr);
  EXPECT_FALSE(s->training.flash_attention);  // the local layer stores its scores
  c.dp = *cores + 1;
  EXPECT_EQ(PredictionScenario(c, profile, "local-cpu", dir + "/local/scenario.json",
                               test::BuiltinCatalog())
                .status()
                .message(),
            profile + ": the profile measured " + std::to_string(*cores) + " cores, the run uses " +
                std::to_string(*cores + 1) + " ranks; run with --ranks " + std::to_string(*cores) +
                " for a prediction");
  std::filesystem::remove_all(dir);
}

// The process side with a stand-in trainer: a shell printing the trainer's lines.
TEST(RunTrainer, StreamsStepLinesAndTheSummary) {
  struct Seen : TrainerObserver {
    std::vector<int> steps;
    void Step(const StepLine& s) override { steps.push_back(s.step); }
  } seen;
  Expected<TrainerResult> r =
      RunTrainer({"sh", "-c",
                  "echo '{\"step\": 1, \"loss\": 9.1, \"step_s\": 0.5}'; echo noise; "
                  "echo '{\"step\": 2, \"loss\": 8.0, \"step_s\": 0.25}'; "
                  "echo '{\"summary\": {\"steps\": 2}}'; exit 3"},
                 &seen);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(seen.steps, (std::vector<int>{1, 2}));
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_DOUBLE_EQ(r->steps[1].loss, 8.0);
  EXPECT_DOUBLE_EQ(r->steps[1].step_s, 0.25);
  ASSERT_TRUE(r->summary.has_value());
  EXPECT_EQ((*r->summary)["steps"], 2);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(RunTrainer({"no-such-tool-here"}, nullptr).status().message(),
            "cannot start no-such-tool-here: No such file or directory");
}

// Cancel from another thread: the stand-in trainer traps SIGUSR1 as the real
// one does (stop after the step, exit 130); it would run 20 s otherwise.
TEST(RunTrainer, AStopFlagSignalsTheChildAsCtrlCDoes) {
  std::atomic<bool> stop{false};
  struct StopAtFirstStep : TrainerObserver {
    std::atomic<bool>* stop;
    void Step(const StepLine&) override { *stop = true; }
  } observer;
  observer.stop = &stop;
  const auto start = std::chrono::steady_clock::now();
  Expected<TrainerResult> r =
      RunTrainer({"sh", "-c",
                  "trap 'echo \"{\\\"summary\\\": {\\\"steps\\\": 1}}\"; exit 130' USR1; "
                  "echo '{\"step\": 1, \"loss\": 9.1, \"step_s\": 0.5}'; "
                  "i=0; while [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; exit 0"},
                 &observer, &stop);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->exit_code, 130);
  EXPECT_EQ(r->steps.size(), 1u);
  ASSERT_TRUE(r->summary.has_value());
  EXPECT_LT(elapsed_s, 5);

  // A flag raised before the start starts nothing.
  r = RunTrainer({"sh", "-c", "echo '{\"step\": 1, \"step_s\": 0.5}'; exit 3"}, nullptr, &stop);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(r->steps.empty());

  // A flag that stays down changes nothing.
  std::atomic<bool> never{false};
  r = RunTrainer({"sh", "-c", "sleep 0.3; echo '{\"step\": 1, \"step_s\": 0.5}'; exit 3"}, nullptr,
                 &never);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->interrupted);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->steps.size(), 1u);
}

TEST(MpirunCommand, AddsRootAndOversubscribeOnlyWhenNeeded) {
  EXPECT_EQ(MpirunCommand(2, "/b/t", "c.json", false, 2),
            (std::vector<std::string>{"mpirun", "-np", "2", "/b/t", "--config", "c.json"}));
  EXPECT_EQ(MpirunCommand(4, "/b/t", "c.json", true, 2),
            (std::vector<std::string>{"mpirun", "-np", "4", "--allow-run-as-root",
                                      "--oversubscribe", "/b/t", "--config", "c.json"}));
}

}  // namespace
}  // namespace trainsim::launch
