// `trainsim observe` of training logs: the steady step of each run, beside the prediction
// (docs/observe.md sections 1-3).
#include <algorithm>
#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "core/model_spec.h"
#include "core/units.h"
#include "observe/run_log.h"
#include "observe/run_set.h"

namespace trainsim::observe_cli {
namespace {

ordered_json SummaryJson(const observe::RunLog& log, const observe::StepSummary& s) {
  ordered_json j;
  j["file"] = log.file;
  j["format"] = observe::ToString(log.format);
  // DeepSpeed: the *_step_s figures below are seconds per sample (RunLog::per_sample).
  j["per_sample"] = log.per_sample;
  // torchtitan: seconds per token per GPU (RunLog::per_token).
  j["per_token"] = log.per_token;
  j["figure"] = log.figure == observe::StepFigure::kSmoothed       ? "smoothed"
                : log.figure == observe::StepFigure::kRunMean      ? "run_mean"
                : log.figure == observe::StepFigure::kEngineTimers ? "engine_timers"
                                                                   : "logged";
  j["run_mean_step_s"] =
      log.run_mean_step_s ? ordered_json(*log.run_mean_step_s) : ordered_json(nullptr);
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); };
  if (s.breakdown) {
    const observe::EngineTimes& t = s.breakdown->median_ms;
    j["breakdown"] = {{"samples", s.breakdown->samples},
                      {"warmup_samples", s.breakdown->warmup_samples},
                      {"fwd_ms", opt(t.fwd_ms)},
                      {"bwd_ms", opt(t.bwd_ms)},
                      {"bwd_inner_ms", opt(t.bwd_inner_ms)},
                      {"bwd_allreduce_ms", opt(t.bwd_allreduce_ms)},
                      {"step_ms", opt(t.step_ms)}};
  } else {
    j["breakdown"] = nullptr;
  }
  j["timers_not_read"] =
      log.timers_not_read.empty() ? ordered_json(nullptr) : ordered_json(log.timers_not_read);
  j["memory"] = {{"max_allocated_gib", opt(log.memory.max_allocated_gib)},
                 {"max_reserved_gib", opt(log.memory.max_reserved_gib)}};
  j["step_lines"] = log.steps.size();
  j["samples"] = s.samples;
  j["warmup_samples"] = s.warmup_samples;
  j["other_batch_samples"] = s.other_batch;
  j["first_iteration"] = s.first_iteration;
  j["last_iteration"] = s.last_iteration;
  j["median_step_s"] = s.median_step_s;
  j["mean_step_s"] = s.mean_step_s;
  j["min_step_s"] = s.min_step_s;
  j["max_step_s"] = s.max_step_s;
  j["global_batch"] = s.global_batch ? ordered_json(*s.global_batch) : ordered_json(nullptr);
  j["median_tflops_per_gpu"] =
      s.median_tflops_per_gpu ? ordered_json(*s.median_tflops_per_gpu) : ordered_json(nullptr);
  return j;
}

std::string Ms(const std::optional<double>& v) { return v ? Fixed(*v, 1) + " ms" : "-"; }

// DeepSpeed's engine timers and the memory a log reports, under its step line.
void PrintLogExtras(const observe::RunLog& log, const observe::StepSummary& s) {
  if (s.breakdown) {
    const observe::EngineTimes& t = s.breakdown->median_ms;
    const double sum = t.fwd_ms.value_or(0) + t.bwd_ms.value_or(0) + t.step_ms.value_or(0);
    std::cout << "  DeepSpeed engine timers, median of " << s.breakdown->samples
              << " steps after the warm-up: fwd " << Ms(t.fwd_ms) << ", bwd " << Ms(t.bwd_ms)
              << " (inner " << Ms(t.bwd_inner_ms) << ", allreduce " << Ms(t.bwd_allreduce_ms)
              << "), step " << Ms(t.step_ms) << "; sum " << Fixed(sum, 1)
              << " ms (data loading and the loop's own code are outside the timers)\n";
  }
  if (!log.timers_not_read.empty())
    std::cout << "  timers not read: " << log.timers_not_read << "\n";
  const observe::LoggedMemory& m = log.memory;
  if (m.max_allocated_gib || m.max_reserved_gib) {
    std::cout << "  memory:";
    if (m.max_allocated_gib) {
      std::cout << " max allocated " << Fixed(*m.max_allocated_gib, 2) << " GiB (line "
                << m.allocated_line << ")";
    }
    if (m.max_reserved_gib) {
      std::cout << (m.max_allocated_gib ? "," : "") << " max reserved "
                << Fixed(*m.max_reserved_gib, 2) << " GiB (line " << m.reserved_line << ")";
    }
    std::cout << "\n";
  }
}

