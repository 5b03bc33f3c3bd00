// Training logs read back (observe/run_log.h): Megatron-LM's iteration lines and the local
// trainer's JSON step lines, the steady step after warm-up, and every refusal with its file
// and line.
#include "observe/run_log.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

// A Megatron-LM iteration line in its training_log format (synthetic values).
std::string Line(int iteration, double ms, int batch = 512) {
  return " [2026-11-27 08:00:00] iteration " + std::to_string(iteration) +
         "/    1000 | consumed samples:        5120 | elapsed time per iteration (ms): " +
         std::to_string(ms) +
         " | throughput per GPU (TFLOP/s/GPU): 150.0 | learning rate: "
         "1.5E-05 | global batch size: " +
         std::to_string(batch) + " | lm loss: 9.5E+00 | loss scale: 1.0 |\n";
}

TEST(RunLog, MegatronLinesBetweenOtherOutput) {
  Expected<RunLog> log = LoadRunLog(kData + "megatron-synthetic.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kMegatron);
  ASSERT_EQ(log->steps.size(), 5u);  // the memory report and the validation line are not steps
  EXPECT_EQ(log->steps[0].iteration, 10);
  EXPECT_DOUBLE_EQ(log->steps[0].step_s, 2.5);
  EXPECT_EQ(*log->steps[0].global_batch, 512);
  EXPECT_DOUBLE_EQ(*log->steps[0].tflops_per_gpu, 150.0);
  EXPECT_DOUBLE_EQ(*log->steps[1].loss, 8.1);
  EXPECT_EQ(log->steps[3].line, 8);
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->samples, 4);
  EXPECT_EQ(s->warmup_samples, 1);
  EXPECT_DOUBLE_EQ(s->median_step_s, 2.0);  // 2.0 2.1 1.9 2.0
  EXPECT_DOUBLE_EQ(s->mean_step_s, 2.0);
  EXPECT_DOUBLE_EQ(s->min_step_s, 1.9);
  EXPECT_EQ(s->first_iteration, 20);
  EXPECT_EQ(s->last_iteration, 50);
  EXPECT_DOUBLE_EQ(*s->median_tflops_per_gpu, 187.5);
}

TEST(RunLog, TheLocalTrainersRealSteps) {
  Expected<RunLog> log = LoadRunLog(kData + "trainsim-local.jsonl", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kTrainsimLocal);
  ASSERT_EQ(log->steps.size(), 12u);
  EXPECT_EQ(log->steps[0].line, 2);  // after the comment
  // The summary the trainer printed: the median of steps 4-12, 2.178183944 s.
  Expected<StepSummary> s = Summarize(*log, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->samples, 9);
  EXPECT_NEAR(s->median_step_s, 2.178183944, 1e-9);
  EXPECT_FALSE(s->global_batch);
}

// DeepSpeed's throughput timer: a throughput per step line, kept as seconds per sample.
TEST(RunLog, DeepSpeedThroughputLines) {
  Expected<RunLog> log = LoadRunLog(kData + "deepspeed-synthetic.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kDeepSpeed);
  EXPECT_TRUE(log->per_sample);
  ASSERT_EQ(log->steps.size(), 4u);
  EXPECT_EQ(log->steps[1].iteration, 20);
  EXPECT_DOUBLE_EQ(log->steps[1].step_s, 1 / 128.0);
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median_step_s, 1 / 128.0);  // 1/128, 1/125, 1/131
  const std::string bad =
      "[INFO] [timer.py:260:stop] epoch=0/micro_step=4/global_step=1, RunningAvgSamplesPerSec=1, "
      "CurrSamplesPerSec=nan, MemAllocated=1GB\n";
  EXPECT_EQ(ParseRunLog(bad, "ds.log", LogFormat::kDeepSpeed).status().message(),
            "ds.log:1: \"CurrSamplesPerSec\": expected a positive number, got \"nan\"");
  // Megatron-DeepSpeed prints both kinds of line: Megatron's, which carry the step, win.
  const std::string both =
      bad.substr(0, bad.find("nan")) + "61.3, MemAllocated=1GB\n" + Line(1, 14287.5);
  Expected<RunLog> mixed = ParseRunLog(both, "mds.log", std::nullopt);
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  EXPECT_EQ(mixed->format, LogFormat::kMegatron);
  EXPECT_DOUBLE_EQ(mixed->steps[0].step_s, 14.2875);
}

