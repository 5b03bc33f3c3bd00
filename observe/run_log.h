// What a training job printed about its steps, read back (docs/observe.md).
//
// A run log is a text file of one run: Megatron-LM's iteration lines (also
// printed by NeMo 2 / Megatron-Bridge and Megatron-DeepSpeed), DeepSpeed's
// throughput-timer lines, the JSON step lines of trainsim's own local
// trainer (OUT/local/steps.jsonl of `trainsim launch --backend local`), torchtitan's step lines
// (a torchrun job), or what the Hugging Face Trainer prints (its tqdm progress bar and its
// end-of-training line). Every line the format does not know is skipped; a line that looks like
// one of its step lines but does not parse is an error naming the file and line, and so is a log
// whose iterations go back (two runs in one file) or that holds no step line at all. Beside the
// steps: the GPU memory the log reports (LoggedMemory) and DeepSpeed's engine timers
// (EngineTimes), for the comparison with the simulated memory and step parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim::observe {

enum class LogFormat {
  kMegatron,       // " iteration   10/  500 | ... | elapsed time per iteration (ms): 123.4 | ..."
  kTrainsimLocal,  // {"step": 3, "loss": 5.2, "step_s": 0.41} per line
  // DeepSpeed's throughput timer: "... epoch=0/micro_step=200/global_step=200,
  // RunningAvgSamplesPerSec=58.7, CurrSamplesPerSec=61.4, MemAllocated=6.01GB, ..."
  kDeepSpeed,
  // torchtitan's step line (torchtitan/components/metrics.py MetricsProcessor.log), after the
  // "[titan] TIME - root - INFO - " logger prefix (and torchrun's "[rank0]:"), in ANSI colours
  // unless --metrics.disable_color_printing:
  //   "step: 10  loss:  7.12345  grad_norm:  1.2345  memory: 41.32GiB(43.47%)  tps: 7,812
  //    tflops: 452.10  mfu: 45.71%"
  // No step time: tps is tokens per second per GPU over the steps since the previous line (the
  // tokens this rank loaded / (seconds x the GPUs that share them: tp, pp, cp)). Kept as seconds
  // per token per GPU (RunLog::per_token); before 2024-11 torchtitan printed the same as "wps:".
  // "validate step: N ..." lines are not steps. Of several ranks' lines (LOG_RANK=0,7) only
  // those of the first rank with a step line are read (what precedes "[titan]" tells them
  // apart). The first line's interval starts at the trainer's set-up: it is warm-up.
  kTorchtitan,
  // The Hugging Face Trainer (transformers' ProgressCallback / PrinterCallback). Its
  // {'loss': ..., 'learning_rate': ..., 'epoch': ...} lines carry no step number and no time,
  // and go to stdout while the bar goes to stderr (their order in a file depends on
  // buffering): they are not read. Read are:
  // - its tqdm bar, "  5%|▌         | 50/1000 [00:30<09:30,  1.67it/s]" (or "2.01s/it"), which
  //   rewrites itself after a carriage return, so one line of the file holds many updates: each
  //   update with a rate is a sample at iteration N (the optimizer step). The rate is tqdm's
  //   exponential moving average (smoothing 0.3) over its redraws, not the step's own time
  //   (StepFigure::kSmoothed); the first step weighs on the next ~20, and a resumed run's jump
  //   to its checkpoint's step on the next ~30. Bars with a description ("Map: ...") or another
  //   unit, nested bars (evaluation during training, drawn one row down and moved back with
  //   ESC [A) and bars of another total (evaluation before or after training) are skipped;
  //   an update that repeats N (the redraw after a printed line, the closing redraw) is skipped;
  // - its end-of-training line {'train_runtime': R, 'train_samples_per_second': ...,
  //   'train_steps_per_second': S, 'train_loss': ..., 'epoch': ...} (numbers, or strings such
  //   as '2.996' in newer versions; JSON quoting also read): S = max_steps / R, the mean over
  //   the whole run, warm-up, evaluation and checkpoint saves included (too high for a resumed
  //   run: max_steps counts the steps before its checkpoint, R does not). It picks the training
  //   bar (the total nearest R x S; without it, the largest total), sets
  //   RunLog::run_mean_step_s, and with no bar in the log it is the only sample
  //   (StepFigure::kRunMean).
  kHfTrainer,
};
// "megatron", "trainsim-local", "deepspeed", "torchtitan", "hf-trainer"
const char* ToString(LogFormat f);
// One of ToString's names; anything else is an error naming `field`.
Expected<LogFormat> ParseLogFormat(std::string_view name, std::string_view field);

