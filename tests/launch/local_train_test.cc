// The local trainer in this process (a world of one rank): learning,
// determinism, checkpoints and resume, the config's errors, the output lines.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "launch/local/checkpoint.h"
#include "launch/local/report.h"
#include "launch/local/run_config.h"
#include "launch/local/trainer.h"

namespace trainsim::local {
namespace {

std::string With(const std::vector<std::pair<std::string, std::string>>& fields);

RunConfig Tiny() {
  Expected<RunConfig> c = ParseRunConfig(With({}), "tiny.json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  RunConfig config = *c;
  EXPECT_TRUE(ResolveLayout(&config, 1).ok());
  return config;
}

struct Recorder : TrainObserver {
  void OnStart(int first, int64_t) override { first_step = first; }
  void OnStep(const StepResult& s) override { steps.push_back(s); }
  void OnCheckpoint(int step) override { checkpoints.push_back(step); }
  int first_step = 0;
  std::vector<StepResult> steps;
  std::vector<int> checkpoints;
};

// Trains on one rank; `stop_after`: ask to stop once that many steps ran.
Expected<TrainResult> TrainSolo(const RunConfig& c, Recorder* r, int stop_after = 0) {
  SoloTransport transport;
  int calls = 0;
  return Train(c, RankLayout::Of(0, 1, 1), transport, *r,
               [&] { return stop_after > 0 && ++calls >= stop_after; });
}

std::vector<double> Losses(const std::vector<StepResult>& steps) {
  std::vector<double> losses;
  for (const StepResult& s : steps) losses.push_back(s.loss);
  return losses;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "local_train.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST(LocalTrain, LossFallsWellBelowChanceOnOneRank) {
  Recorder r;
  Expected<TrainResult> result = TrainSolo(Tiny(), &r);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->steps.size(), 40u);
  EXPECT_NEAR(result->steps.front().loss, std::log(64.0), 0.1);
  // The floor is ln(64) / 16 = 0.26 (the first token of a sequence is random).
  EXPECT_LT(result->steps.back().loss, 0.6);
  EXPECT_FALSE(result->interrupted);
  for (const StepResult& s : result->steps) EXPECT_GT(s.seconds, 0);
}

TEST(LocalTrain, TheSeedDecidesTheLossesBitForBit) {
  RunConfig c = Tiny();
  c.steps = 4;
  Recorder a, b, other;
  TrainSolo(c, &a);
  TrainSolo(c, &b);
  c.seed = 2;
  TrainSolo(c, &other);
  EXPECT_EQ(Losses(a.steps), Losses(b.steps));
  EXPECT_NE(Losses(a.steps), Losses(other.steps));
}

using LocalCheckpoint = TempDir;

// Interrupted after step 6 with checkpoints every 4 steps, then resumed: the
// steps after the checkpoint repeat the uninterrupted run's losses exactly.
TEST_F(LocalCheckpoint, ResumeContinuesAsIfNeverStopped) {
  RunConfig c = Tiny();
  c.steps = 12;
  Recorder whole;
  TrainSolo(c, &whole);

  c.checkpoint_every = 4;
  c.checkpoint_dir = dir_;
  Recorder cut;
  Expected<TrainResult> stopped = TrainSolo(c, &cut, 6);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_TRUE(stopped->interrupted);
  EXPECT_EQ(stopped->steps.size(), 6u);
  EXPECT_EQ(stopped->checkpoint_step, 4);
  EXPECT_EQ(cut.checkpoints, std::vector<int>{4});
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/step-4/rank-0.bin"));

  c.resume = true;
  Recorder resumed;
  Expected<TrainResult> rest = TrainSolo(c, &resumed);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(resumed.first_step, 5);
  ASSERT_EQ(resumed.steps.size(), 8u);
  for (size_t i = 0; i < resumed.steps.size(); ++i) {
    EXPECT_EQ(resumed.steps[i].step, static_cast<int>(i) + 5);
    EXPECT_EQ(resumed.steps[i].loss, whole.steps[i + 4].loss) << "step " << i + 5;
  }
  // Checkpoints of steps 8 and 12 were written; only the latest is kept.
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/step-4"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/step-8"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/step-12/rank-0.bin"));
}

TEST_F(LocalCheckpoint, ResumeWithoutACheckpointStartsAtStepOne) {
  RunConfig c = Tiny();
  c.steps = 2;
  c.checkpoint_dir = dir_;
  c.resume = true;
  Recorder r;
  ASSERT_TRUE(TrainSolo(c, &r).ok());
  EXPECT_EQ(r.first_step, 1);
  EXPECT_EQ(r.steps.size(), 2u);
}

TEST_F(LocalCheckpoint, ResumeRefusesAnotherConfigurationOrWorld) {
  RunConfig c = Tiny();
  c.steps = 2;
  c.checkpoint_every = 2;
  c.checkpoint_dir = dir_;
  Recorder r;
  ASSERT_TRUE(TrainSolo(c, &r).ok());
  c.resume = true;
  c.hidden = 16;
  Recorder refused;
  EXPECT_EQ(TrainSolo(c, &refused).status().message(),
            "resume: " + dir_ +
                "/latest.json: the checkpoint is of another configuration: hidden = 32 there, 16 "
                "here");
  EXPECT_TRUE(refused.steps.empty());
  c.hidden = 32;
  EXPECT_EQ(ReadLatest(dir_, 2, TrajectoryFields(c)).status().message(),
            "resume: " + dir_ +
                "/latest.json: the checkpoint was written by 1 ranks, this run has 2: start it "
                "with as many");
  // A rank file that does not fit the stage.
  std::filesystem::resize_file(dir_ + "/step-2/rank-0.bin", 100);
  EXPECT_EQ(TrainSolo(c, &refused).status().message(),
            dir_ + "/step-2/rank-0.bin: truncated checkpoint");
}

// --- the run config ---------------------------------------------------------

// The tiny config with fields replaced or added: {"heads", "5"} replaces heads.
std::string With(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<std::pair<std::string, std::string>> all = {
      {"layers", "2"},   {"hidden", "32"}, {"heads", "4"},       {"ffn_hidden", "128"},
      {"seq_len", "16"}, {"vocab", "64"},  {"micro_batch", "2"}, {"global_batch", "8"},
      {"steps", "40"},   {"lr", "0.01"}};
  for (const auto& [key, value] : fields) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& f) { return f.first == key; });
    if (it != all.end()) {
      it->second = value;
    } else {
      all.emplace_back(key, value);
    }
  }
  std::string text = "{";
  for (const auto& [key, value] : all)
    text += (text.size() > 1 ? ", \"" : "\"") + key + "\": " + value;
  return text + "}";
}

