// DeepSpeed's engine timers (wall_clock_breakdown) and the GPU memory the training logs report
// (observe/run_log.h): the breakdown beside the throughput, the engine's sum when the log has no
// other step figure, the timer lines that are not a step's, and every refusal with its line.
#include <gtest/gtest.h>

#include <string>

#include "observe/run_log.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

// DeepSpeed's throughput-timer line (synthetic values).
std::string Throughput(int step, double samples_per_s, double max_gb = 19.5) {
  return "[2026-11-27 08:00:00,100] [INFO] [timer.py:264:stop] epoch=0/micro_step=" +
         std::to_string(step) + "/global_step=" + std::to_string(step) +
         ", RunningAvgSamplesPerSec=16.0, CurrSamplesPerSec=" + std::to_string(samples_per_s) +
         ", MemAllocated=6.01GB, MaxMemAllocated=" + std::to_string(max_gb) + "GB\n";
}

// DeepSpeed's global timer line, as printed since 0.18 (synthetic values).
std::string Timers(double fwd, double bwd, double step) {
  return "[Rank 0] time (ms) | fwd: " + std::to_string(fwd) + " | bwd: " + std::to_string(bwd) +
         " | bwd_inner: 1.00 | bwd_allreduce: 1.00 | step: " + std::to_string(step) + "\n";
}

// A Megatron-LM iteration line (synthetic values).
std::string Iteration(int iteration) {
  return " [2026-11-27 08:00:00] iteration " + std::to_string(iteration) +
         "/    1000 | elapsed time per iteration (ms): 2000.0 | global batch size: 512 |\n";
}

TEST(DeepSpeedTimers, TheBreakdownBesideTheThroughputLines) {
  Expected<RunLog> log = LoadRunLog(kData + "deepspeed-timers-synthetic.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kDeepSpeed);
  EXPECT_EQ(log->figure, StepFigure::kLogged);  // the step is still the throughput lines'
  EXPECT_TRUE(log->per_sample);
  ASSERT_EQ(log->steps.size(), 4u);
  // One global line per optimizer step; the micro-step and ZeRO optimizer lines are not.
  ASSERT_EQ(log->timers.size(), 20u);
  EXPECT_EQ(log->timers[0].line, 10);
  EXPECT_DOUBLE_EQ(*log->timers[0].ms.fwd_ms, 2455.17);
  EXPECT_DOUBLE_EQ(*log->timers[0].ms.bwd_allreduce_ms, 240.11);
  EXPECT_TRUE(log->timers_not_read.empty());
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->median_step_s, 1 / 16.5);
  // After the throughput line of step 5 (line 22): step 5's timers and steps 6-20.
  ASSERT_TRUE(s->breakdown);
  EXPECT_EQ(s->breakdown->samples, 16);
  EXPECT_EQ(s->breakdown->warmup_samples, 4);
  const EngineTimes& m = s->breakdown->median_ms;
  EXPECT_DOUBLE_EQ(*m.fwd_ms, 600);
  EXPECT_DOUBLE_EQ(*m.bwd_ms, 1200);
  EXPECT_DOUBLE_EQ(*m.bwd_inner_ms, 1095);
  EXPECT_DOUBLE_EQ(*m.bwd_allreduce_ms, 105);
  EXPECT_DOUBLE_EQ(*m.step_ms, 80);
  // MaxMemAllocated: 19.52, then 19.61 from the throughput line of step 10.
  EXPECT_DOUBLE_EQ(*log->memory.max_allocated_gib, 19.61);
  EXPECT_EQ(log->memory.allocated_line, 39);
  EXPECT_FALSE(log->memory.max_reserved_gib);
  // Without a warm-up every timer line counts.
  EXPECT_EQ(Summarize(*log, 0)->breakdown->samples, 20);
  EXPECT_EQ(Summarize(*log, 3)->breakdown->samples, 6);  // after step 15's throughput line
}

