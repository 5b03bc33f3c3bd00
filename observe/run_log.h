// What a training job printed about its steps, read back (docs/observe.md).
//
// A run log is a text file of one run: Megatron-LM's iteration lines (also
// printed by NeMo 2 / Megatron-Bridge and Megatron-DeepSpeed), DeepSpeed's
// throughput-timer lines, the JSON step lines of trainsim's own local
// trainer (OUT/local/steps.jsonl of `trainsim launch --backend local`), torchtitan's step lines
// (a torchrun job), or what the Hugging Face Trainer prints (its tqdm progress bar and its
// end-of-training line). Every line the format does not know is skipped; a line that looks like
// one of its step lines but does not parse is an error naming the file and line, and so is a log
// whose iterations go back (two runs in one file) or that holds no step line at all.
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
};

// Reads a run log. `format` nullopt: the first format with a step line in the file, in the
// order megatron, deepspeed, trainsim-local, torchtitan, hf-trainer (Megatron-DeepSpeed prints
// both of the first two: Megatron's lines carry the step time; a Trainer run under DeepSpeed
// that prints DeepSpeed's throughput lines beside its bar is read as deepspeed: they carry each
// step's own throughput, the bar a moving average). Errors:
// "FILE:LINE: ..." for a malformed step line or an iteration that does not rise; "FILE: no ...
// line" when nothing matched.
Expected<RunLog> ParseRunLog(std::string_view text, const std::string& file,
                             std::optional<LogFormat> format);
Expected<RunLog> LoadRunLog(const std::string& path, std::optional<LogFormat> format);

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
};

// Fails when no sample is left after the warm-up (the error says how many lines there were).
// A whole-run mean (StepFigure::kRunMean) has its warm-up inside it: `warmup` does not apply.
Expected<StepSummary> Summarize(const RunLog& log, int warmup);

// The median of `v` (the mean of the middle two for an even count); `v` not empty.
double Median(std::vector<double> v);

}  // namespace trainsim::observe
