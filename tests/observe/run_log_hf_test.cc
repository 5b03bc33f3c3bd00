// Training logs read back (observe/run_log.h), the Hugging Face Trainer's and torchtitan's:
// the Trainer's tqdm bar among its other output, its end-of-training line, torchtitan's
// coloured step lines, detection beside the other formats, and every refusal with its file
// and line.
#include <gtest/gtest.h>

#include <string>

#include "observe/run_log.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

// A redraw of the Trainer's bar in tqdm's format (synthetic values): "\r" and the bar.
std::string Bar(int n, int total, const std::string& rate) {
  return "\r" + std::to_string(100 * n / total) + "%|#####     | " + std::to_string(n) + "/" +
         std::to_string(total) + " [00:10<00:10, " + rate + "]";
}

// torchtitan's step line in its format, without colours (synthetic values).
std::string Titan(int step, const std::string& tps) {
  return "[rank0]:[titan] 2026-11-27 08:00:00,000 - root - INFO - step: " + std::to_string(step) +
         "  loss:  7.12345  grad_norm:  1.2345  memory: 41.32GiB(52.23%)  tps: " + tps +
         "  tflops: 452.10  mfu: 45.71%\n";
}

TEST(RunLogHf, TheTrainersBarAmongItsOtherOutput) {
  Expected<RunLog> log = LoadRunLog(kData + "hf-trainer-synthetic.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kHfTrainer);
  EXPECT_EQ(log->figure, StepFigure::kSmoothed);
  EXPECT_FALSE(log->per_sample);
  EXPECT_FALSE(log->per_token);
  // One sample per step 1-12: not the bars with a description (checkpoint shards, Map), the
  // nested evaluation bar, the evaluation bar after training (4 batches), nor the redraws.
  ASSERT_EQ(log->steps.size(), 12u);
  EXPECT_EQ(log->steps[0].iteration, 1);
  EXPECT_DOUBLE_EQ(log->steps[0].step_s, 8.00);
  EXPECT_EQ(log->steps[0].line, 14);  // steps 1-5 redraw one line of the file
  EXPECT_EQ(log->steps[5].line, 15);
  EXPECT_DOUBLE_EQ(log->steps[10].step_s, 2.41);  // step 11: the evaluation's time inside
  EXPECT_EQ(log->steps[11].iteration, 12);
  EXPECT_DOUBLE_EQ(log->steps[11].step_s, 2.29);  // not the closing redraw's 2.60 (whole bar)
  EXPECT_FALSE(log->steps[0].loss);
  ASSERT_TRUE(log->run_mean_step_s);
  EXPECT_DOUBLE_EQ(*log->run_mean_step_s, 31.23 / 12);  // train_runtime / the bar's total
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->samples, 11);
  EXPECT_EQ(s->first_iteration, 2);
  EXPECT_EQ(s->last_iteration, 12);
  EXPECT_DOUBLE_EQ(s->median_step_s, 2.34);
  // The moving average carries the first step's 8 s for a while.
  EXPECT_DOUBLE_EQ(Summarize(*log, 5)->median_step_s, 2.26);
}