// Each file's log and its summary, in the order given.
Expected<observe::RunSet> LoadRuns(const ObserveArgs& a) {
  std::optional<observe::LogFormat> format;
  if (!a.format.empty()) {
    Expected<observe::LogFormat> f = observe::ParseLogFormat(a.format, "--format");
    if (f.ok()) format = *f;  // checked by ObserveCommand
  }
  std::vector<observe::RunLog> logs;
  std::vector<observe::StepSummary> summaries;
  for (const std::string& file : a.files) {
    Expected<observe::RunLog> log =
        SageMakerFormatOf(a, file) == observe::SageMakerFormat::kCloudWatchLogs
            ? observe::LoadCloudWatchRunLog(file, std::nullopt, a.log_stream)
            : observe::LoadRunLog(file, format);
    if (!log.ok()) return log.status();
    Expected<observe::StepSummary> s = observe::Summarize(*log, a.warmup);
    if (!s.ok()) return s.status();
    logs.push_back(std::move(*log));
    summaries.push_back(*s);
  }
  return observe::CombineRuns(std::move(logs), std::move(summaries));
}

// The runs set beside the simulated step of the configuration they ran.
struct Compared {
  Prediction predicted;
  observe::MeasuredStep measured;
};

ordered_json CompareJson(const observe::RunSet& runs, const Compared& c) {
  const double measured = c.measured.step_s;
  const double step = c.predicted.result.step.step_time_s;
  ordered_json j;
  j["scenario"] = c.predicted.scenario.name;
  j["predicted_step_s"] = step;
  j["error"] = step / measured - 1;
  const sim::SimulationResult& r = c.predicted.result;
  j["predicted_samples_per_s"] = r.samples_per_s;
  j["measured_samples_per_s"] = r.samples_per_s * step / measured;
  j["predicted_mfu"] = r.mfu;
  j["measured_mfu"] = r.mfu * step / measured;
  j["predicted_memory_gib"] = r.memory.total_bytes / kGiB;
  j["predicted_memory_without_reserve_gib"] =
      (r.memory.total_bytes - r.memory.reserve_bytes) / kGiB;
  const std::optional<double> alloc = observe::LargestMemory(runs, false),
                              reserved = observe::LargestMemory(runs, true);
  j["measured_max_allocated_gib"] = alloc ? ordered_json(*alloc) : ordered_json(nullptr);
  j["measured_max_reserved_gib"] = reserved ? ordered_json(*reserved) : ordered_json(nullptr);
  if (c.predicted.band) {
    const Band& band = *c.predicted.band;
    j["band_low_s"] = step / band.hi;
    j["band_high_s"] = step / band.lo;
    j["inside_band"] = measured >= step / band.hi && measured <= step / band.lo;
  }
  return j;
}

void PrintJson(const observe::RunSet& runs, const std::optional<Compared>& c) {
  ordered_json j;
  j["runs"] = ordered_json::array();
  for (size_t i = 0; i < runs.logs.size(); ++i)
    j["runs"].push_back(SummaryJson(runs.logs[i], runs.summaries[i]));
  const double measured = c ? c->measured.step_s : runs.median;
  if (runs.throughput()) {
    j[runs.per_sample ? "measured_samples_per_s" : "measured_tokens_per_s_per_gpu"] =
        c ? c->measured.units_per_step / measured : 1 / measured;
  }
  j["measured_step_s"] = runs.throughput() && !c ? ordered_json(nullptr) : ordered_json(measured);
  if (c) j["compare"] = CompareJson(runs, *c);
  std::cout << j.dump(2) << "\n";
}