TEST(DeepSpeedTimers, WithoutThroughputLinesTheEnginesSumIsTheStep) {
  for (const std::optional<LogFormat> format :
       {std::optional<LogFormat>(), {LogFormat::kDeepSpeed}}) {
    Expected<RunLog> log = LoadRunLog(kData + "deepspeed-timers-only-synthetic.log", format);
    ASSERT_TRUE(log.ok()) << log.status().message();
    EXPECT_EQ(log->format, LogFormat::kDeepSpeed);
    EXPECT_EQ(log->figure, StepFigure::kEngineTimers);
    EXPECT_FALSE(log->per_sample);  // a step time, in seconds
    ASSERT_EQ(log->steps.size(), 8u);
    EXPECT_EQ(log->steps[0].iteration, 1);
    EXPECT_EQ(log->steps[0].line, 5);
    EXPECT_DOUBLE_EQ(log->steps[0].step_s, (2455.17 + 3130.52 + 412.66) / 1000);
    Expected<StepSummary> s = Summarize(*log, 1);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_DOUBLE_EQ(s->median_step_s, 1.88);  // 600 + 1200 + 80 ms
    EXPECT_EQ(s->breakdown->samples, 7);
    EXPECT_EQ(s->breakdown->warmup_samples, 1);
    EXPECT_DOUBLE_EQ(*s->breakdown->median_ms.bwd_inner_ms, 1095);
    EXPECT_FALSE(log->memory.max_allocated_gib);
  }
  // Any other format's step lines come first: the engine's sum leaves out the training loop.
  const std::string bar =
      "  25%|##        | 2/8 [00:04<00:12,  2.00s/it]\r"
      "  50%|#####     | 4/8 [00:08<00:08,  1.95s/it]\n";
  Expected<RunLog> trainer =
      ParseRunLog(Timers(600, 1200, 80) + bar + Timers(600, 1200, 80), "hf.log", std::nullopt);
  ASSERT_TRUE(trainer.ok()) << trainer.status().message();
  EXPECT_EQ(trainer->format, LogFormat::kHfTrainer);
}

