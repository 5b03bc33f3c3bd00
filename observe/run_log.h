// What a training job printed about its steps, read back (docs/observe.md).
//
// A run log is a text file of one run: Megatron-LM's iteration lines (also
// printed by NeMo 2 / Megatron-Bridge and Megatron-DeepSpeed), DeepSpeed's
// throughput-timer lines, or the JSON step lines of trainsim's own local
// trainer (OUT/local/steps.jsonl of `trainsim launch --backend local`). Every line the format does
// not know is skipped; a line that looks like one of its step lines but does not parse is an error
// naming the file and line, and so is a log whose iterations go back (two runs in one file) or that
// holds no step line at all.
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
};
const char* ToString(LogFormat f);  // "megatron", "trainsim-local", "deepspeed"
// "megatron", "trainsim-local" or "deepspeed"; anything else is an error naming `field`.
Expected<LogFormat> ParseLogFormat(std::string_view name, std::string_view field);

// One step line: the iteration it ends and the seconds per iteration it reports.
// Megatron-LM prints the mean over the iterations since its previous line
// (--log-interval); the local trainer prints every step.
struct StepSample {
  int64_t iteration = 0;
  double step_s = 0;
  std::optional<double> tflops_per_gpu;  // Megatron's "throughput per GPU (TFLOP/s/GPU)"
  std::optional<int64_t> global_batch;   // Megatron's "global batch size"
  std::optional<double> loss;            // "lm loss" / the local trainer's loss
  int line = 0;                          // 1-based, in the file
};

struct RunLog {
  std::string file;
  LogFormat format = LogFormat::kMegatron;
  std::vector<StepSample> steps;  // in file order, iterations rising
  // DeepSpeed prints a throughput, not a step time: step_s then holds seconds per sample
  // (1 / CurrSamplesPerSec), a step being the global batch's worth.
  bool per_sample = false;
};

// Reads a run log. `format` nullopt: the first format with a step line in the file, in the
// order megatron, deepspeed, trainsim-local (Megatron-DeepSpeed prints both of the first two:
// Megatron's lines carry the step time). Errors: "FILE:LINE: ..." for a malformed step line or an
// iteration that does not rise; "FILE: no ... line" when nothing matched.
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
Expected<StepSummary> Summarize(const RunLog& log, int warmup);

// The median of `v` (the mean of the middle two for an even count); `v` not empty.
double Median(std::vector<double> v);

}  // namespace trainsim::observe