TEST(RunLog, TheLastGlobalBatchIsTheSteadyOne) {
  const std::string text =
      Line(10, 900, 256) + Line(20, 1000, 256) + Line(30, 2000) + Line(40, 2100) + Line(50, 1900);
  Expected<RunLog> log = ParseRunLog(text, "ramp.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->other_batch, 1);  // iteration 20 at 256
  EXPECT_EQ(s->samples, 3);
  EXPECT_DOUBLE_EQ(s->median_step_s, 2.0);
  EXPECT_EQ(*s->global_batch, 512);
}

TEST(RunLog, ErrorsNameTheFileAndLine) {
  struct Case {
    std::string text;
    std::optional<LogFormat> format;
    std::string message;
  };
  const Case kCases[] = {
      {Line(10, 100) + Line(20, 100) + Line(5, 100), std::nullopt,
       "two.log:3: iteration 5 after iteration 20 (line 2): two runs in one log (a restart?); "
       "give each run its own file"},
      {Line(10, 100) + " iteration 20/ 1000 | consumed samples: 10240 | elapsed time per itera",
       std::nullopt,
       "two.log:2: a Megatron-LM iteration line without \"elapsed time per iteration (ms): MS "
       "|\" (a cut line? the log of another format?)"},
      {" iteration 20/ 1000 | elapsed time per iteration (ms): fast | global batch size: 8 |\n",
       std::nullopt,
       "two.log:1: \"elapsed time per iteration (ms)\": expected a positive number of "
       "milliseconds, got \"fast\""},
      {"{\"step\": 1, \"loss\": 5.0, \"step_s\": 2.1}\n{\"step\": 2, \"loss\": 4.9, \"step_",
       std::nullopt, ""},  // message checked below: nlohmann's text
      {"{\"step\": 1, \"loss\": 5.0, \"step_s\": -2}\n", std::nullopt,
       "two.log:1: \"step_s\": expected a positive number of seconds"},
      // nlohmann::json throws out_of_range, not parse_error, for a number beyond a double: it
      // escaped the reader (found by fuzz/run_log_fuzzer.cc).
      {"{\"step\": 1, \"loss\": 5.0, \"step_s\": 2.1}\n{\"step\": 2, \"step_s\": 4.7e3086}\n",
       std::nullopt,
       "two.log:2: not a JSON line: [json.exception.out_of_range.406] number overflow parsing "
       "'4.7e3086'"},
      {"Epoch 1/10\n100/100 [====] - 12s 120ms/step - loss: 0.3\n", std::nullopt,
       "two.log: no step line of a known format (Megatron-LM's \"iteration N/M | ... | elapsed "
       "time per iteration (ms): MS |\", DeepSpeed's \"global_step=G, ..., CurrSamplesPerSec=S\", "
       "trainsim-train's {\"step\": N, \"step_s\": S}, torchtitan's \"step: N  loss: L  ...  tps: "
       "T\", or the Hugging Face Trainer's progress bar \"N/M [ELAPSED<LEFT, R it/s]\" or "
       "{'train_runtime': R, ..., 'train_steps_per_second': S})"},
      {Line(10, 100), LogFormat::kTrainsimLocal,
       "two.log: no trainsim-train step line ({\"step\": N, \"loss\": L, \"step_s\": S})"},
  };
  for (const Case& c : kCases) {
    Expected<RunLog> log = ParseRunLog(c.text, "two.log", c.format);
    ASSERT_FALSE(log.ok()) << c.text;
    if (c.message.empty()) {
      EXPECT_EQ(log.status().message().rfind("two.log:2:", 0), 0u) << log.status().message();
      EXPECT_NE(log.status().message().find("not a JSON line (cut short?)"), std::string::npos);
    } else {
      EXPECT_EQ(log.status().message(), c.message);
    }
  }
  EXPECT_EQ(LoadRunLog(kData + "missing.log", std::nullopt).status().message(),
            kData + "missing.log: cannot read the file");
  EXPECT_EQ(ParseLogFormat("hf", "--format").status().message(),
            "--format: unknown log format \"hf\"; expected megatron, deepspeed, trainsim-local, "
            "torchtitan or hf-trainer");
  Expected<RunLog> one = ParseRunLog(Line(10, 100), "one.log", std::nullopt);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Summarize(*one, 1).status().message(),
            "one.log: 1 step line, none after the warm-up of 1: log more steps, or lower "
            "--warmup");
}

}  // namespace
}  // namespace trainsim::observe
