#include "observe/run_set.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/model_spec.h"

namespace trainsim::observe {
namespace {

std::string BatchText(const std::optional<int64_t>& b) { return b ? std::to_string(*b) : "?"; }

// The median of the runs' medians, each counted once per sample.
double WeightedMedian(const std::vector<StepSummary>& summaries, int total) {
  std::vector<std::pair<double, int>> medians;
  for (const StepSummary& s : summaries) medians.push_back({s.median_step_s, s.samples});
  std::sort(medians.begin(), medians.end());
  double median = medians.front().first;
  for (int seen = 0, k = 0; k < static_cast<int>(medians.size()); ++k) {
    seen += medians[k].second;
    if (2 * seen >= total) {
      median = medians[k].first;
      break;
    }
  }
  return median;
}

}  // namespace

Expected<RunSet> CombineRuns(std::vector<RunLog> logs, std::vector<StepSummary> summaries) {
  // Several files are several runs of one configuration: the same global batch, and logs that
  // give a step time or all a throughput.
  for (size_t i = 1; i < summaries.size(); ++i) {
    if (logs[i].per_sample != logs[0].per_sample || logs[i].per_token != logs[0].per_token) {
      return Status::InvalidInput(logs[i].file + ": a " + ToString(logs[i].format) +
                                  " log beside a " + ToString(logs[0].format) + " one (" +
                                  logs[0].file + "): give the runs of one framework");
    }
    if (summaries[i].global_batch != summaries[0].global_batch) {
      return Status::InvalidInput(logs[i].file + ": global batch " +
                                  BatchText(summaries[i].global_batch) + ", but " + logs[0].file +
                                  " ran " + BatchText(summaries[0].global_batch) +
                                  ": give the runs of one configuration");
    }
  }
  RunSet runs;
  for (const StepSummary& s : summaries) runs.samples += s.samples;
  runs.median = WeightedMedian(summaries, runs.samples);
  runs.per_sample = logs[0].per_sample;
  runs.per_token = logs[0].per_token;
  runs.logs = std::move(logs);
  runs.summaries = std::move(summaries);
  return runs;
}

Expected<MeasuredStep> MeasuredStepFor(const RunSet& runs, const Scenario& s) {
  const int64_t gb = s.training.global_batch;
  const std::optional<int64_t>& ran = runs.summaries[0].global_batch;
  if (ran && *ran != gb) {
    return Status::InvalidInput(runs.logs[0].file + ": the run's global batch is " +
                                std::to_string(*ran) + ", the scenario's " + std::to_string(gb) +
                                ": compare a run with the configuration it ran");
  }
  // A throughput log gives seconds per sample (DeepSpeed: a step is the global batch's worth)
  // or per token per GPU (torchtitan: a step is the global batch's tokens over the GPUs).
  MeasuredStep m;
  m.units_per_step = runs.per_sample
                         ? static_cast<double>(gb)
                         : static_cast<double>(gb) * TokensPerSample(s.model) / s.total_gpus();
  m.step_s = runs.median;
  if (runs.throughput()) m.step_s *= m.units_per_step;
  return m;
}

std::optional<double> LargestMemory(const RunSet& runs, bool reserved) {
  std::optional<double> out;
  for (const RunLog& l : runs.logs) {
    const std::optional<double>& v =
        reserved ? l.memory.max_reserved_gib : l.memory.max_allocated_gib;
    if (v) out = std::max(out.value_or(0), *v);
  }
  return out;
}

}  // namespace trainsim::observe