TEST(RunLogHf, RatesInBothUnitsAndOlderDictLines) {
  const std::string text =
      Bar(0, 400, "?it/s") + Bar(10, 400, " 2.01s/it") + "\r" + std::string(40, ' ') + "\r" +
      "{'loss': 4.7883, 'grad_norm': 2.1165051460266113, 'learning_rate': 4.875e-05, 'epoch': "
      "0.0}\n" +
      Bar(10, 400, " 2.01s/it") + Bar(20, 400, " 1.05s/it") + Bar(30, 400, " 1.02it/s") +
      // A description-less bar in another unit is another bar.
      "\n\r 50%|#####     | 1000/2000 [00:00<00:00, 8333.33 examples/s]\n";
  Expected<RunLog> log = ParseRunLog(text, "h.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kHfTrainer);
  ASSERT_EQ(log->steps.size(), 3u);
  EXPECT_EQ(log->steps[1].iteration, 20);
  EXPECT_EQ(log->steps[1].line, 2);
  EXPECT_DOUBLE_EQ(log->steps[1].step_s, 1.05);
  EXPECT_DOUBLE_EQ(log->steps[2].step_s, 1 / 1.02);
  EXPECT_FALSE(log->run_mean_step_s);  // no end-of-training line
}

// With the progress bar off (disable_tqdm: PrinterCallback), only the run's mean is there.
TEST(RunLogHf, TheEndOfTrainingLineAloneIsTheRunsMean) {
  const std::string text =
      "{'loss': 0.3907, 'grad_norm': 7.779932022094727, 'learning_rate': 1.27e-06, 'epoch': "
      "0.94}\n"
      "{'train_runtime': 66.6443, 'train_samples_per_second': 127.993, 'train_steps_per_second': "
      "8.013, 'train_loss': 0.2925, 'epoch': 1.0}\n";
  Expected<RunLog> log = ParseRunLog(text, "h.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kHfTrainer);
  EXPECT_EQ(log->figure, StepFigure::kRunMean);
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].iteration, 534);  // 66.6443 x 8.013, about max_steps
  EXPECT_EQ(log->steps[0].line, 2);
  EXPECT_DOUBLE_EQ(log->steps[0].step_s, 1 / 8.013);
  EXPECT_DOUBLE_EQ(*log->run_mean_step_s, 1 / 8.013);
  Expected<StepSummary> s = Summarize(*log, 1);  // the warm-up is inside the mean
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->samples, 1);
  EXPECT_EQ(s->warmup_samples, 0);
  // Newer versions print the numbers as strings; JSON quoting is read too.
  Expected<RunLog> quoted = ParseRunLog(
      "{'train_runtime': '2279', 'train_samples_per_second': '2.996', 'train_steps_per_second': "
      "'1.498', 'train_loss': '1.229', 'epoch': '3'}\n",
      "h.log", std::nullopt);
  ASSERT_TRUE(quoted.ok()) << quoted.status().message();
  EXPECT_EQ(quoted->steps[0].iteration, 3414);
  Expected<RunLog> json =
      ParseRunLog("{\"train_runtime\": 10.0, \"train_steps_per_second\": 2.5, \"epoch\": 1.0}\n",
                  "h.log", LogFormat::kHfTrainer);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_DOUBLE_EQ(json->steps[0].step_s, 0.4);
}