// "c.json:1:COLUMN: " for the value of `key` in `text`.
std::string At(const std::string& text, const std::string& key) {
  const size_t value = text.find("\"" + key + "\": ") + key.size() + 4;
  return "c.json:1:" + std::to_string(value + 1) + ": ";
}

TEST(LocalRunConfig, ReadsEveryField) {
  Expected<RunConfig> c = ParseRunConfig(With({{"pp", "2"},
                                               {"dp", "3"},
                                               {"tp", "1"},
                                               {"schedule", "\"gpipe\""},
                                               {"bucket_mb", "1.5"},
                                               {"seed", "9"},
                                               {"warmup_steps", "3"},
                                               {"checkpoint_every", "5"},
                                               {"checkpoint_dir", "\"/tmp/x\""},
                                               {"resume", "true"},
                                               {"backend", "\"cpu\""}}),
                                         "c.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->layers, 2);
  EXPECT_EQ(c->ffn_hidden, 128);
  EXPECT_EQ(c->pp, 2);
  EXPECT_EQ(c->dp, 3);
  EXPECT_EQ(c->schedule, Schedule::kGpipe);
  EXPECT_EQ(c->bucket_mb, 1.5);
  EXPECT_EQ(c->seed, 9);
  EXPECT_EQ(c->warmup_steps, 3);
  EXPECT_EQ(c->checkpoint_every, 5);
  EXPECT_EQ(c->checkpoint_dir, "/tmp/x");
  EXPECT_TRUE(c->resume);
  EXPECT_EQ(c->lr, 0.01);
}

// The writer `trainsim launch --backend local` uses: what it writes reads back the same.
TEST(LocalRunConfig, WriterRoundTrips) {
  RunConfig c = Tiny();
  c.global_batch = int64_t{1} << 20;
  c.checkpoint_dir = "out/ck";
  c.trace_file = "out/trace.json";
  c.resume = true;
  c.lr = 1.0 / 3;
  c.schedule = Schedule::kGpipe;
  const std::string text = RunConfigToJson(c);
  Expected<RunConfig> back = ParseRunConfig(text, "c.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(RunConfigToJson(*back), text);
  EXPECT_EQ(back->global_batch, int64_t{1} << 20);
  EXPECT_DOUBLE_EQ(back->lr, 1.0 / 3);
  EXPECT_EQ(back->schedule, Schedule::kGpipe);
}

TEST(LocalRunConfig, ErrorsNameTheFieldExactly) {
  const std::string zero_steps = With({{"steps", "0"}}), fast = With({{"lr", "\"fast\""}});
  const std::string resume_one = With({{"resume", "1"}}), zb = With({{"schedule", "\"zb\""}});
  const std::string typo = With({{"hiden", "3"}});
  const struct {
    std::string text, message;
  } kCases[] = {
      {"[]", "c.json:1:1: the document: expected an object, got array"},
      {R"({"layers": 2})", "c.json: missing required field hidden"},
      {zero_steps, At(zero_steps, "steps") + "steps: expected an integer >= 1, got 0"},
      {fast, At(fast, "lr") + "lr: expected a number >= 0, got \"fast\""},
      {With({{"lr", "0"}}), "c.json: lr: expected a number > 0, got 0"},
      {resume_one, At(resume_one, "resume") + "resume: expected true or false, got 1"},
      {zb, At(zb, "schedule") + "schedule: expected one of 1f1b, gpipe, got \"zb\""},
      {With({{"tp", "2"}}),
       "c.json: tp: the local runner has no tensor parallelism; got 2 (map the plan's tp onto dp "
       "or pp ranks)"},
      {With({{"heads", "5"}}), "c.json: heads: 5 does not divide hidden = 32"},
      {With({{"pp", "3"}}), "c.json: pp: 3 stages for 2 layers; every stage needs a layer"},
      {With({{"checkpoint_every", "5"}}),
       "c.json: checkpoint_dir: required with checkpoint_every > 0"},
      {With({{"resume", "true"}}), "c.json: checkpoint_dir: required with resume"},
      {With({{"trace_file", "\"t.json\""}, {"backend", "\"cuda\""}}),
       "c.json: trace_file: the trace times the cpu backend's kernels as they run; the cuda "
       "backend queues them (profile it with nsys or torch.profiler instead)"},
      {typo, "c.json:1:" + std::to_string(typo.find("\"hiden\"") + 1) +
                 ": unknown field hiden (known: layers, hidden, heads, ffn_hidden, seq_len, vocab, "
                 "micro_batch, global_batch, pp, dp, tp, bucket_mb, steps, lr, seed, "
                 "warmup_steps, checkpoint_every, checkpoint_dir, trace_file, resume, schedule, "
                 "backend)"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(ParseRunConfig(c.text, "c.json").status().message(), c.message) << c.text;
  }
  EXPECT_EQ(LoadRunConfig("/nonexistent/run.json").status().message(),
            "/nonexistent/run.json: cannot read the run config");
}

TEST(LocalRunConfig, CommandLineFieldsOverrideTheFile) {
  Expected<RunConfig> c = RunConfigFromArgs("", {{"layers", "2"},
                                                 {"hidden", "32"},
                                                 {"heads", "4"},
                                                 {"ffn_hidden", "128"},
                                                 {"seq_len", "16"},
                                                 {"vocab", "64"},
                                                 {"micro_batch", "2"},
                                                 {"global_batch", "8"},
                                                 {"steps", "3"},
                                                 {"checkpoint_dir", "/tmp/ck"},
                                                 {"resume", "true"}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->steps, 3);
  EXPECT_EQ(c->checkpoint_dir, "/tmp/ck");
  EXPECT_TRUE(c->resume);
  EXPECT_EQ(RunConfigFromArgs("", {{"steps", "0"}}).status().message(),
            "--steps: expected an integer >= 1, got 0");
  EXPECT_EQ(RunConfigFromArgs("", {{"steps", "2"}}).status().message(),
            "command line: missing required field layers");
  EXPECT_EQ(RunConfigFromArgs("", {{"bogus", "1"}}).status().message().substr(0, 29),
            "unknown option --bogus (known");
}

TEST(LocalRunConfig, LayoutChecksNeedTheWorld) {
  RunConfig c = *ParseRunConfig(With({{"pp", "2"}}), "c.json");
  EXPECT_EQ(ResolveLayout(&c, 3).message(), "pp = 2 does not divide the 3 ranks");
  ASSERT_TRUE(ResolveLayout(&c, 4).ok());
  EXPECT_EQ(c.dp, 2);
  c.dp = 4;
  EXPECT_EQ(ResolveLayout(&c, 4).message(),
            "dp = 4 but 4 ranks / pp 2 = 2 replicas (start pp x dp ranks)");
  c.dp = 0;
  c.global_batch = 6;
  EXPECT_EQ(ResolveLayout(&c, 4).message(),
            "global_batch = 6 is not a multiple of dp 2 x micro_batch 2");
}

// --- output lines -------------------------------------------------------------

TEST(LocalReport, LinesAreCompactJson) {
  EXPECT_EQ(StepLine(StepResult{3, 4.25, 0.5}), R"({"step": 3, "loss": 4.25, "step_s": 0.5})");
  std::vector<StepResult> steps = {{1, 4, 9}, {2, 3, 1}, {3, 2, 3}, {4, 1, 2}};
  const RunSummary s = Summarize(steps, 1);
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.mean_step_s, 2);
  EXPECT_EQ(s.median_step_s, 2);
  EXPECT_EQ(SummaryLine(s), R"({"summary": {"steps": 3, "mean_step_s": 2.0, "median_step_s": 2.0, )"
                            R"("first_loss": 3.0, "last_loss": 1.0}})");
  EXPECT_EQ(SummaryLine(Summarize(steps, 4)),
            R"({"summary": {"steps": 0, "mean_step_s": null, "median_step_s": null, )"
            R"("first_loss": null, "last_loss": null}})");
}

}  // namespace
}  // namespace trainsim::local