TEST(DeepSpeedTimers, OlderVersionsAndTheTimerLinesThatAreNotAStep) {
  // Before 0.10.1: long names and "rank=0 " after log_dist's prefix.
  const std::string old =
      Throughput(10, 16.0) +
      "[2023-05-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward_microstep: 600.01 | backward_microstep: 1200.01 | backward_inner_microstep: "
      "1095.01 | backward_allreduce_microstep: 105.01 | step_microstep: 80.01\n"
      "[2023-05-01 10:00:00,001] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | "
      "forward: 600.00 | backward: 1200.00 | backward_inner: 1095.00 | backward_allreduce: 105.00 "
      "| step: 80.00\n";
  Expected<RunLog> log = ParseRunLog(old, "old.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->timers.size(), 1u);
  EXPECT_DOUBLE_EQ(*log->timers[0].ms.bwd_inner_ms, 1095);
  EXPECT_DOUBLE_EQ(*log->timers[0].ms.step_ms, 80);

  // The MoE forward breakdown, activation checkpointing's profile, the ZeRO optimizer's timers
  // and Megatron-LM's (2020) are not the engine's global line: no forward, backward and step.
  const std::string others =
      Throughput(10, 16.0) +
      "[Rank 0] time (ms) | fwd: 600.00 (fwd_moe: 120.00, 1st_a2a: 30.00, 2nd_a2a: 31.00, "
      "top_k: 5.00)\n"
      "[Rank 0] time (ms) | fwd: 1.23\n[Rank 0] time (ms) | backward: 2.34\n"
      "[Rank 0] time (ms) | optimizer_allgather: 44.00 | optimizer_gradients: 8.00 | "
      "optimizer_step: 24.00\n"
      "time (ms) | forward: 900.00 | backward: 1700.00 | allreduce: 90.00 | optimizer: 80.00\n" +
      Timers(600, 1200, 80);
  log = ParseRunLog(others, "moe.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->timers.size(), 1u);
  EXPECT_EQ(log->timers[0].line, 7);

  // The pipeline engine's: after its micro-step line with "batch_input", a sum over
  // steps_per_print steps.
  const std::string pipe =
      Throughput(10, 16.0) +
      "[Rank 0] time (ms) | batch_input: 12.00 | fwd_microstep: 6000.00 | bwd_microstep: "
      "12000.00 | bwd_inner_microstep: 11000.00 | bwd_allreduce_microstep: 0.00 | "
      "step_microstep: 800.00\n" +
      Timers(6000, 12000, 800) +
      "[Rank 0] time (ms) | pipe_send_output: 50.00 | pipe_send_grad: 0.00 | pipe_recv_input: "
      "0.00 | pipe_recv_grad: 60.00\n";
  log = ParseRunLog(pipe, "pipe.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_TRUE(log->timers.empty());
  EXPECT_EQ(log->timers_not_read,
            "1 timer line of DeepSpeed's pipeline engine, each a sum over steps_per_print steps");
  EXPECT_FALSE(Summarize(*log, 0)->breakdown);

  // DeepSpeed 0.4.0-0.5.6: running totals since the start.
  const std::string totals = Throughput(10, 16.0) + Timers(600, 1200, 80) +
                             Timers(1200, 2400, 160) + Timers(1800, 3600, 240) +
                             Timers(2400, 4800, 320);
  log = ParseRunLog(totals, "totals.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_TRUE(log->timers.empty());
  EXPECT_EQ(log->timers_not_read,
            "4 timer lines of running totals (every figure rises at every line, as DeepSpeed "
            "0.4.0-0.5.6 printed them), not a step's times");
}

TEST(LoggedMemory, WhatEachFrameworkReports) {
  // Megatron-LM: MB (MiB) of max allocated and max reserved.
  Expected<RunLog> megatron = LoadRunLog(kData + "megatron-synthetic.log", std::nullopt);
  ASSERT_TRUE(megatron.ok()) << megatron.status().message();
  EXPECT_DOUBLE_EQ(*megatron->memory.max_allocated_gib, 9300.2 / 1024);
  EXPECT_EQ(megatron->memory.allocated_line, 1);
  EXPECT_DOUBLE_EQ(*megatron->memory.max_reserved_gib, 10);
  // The largest over the ranks that print (one per pipeline stage) and over the run; "max
  // cached" before 2020-09.
  const std::string stages =
      "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1000.0 | max allocated: 30000.0 "
      "| reserved: 32000.0 | max reserved: 32000.0\n" +
      Iteration(10) +
      "[Rank 4] (after 10 iterations) memory (MB) | allocated: 1000.0 | max allocated: "
      "40960.0 | reserved: 41000.0 | max reserved: 41000.0\n"
      "[Rank 0] (after 20 iterations) memory (MB) | allocated: 1000 | max allocated: 30000 | "
      "cached: 33000 | max cached: 43008\n";
  Expected<RunLog> log = ParseRunLog(stages, "stages.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_DOUBLE_EQ(*log->memory.max_allocated_gib, 40);
  EXPECT_EQ(log->memory.allocated_line, 3);
  EXPECT_DOUBLE_EQ(*log->memory.max_reserved_gib, 42);
  EXPECT_EQ(log->memory.reserved_line, 4);

  // DeepSpeed's see_memory_usage (memory_breakdown) beside its throughput lines.
  const std::string ds =
      Throughput(10, 16.0, 19.5) + "Engine after forward\n" +
      "MA 2.11 GB         Max_MA 21.3 GB         CA 22.5 GB         Max_CA 23 GB \n"
      "CPU Virtual Memory:  used = 61.2 GB, percent = 12.2%\n" +
      Throughput(20, 16.0, 19.5);
  log = ParseRunLog(ds, "ds.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_DOUBLE_EQ(*log->memory.max_allocated_gib, 21.3);
  EXPECT_EQ(log->memory.allocated_line, 3);
  EXPECT_FALSE(log->memory.max_reserved_gib);

  // torchtitan: max reserved since the previous step line, of every rank that prints.
  Expected<RunLog> titan = LoadRunLog(kData + "torchtitan-synthetic.log", std::nullopt);
  ASSERT_TRUE(titan.ok()) << titan.status().message();
  EXPECT_DOUBLE_EQ(*titan->memory.max_reserved_gib, 44.10);
  EXPECT_EQ(titan->memory.reserved_line, 13);
  EXPECT_FALSE(titan->memory.max_allocated_gib);
  const std::string ranks =
      "[rank0]:[titan] 2026-11-27 08:00:47,822 - root - INFO - step: 10  loss:  9.87  memory: "
      "44.10GiB(55.75%)  tps: 6,702  tflops: 322.11  mfu: 32.57%\n"
      "[rank7]:[titan] 2026-11-27 08:00:47,822 - root - INFO - step: 10  loss:  9.87  memory: "
      "61.50GiB(77.74%)  tps: 6,702  tflops: 322.11  mfu: 32.57%\n";
  log = ParseRunLog(ranks, "titan.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->steps.size(), 1u);  // rank 0's
  EXPECT_DOUBLE_EQ(*log->memory.max_reserved_gib, 61.5);

  // A log that says nothing: nothing.
  for (const char* file : {"trainsim-local.jsonl", "hf-trainer-synthetic.log"}) {
    Expected<RunLog> none = LoadRunLog(kData + file, std::nullopt);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_FALSE(none->memory.max_allocated_gib) << file;
    EXPECT_FALSE(none->memory.max_reserved_gib) << file;
  }
}

TEST(DeepSpeedTimers, ErrorsNameTheFileAndLine) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string tp = Throughput(10, 16.0);
  const Case kCases[] = {
      {tp + "[Rank 0] time (ms) | fwd: 600.00 | bwd: abc | step: 80.00\n",
       "x.log:2: DeepSpeed's timer \"bwd\": expected a number of milliseconds, got \"abc\""},
      {tp + "[Rank 0] time (ms) | fwd_microstep: -1.00 | bwd_microstep: 2.00\n",
       "x.log:2: DeepSpeed's timer \"fwd_microstep\": expected a number of milliseconds, got "
       "\"-1.00\""},
      {tp + "[Rank 0] time (ms) | fwd: 600.00 | bwd: 1200.00 | bwd_inn\n" + Throughput(20, 16.0),
       "x.log:2: a DeepSpeed timer line whose field \"bwd_inn\" is not \"NAME: MS\" (a cut "
       "line?)"},
      // A timers-only log: the bad line is still said.
      {Timers(600, 1200, 80) + "[Rank 0] time (ms) | fwd: 600.00 | bwd: 1200.00 | step: x\n",
       "x.log:2: DeepSpeed's timer \"step\": expected a number of milliseconds, got \"x\""},
      {tp.substr(0, tp.find("MaxMemAllocated=") + 19) + "\n",
       "x.log:1: \"MaxMemAllocated\": expected a number of GB, got \"19.\""},
      {tp + "MA 2.11 GB         Max_MA n/a GB         CA 22.5 GB         Max_CA 23 GB \n",
       "x.log:2: \"Max_MA\": expected a number of GB, got \"n/a\""},
      {Iteration(10) +
           "[Rank 0] (after 10 iterations) memory (MB) | allocated: 1000.0 | max allocated: lots "
           "| reserved: 2.0 | max reserved: 2.0\n",
       "x.log:2: \"max allocated\": expected a number of MB, got \"lots\""},
      {Iteration(10) + "[Rank 0] (after 10 iterations) memory (MB) | allocated: 4100.5 | max al",
       "x.log:2: a Megatron-LM memory report without \"max allocated: MB\" (a cut line?)"},
      {"[rank0]:[titan] 2026-11-27 08:00:47,822 - root - INFO - step: 10  loss:  9.87  memory: "
       "41.3xGiB(43.47%)  tps: 6,702  tflops: 322.11  mfu: 32.57%\n",
       "x.log:1: \"memory\": expected a number of GiB, \"G.GGGiB(P.PP%)\", got "
       "\"41.3xGiB(43.47%)\""},
  };
  for (const Case& c : kCases) {
    Expected<RunLog> log = ParseRunLog(c.text, "x.log", std::nullopt);
    ASSERT_FALSE(log.ok()) << c.text;
    EXPECT_EQ(log.status().message(), c.message);
  }
  // A memory or timer line that does not parse is the run's error only in a log of its format.
  const std::string titan =
      "[rank0]:[titan] 2026-11-27 08:00:47,822 - root - INFO - step: 10  loss:  9.87  memory: "
      "41.30GiB(43.47%)  tps: 6,702  tflops: 322.11  mfu: 32.57%\n"
      "[Rank 0] (after 10 iterations) memory (MB) | allocated: 4100.5 | max al\n";
  Expected<RunLog> log = ParseRunLog(titan, "t.log", std::nullopt);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kTorchtitan);
}

}  // namespace
}  // namespace trainsim::observe