// trainer.evaluate() after a short benchmark: its bar (100 batches) outnumbers the training
// bar's 50 steps; the end-of-training line (62.5 s x 0.8 steps/s) picks the training bar.
TEST(RunLogHf, TheEndOfTrainingLinePicksTheTrainingBar) {
  std::string text;
  for (int n = 1; n <= 50; ++n) text += Bar(n, 50, " 1.25s/it");
  text += "\n{'train_runtime': 62.5, 'train_steps_per_second': 0.8, 'train_loss': 2.0}\n";
  for (int n = 1; n <= 100; ++n) text += Bar(n, 100, "10.00it/s");
  text += "\n";
  Expected<RunLog> log = ParseRunLog(text, "h.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->steps.size(), 50u);
  EXPECT_DOUBLE_EQ(log->steps.back().step_s, 1.25);
  EXPECT_DOUBLE_EQ(*log->run_mean_step_s, 1.25);
}

TEST(RunLogHf, TorchtitansColouredStepLines) {
  Expected<RunLog> log = LoadRunLog(kData + "torchtitan-synthetic.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kTorchtitan);
  EXPECT_TRUE(log->per_token);
  EXPECT_FALSE(log->per_sample);
  EXPECT_EQ(log->figure, StepFigure::kLogged);
  ASSERT_EQ(log->steps.size(), 7u);  // steps 1, 10, ..., 60; not "validate step: 30"
  EXPECT_EQ(log->steps[0].line, 12);
  EXPECT_EQ(log->steps[1].iteration, 10);
  EXPECT_DOUBLE_EQ(log->steps[1].step_s, 1 / 6702.0);  // seconds per token per GPU
  EXPECT_DOUBLE_EQ(*log->steps[1].tflops_per_gpu, 322.11);
  EXPECT_DOUBLE_EQ(*log->steps[1].loss, 9.87411);
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->samples, 6);
  EXPECT_DOUBLE_EQ(s->median_step_s, (1 / 6804.0 + 1 / 6790.0) / 2);
  EXPECT_DOUBLE_EQ(*s->median_tflops_per_gpu, (326.33 + 327.02) / 2);
}

// Without colours (--metrics.disable_color_printing), "mfu: N/A" (FP8), and before 2024-11 "wps:"
// without grad_norm and tflops.
TEST(RunLogHf, TorchtitanVariants) {
  const std::string text =
      "[titan] 2024-06-01 10:00:00,000 - root - INFO - step:  1  loss: 10.8732  memory:  "
      "9.76GiB(10.27%)  wps: 1,987  mfu: 12.34%\n" +
      Titan(10, "12,500").substr(8) +
      "[titan] 2026-11-27 08:00:00,000 - root - INFO - step: 20  loss:  6.50000  grad_norm:  "
      "1.0000  memory: 41.32GiB(52.23%)  tps: 25,000  tflops: 1,204.00  mfu: N/A\n";
  Expected<RunLog> log = ParseRunLog(text, "t.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kTorchtitan);
  ASSERT_EQ(log->steps.size(), 3u);
  EXPECT_DOUBLE_EQ(log->steps[0].step_s, 1 / 1987.0);
  EXPECT_FALSE(log->steps[0].tflops_per_gpu);
  EXPECT_DOUBLE_EQ(log->steps[1].step_s, 1 / 12500.0);
  EXPECT_DOUBLE_EQ(*log->steps[2].tflops_per_gpu, 1204.0);
  // LOG_RANK=0,7 (pipeline parallel: the loss is on the last stage): the first rank's lines.
  auto rank7 = [](int step) { return "[rank7]:" + Titan(step, "7,000").substr(8); };
  Expected<RunLog> two = ParseRunLog(
      Titan(10, "6,702") + rank7(10) + Titan(20, "6,800") + rank7(20), "t.log", std::nullopt);
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ(two->steps.size(), 2u);
  EXPECT_EQ(two->steps[1].line, 3);
  EXPECT_DOUBLE_EQ(two->steps[1].step_s, 1 / 6800.0);
}

// Each format's fixture is read as its own format, and never as another's.
TEST(RunLogHf, DetectionKeepsTheFormatsApart) {
  const struct {
    const char* file;
    LogFormat format;
  } kFiles[] = {
      {"megatron-synthetic.log", LogFormat::kMegatron},
      {"deepspeed-synthetic.log", LogFormat::kDeepSpeed},
      {"trainsim-local.jsonl", LogFormat::kTrainsimLocal},
      {"torchtitan-synthetic.log", LogFormat::kTorchtitan},
      {"hf-trainer-synthetic.log", LogFormat::kHfTrainer},
  };
  for (const auto& f : kFiles) {
    Expected<RunLog> log = LoadRunLog(kData + f.file, std::nullopt);
    ASSERT_TRUE(log.ok()) << log.status().message();
    EXPECT_EQ(log->format, f.format) << f.file;
    for (const auto& other : kFiles) {
      if (other.format == f.format) continue;
      Expected<RunLog> as = LoadRunLog(kData + f.file, other.format);
      EXPECT_FALSE(as.ok()) << f.file << " read as " << ToString(other.format);
      EXPECT_NE(as.status().message().find(": no "), std::string::npos) << as.status().message();
    }
  }
  // A Trainer run under DeepSpeed that prints DeepSpeed's throughput lines: they carry each
  // step's own throughput, the bar a moving average.
  const std::string both =
      Bar(10, 100, " 2.00s/it") +
      "[2026-11-27 08:00:00,101] [INFO] [timer.py:260:stop] epoch=0/micro_step=80/global_step=10, "
      "RunningAvgSamplesPerSec=110.0, CurrSamplesPerSec=128.0, MemAllocated=6.01GB\n";
  Expected<RunLog> ds = ParseRunLog(both, "hfds.log", std::nullopt);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ(ds->format, LogFormat::kDeepSpeed);
  // Someone else's "step: N loss: L" print is not torchtitan's.
  EXPECT_FALSE(ParseRunLog("step: 10 loss: 2.31\n", "x.log", LogFormat::kTorchtitan).ok());
}

TEST(RunLogHf, NamesRoundTrip) {
  for (LogFormat f : {LogFormat::kTorchtitan, LogFormat::kHfTrainer}) {
    Expected<LogFormat> back = ParseLogFormat(ToString(f), "--format");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, f);
  }
  EXPECT_STREQ(ToString(LogFormat::kHfTrainer), "hf-trainer");
  EXPECT_STREQ(ToString(LogFormat::kTorchtitan), "torchtitan");
}

TEST(RunLogHf, ErrorsNameTheFileAndLine) {
  struct Case {
    std::string text;
    std::optional<LogFormat> format;
    std::string message;
  };
  const std::string kEnd =
      "{'train_runtime': 31.2, 'train_samples_per_second': 12.3, 'train_steps_per_second': "
      "0.385, 'train_loss': 2.2, 'epoch': 0.19}\n";
  const Case kCases[] = {
      {Bar(4, 12, " 2.80s/it") + "\r 42%|####      | 5/12 [00:16<00:17,  2.5\n", std::nullopt,
       "x.log:1: a tqdm progress bar without \"| N/M [ELAPSED<LEFT, RATE]\" after its \"%|\" (a "
       "cut line?)"},
      {Bar(5, 12, "fastit/s") + "\n", std::nullopt,
       "x.log:1: the progress bar's rate: expected a positive number of it/s or s/it, got "
       "\"fastit/s\""},
      {Bar(7, 12, " 2.10s/it") + Bar(8, 12, " 2.00s/it") + "\n" + Bar(0, 12, "?it/s") +
           Bar(1, 12, " 9.00s/it") + "\n",
       std::nullopt,
       "x.log:2: iteration 1 after iteration 8 (line 1): two runs in one log (a restart?); give "
       "each run its own file"},
      {kEnd + kEnd, std::nullopt,
       "x.log:2: a second end-of-training line, after the first (line 1): two runs in one log; "
       "give each run its own file"},
      {"{'train_runtime': '31.2', 'train_steps_per_second': 'nan'}\n", std::nullopt,
       "x.log:1: 'train_steps_per_second': expected a positive number, got \"nan\""},
      {"{'train_samples_per_second': 12.3, 'train_steps_per_second': 0.385}\n", std::nullopt,
       "x.log:1: 'train_runtime': expected a positive number, got \"\""},
      {"{'loss': 2.31, 'learning_rate': 5e-05, 'epoch': 0.12}\n", LogFormat::kHfTrainer,
       "x.log: no Hugging Face Trainer progress bar (\"NN%|...| N/M [ELAPSED<LEFT, R it/s]\") or "
       "end-of-training line ({'train_runtime': R, ..., 'train_steps_per_second': S, ...})"},
      {Titan(10, "6,702") + "[titan] - step: 20  loss:  7.1  grad_norm:  1.2  memory: 41.32GiB",
       std::nullopt, "x.log:2: a torchtitan step line without \"tps: T\" (a cut line?)"},
      {Titan(10, "0"), std::nullopt,
       "x.log:1: \"tps\": expected a positive number of tokens per second, got \"0\""},
      {"step: ten  loss: 7.1  tps: 6,702\n", std::nullopt,
       "x.log:1: \"step\": expected a whole number >= 1, got \"ten\""},
      {"step: 10  loss: 7.1  tps: 6,702  tflops: fast\n", std::nullopt,
       "x.log:1: \"tflops\": expected a number, got \"fast\""},
      {Titan(20, "6,702") + Titan(10, "6,702"), std::nullopt,
       "x.log:2: iteration 10 after iteration 20 (line 1): two runs in one log (a restart?); give "
       "each run its own file"},
      {Bar(5, 12, " 2.00s/it"), LogFormat::kTorchtitan,
       "x.log: no torchtitan step line (\"step: N  loss: L  ...  tps: T  ...\")"},
  };
  for (const Case& c : kCases) {
    Expected<RunLog> log = ParseRunLog(c.text, "x.log", c.format);
    ASSERT_FALSE(log.ok()) << c.text;
    EXPECT_EQ(log.status().message(), c.message);
  }
}

}  // namespace
}  // namespace trainsim::observe