// One run's line: its steady step (or throughput) and what the log says about it.
void PrintRun(const observe::RunLog& log, const observe::StepSummary& s) {
  std::cout << log.file << ": " << observe::ToString(log.format) << ", " << log.steps.size()
            << " step lines; " << s.samples << " used (iterations " << s.first_iteration << "-"
            << s.last_iteration << "; " << s.warmup_samples << " warm-up"
            << (s.other_batch ? ", " + std::to_string(s.other_batch) + " at another global batch"
                              : "")
            << ")\n";
  if (log.per_sample) {
    std::cout << "  " << Fixed(1 / s.median_step_s, 2) << " samples/s median (the log gives "
              << "a throughput: a step is the global batch's worth)";
  } else if (log.per_token) {
    std::cout << "  " << Fixed(1 / s.median_step_s, 0)
              << " tokens/s/GPU median (the log gives a throughput per GPU: a step is the "
                 "scenario's tokens per step per GPU)";
  } else if (log.figure == observe::StepFigure::kRunMean) {
    std::cout << "  step " << Fixed(s.median_step_s, 3)
              << " s: the Trainer's whole-run mean (train_runtime / steps), warm-up included: "
                 "the log has no per-step figure";
  } else {
    std::cout << "  step " << Fixed(s.median_step_s, 3) << " s median, " << Fixed(s.mean_step_s, 3)
              << " mean, " << Fixed(s.min_step_s, 3) << "-" << Fixed(s.max_step_s, 3) << " range";
  }
  if (log.figure == observe::StepFigure::kSmoothed) {
    std::cout << " (tqdm's moving average of the recent steps, not each step's time)";
  }
  if (log.run_mean_step_s && log.figure != observe::StepFigure::kRunMean) {
    std::cout << "; the Trainer's own whole-run mean " << Fixed(*log.run_mean_step_s, 3)
              << " s (warm-up included)";
  }
  if (s.global_batch) std::cout << "; global batch " << *s.global_batch;
  if (s.median_tflops_per_gpu) {
    std::cout << "; " << Fixed(*s.median_tflops_per_gpu, 1)
              << " TFLOP/s/GPU (the framework's count)";
  }
  if (log.figure == observe::StepFigure::kEngineTimers) {
    std::cout << " (DeepSpeed's fwd + bwd + step: no throughput line in the log; a lower bound "
                 "of the step)";
  }
  std::cout << "\n";
  PrintLogExtras(log, s);
}

// The predicted step, throughput, MFU, memory and band beside the measured ones.
void PrintComparison(const observe::RunSet& runs, const Compared& c) {
  const double measured = c.measured.step_s;
  const double step = c.predicted.result.step.step_time_s;
  std::cout << "\n"
            << c.predicted.scenario.name << " simulated against " << runs.samples
            << " measured steps:\n"
            << "  step time            predicted " << Fixed(step, 3) << " s, measured "
            << Fixed(measured, 3) << " s: " << Signed(step / measured - 1)
            << (step < measured ? " (the simulator is faster)" : " (the simulator is slower)")
            << "\n";
  // The same work per step: throughput and MFU scale with the inverse of the step.
  const sim::SimulationResult& r = c.predicted.result;
  std::cout << "  throughput           predicted " << Fixed(r.samples_per_s, 2)
            << " samples/s, measured " << Fixed(r.samples_per_s * step / measured, 2)
            << " samples/s\n"
            << "  MFU                  predicted " << Fixed(100 * r.mfu, 1) << "%, measured "
            << Fixed(100 * r.mfu * step / measured, 1)
            << "% (the model's FLOPs per step over the measured step)"
            << (r.mfu * step / measured > 1
                    ? "; above 100%: the run did less work per step than the scenario describes "
                      "(check its model, batch and GPUs)"
                    : "")
            << "\n";
  const std::optional<double> alloc = observe::LargestMemory(runs, false),
                              reserved = observe::LargestMemory(runs, true);
  if (alloc || reserved) {
    std::cout << "  memory per GPU       predicted " << Fixed(r.memory.total_bytes / kGiB, 2)
              << " GiB (" << Fixed((r.memory.total_bytes - r.memory.reserve_bytes) / kGiB, 2)
              << " without the reserve for the CUDA context and fragmentation), measured";
    if (alloc) std::cout << " max allocated " << Fixed(*alloc, 2) << " GiB";
    if (reserved)
      std::cout << (alloc ? "," : "") << " max reserved " << Fixed(*reserved, 2) << " GiB";
    std::cout << " (neither counts the CUDA context)\n";
  }
  if (c.predicted.band) {
    const double lo = step / c.predicted.band->hi, hi = step / c.predicted.band->lo;
    const bool inside = measured >= lo && measured <= hi;
    std::cout << "  " << Fixed(100 * c.predicted.band->coverage, 0) << "% band             "
              << Fixed(lo, 3) << "-" << Fixed(hi, 3) << " s: the measurement is "
              << (inside ? "inside" : "outside") << " (" << c.predicted.band->family << ")\n";
  }
}

}  // namespace

int ObserveLogs(const ObserveArgs& a) {
  Expected<observe::RunSet> runs = LoadRuns(a);
  if (!runs.ok()) return Fail(runs.status());
  std::optional<Compared> compared;
  if (!a.scenario.empty() || !a.plan.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) return Fail(p.status());
    Expected<observe::MeasuredStep> m = observe::MeasuredStepFor(*runs, p->scenario);
    if (!m.ok()) return Fail(m.status());
    compared = Compared{std::move(*p), *m};
  }
  if (a.json) {
    PrintJson(*runs, compared);
    return 0;
  }
  for (size_t i = 0; i < runs->logs.size(); ++i) PrintRun(runs->logs[i], runs->summaries[i]);
  if (compared) PrintComparison(*runs, *compared);
  return 0;
}

}  // namespace trainsim::observe_cli