// What a sample's step_s stands for.
enum class StepFigure {
  kLogged,    // the framework's own figure for the step(s) its line reports: Megatron and
              // torchtitan the mean since their previous line, DeepSpeed and the local trainer
              // the step just ended
  kSmoothed,  // tqdm's moving average of the recent steps (hf-trainer's progress bar)
  kRunMean,   // the whole run's mean, warm-up included (hf-trainer's end-of-training line, when
              // the log has no progress bar): one sample, no warm-up to leave out; its
              // iteration is train_runtime x train_steps_per_second rounded (about max_steps)
  // DeepSpeed's engine timers, fwd + bwd + step of each optimizer step (RunLog::timers), when
  // the log has timer lines and no throughput line (nor a step line of another format): the
  // time inside the engine's forward, backward and step calls, less than the step (DeepSpeed's
  // docs/_tutorials/autotuning.md: "The sum of these timings is less than the actual training
  // step latency": data loading and the training loop's own code are left out). Its iteration
  // is the timer line's ordinal.
  kEngineTimers,
};

// One step line: the iteration it ends and the seconds per iteration it reports (or per
// sample, per token: RunLog). Megatron-LM and torchtitan print the mean over the iterations
// since their previous line (--log-interval, --metrics.log_freq); the local trainer prints
// every step; hf-trainer's figures are RunLog::figure's.
struct StepSample {
  int64_t iteration = 0;
  double step_s = 0;
  // Megatron's "throughput per GPU (TFLOP/s/GPU)", torchtitan's "tflops" (per GPU)
  std::optional<double> tflops_per_gpu;
  std::optional<int64_t> global_batch;  // Megatron's "global batch size"
  std::optional<double> loss;           // "lm loss", torchtitan's "loss", the local trainer's
  int line = 0;                         // 1-based, in the file
};

// DeepSpeed's engine timers, in milliseconds (DeepSpeed's "wall_clock_breakdown": true, or its
// flops profiler). Read from its global timer line, printed by rank 0 (deepspeed/utils/timer.py
// SynchronizedWallClockTimer.log, deepspeed/runtime/engine.py DeepSpeedEngine.step):
//   "[Rank 0] time (ms) | fwd: 610.52 | bwd: 1204.33 | bwd_inner: 1105.87 | bwd_allreduce: 97.91 |
//    step: 88.02"
// (since 0.18 printed bare; 0.10.1-0.17 after the logger's "[TIME] [INFO] [logging.py:N:log_dist]
// "; before 0.10.1 "... [Rank 0] rank=0 time (ms) | forward: ... | backward: ... |
// backward_inner: ... | backward_allreduce: ... | step: ...", read the same). Since 0.5.7 the
// line comes at every gradient-accumulation boundary, each figure summed over that optimizer
// step's micro-batches, the timers reset after it (CUDA events since 0.6.2: the GPU's time
// between the call's start and end). A global line is one with fwd, bwd and step; not one: the
// micro-step line printed at every engine.step() call ("fwd_microstep: ... | step_microstep:
// ..."), the ZeRO optimizer's "optimizer_allgather: ... | optimizer_gradients: ... |
// optimizer_step: ..." (parts of step), the MoE "fwd: T (fwd_moe: ...)" and activation
// checkpointing's "fwd: T" / "backward: T" lines, Megatron-LM's own timers
// ("forward-compute", ...). Not read: the pipeline engine's lines (after a micro-step line with
// "batch_input"), each a sum over steps_per_print steps; and running totals (DeepSpeed 0.4.0-0.5.6
// logged without resetting: every figure rises at every line). RunLog::timers_not_read says which.
// DeepSpeed before 0.4 printed the global line at every micro-step: with gradient accumulation its
// figures are a micro-batch's (not told apart). The timers are a breakdown beside the step, not the
// step: DeepSpeed's autotuning tutorial says that their sum "is less than the actual training step
// latency" (docs/_tutorials/autotuning.md; the time between the engine's calls, data loading and
// the training loop's own work, is in no timer). A log's throughput lines stay its step figure;
// only a log with no step line of any format takes the sum (StepFigure::kEngineTimers).
struct EngineTimes {
  std::optional<double> fwd_ms;            // forward
  std::optional<double> bwd_ms;            // backward, its gradient reduction included
  std::optional<double> bwd_inner_ms;      // backward without the reduction after it
  std::optional<double> bwd_allreduce_ms;  // the gradient reduction the engine runs after the
                                           // backward pass (ZeRO-2/3 reduce during it: there
                                           // only their epilogue, the rest inside bwd_inner)
  std::optional<double> step_ms;           // engine.step(): the optimizer step (ZeRO-1/2's
                                           // parameter all-gather included)
};

struct TimerSample {
  EngineTimes ms;
  int line = 0;  // 1-based, in the file
};

// The GPU memory the log reports: PyTorch's caching allocator on the GPUs that print it, the
// largest over the whole run, warm-up, evaluation and checkpoint reports included (the peak
// counters run from the start in Megatron-LM and DeepSpeed, so a report after the warm-up holds
// the warm-up's peak; the peak, wherever it falls, is what must fit). nullopt where the log
// says nothing. In GiB (2^30 bytes). Read from:
// - Megatron-LM's report_memory lines, printed by each data-parallel rank 0 (one GPU per
//   tensor/pipeline/context-parallel rank: the largest is the fullest of them):
//   "[Rank 0] (after 10 iterations) memory (MB) | allocated: ... | max allocated: 9300.25 |
//   reserved: ... | max reserved: 10240.00" (MB = 2^20 bytes; before 2020-09 "max cached");
// - DeepSpeed's throughput line, rank 0: "MaxMemAllocated=19.52GB" (GB = 2^30 bytes, since
//   0.6.0), and its see_memory_usage lines (config "memory_breakdown"), "MA 1.2 GB  Max_MA 3.4 GB
//   CA ... GB  Max_CA 4 GB" (Max_MA read; Max_CA is rounded to whole GB, not read; each of these
//   lines resets the peak counters); both also in a Megatron-DeepSpeed log;
// - torchtitan's step lines, "memory: 41.32GiB(43.47%)": max reserved since the previous step
//   line (metrics.py resets the counters after each), of every rank that prints.
struct LoggedMemory {
  std::optional<double> max_allocated_gib;    // torch.cuda.max_memory_allocated: tensors
  std::optional<double> max_reserved_gib;     // torch.cuda.max_memory_reserved: the allocator's
                                              // pool (tensors, its cached blocks, fragmentation)
  int allocated_line = 0, reserved_line = 0;  // where the largest was read
};

struct RunLog {
  std::string file;
  LogFormat format = LogFormat::kMegatron;
  std::vector<StepSample> steps;  // in file order, iterations rising
  // DeepSpeed prints a throughput, not a step time: step_s then holds seconds per sample
  // (1 / CurrSamplesPerSec), a step being the global batch's worth.
  bool per_sample = false;
  // torchtitan prints tokens per second per GPU: step_s then holds seconds per token per GPU
  // (1 / tps); a step is the scenario's tokens per step per GPU (global batch x sequence length
  // / GPUs) times that.
  bool per_token = false;
  StepFigure figure = StepFigure::kLogged;
  // hf-trainer: the Trainer's own mean step over the whole run (train_runtime / the training
  // bar's total, else 1 / train_steps_per_second), warm-up included; nullopt without its
  // end-of-training line, and for the other formats.
  std::optional<double> run_mean_step_s;
  // DeepSpeed (format deepspeed): its global timer lines, in file order (EngineTimes).
  std::vector<TimerSample> timers;
  // Why timer lines in the log are not in `timers` (the pipeline engine's, running totals);
  // empty when there are none of those.
  std::string timers_not_read;
  LoggedMemory memory;  // megatron, deepspeed, torchtitan
};

// Reads a run log. `format` nullopt: the first format with a step line in the file, in the
// order megatron, deepspeed, trainsim-local, torchtitan, hf-trainer (Megatron-DeepSpeed prints
// both of the first two: Megatron's lines carry the step time; a Trainer run under DeepSpeed
// that prints DeepSpeed's throughput lines beside its bar is read as deepspeed: they carry each
// step's own throughput, the bar a moving average), and last deepspeed's engine timers alone
// (StepFigure::kEngineTimers). Errors: "FILE:LINE: ..." for a malformed step line or an
// iteration that does not rise, and for a memory or DeepSpeed timer line that starts like one
// but does not parse (counted only in a log of the format that reads it: one with its step
// lines); "FILE: no ... line" when nothing matched.
Expected<RunLog> ParseRunLog(std::string_view text, const std::string& file,
                             std::optional<LogFormat> format);
Expected<RunLog> LoadRunLog(const std::string& path, std::optional<LogFormat> format);

// The medians of DeepSpeed's engine timers over its timer lines after the warm-up: those after
// the last warm-up step line (a throughput line covers steps_per_print steps, a timer line one).
struct StepBreakdown {
  int samples = 0;         // timer lines used
  int warmup_samples = 0;  // left out
  EngineTimes median_ms;   // each over the lines that print it
};

// The steady state of a run: its samples after `warmup` step lines (the first
// ones time compilation, allocation and the first data loads), at the last
// global batch size the log reports (a batch-size ramp-up changes the step).
struct StepSummary {
  int samples = 0;         // used
  int warmup_samples = 0;  // skipped at the start
  int other_batch = 0;     // skipped for another global batch size
  double median_step_s = 0, mean_step_s = 0, min_step_s = 0, max_step_s = 0;
  std::optional<double> median_tflops_per_gpu;
  std::optional<int64_t> global_batch;
  int64_t first_iteration = 0, last_iteration = 0;  // of the samples used
  std::optional<StepBreakdown> breakdown;  // nullopt without a timer line after the warm-up
};

// Fails when no sample is left after the warm-up (the error says how many lines there were).
// A whole-run mean (StepFigure::kRunMean) has its warm-up inside it: `warmup` does not apply.
Expected<StepSummary> Summarize(const RunLog& log, int warmup);

// The median of `v` (the mean of the middle two for an even count); `v` not empty.
double Median(std::vector<double> v);

}  // namespace trainsim::observe
