// Several logs of runs of one configuration, combined into the measured step that
// `trainsim observe` sets beside the simulated one (docs/observe.md sections 1-3). The CLI
// reads the logs and prints; this computes.
#pragma once

#include <optional>
#include <vector>

#include "core/scenario.h"
#include "core/status.h"
#include "observe/run_log.h"

namespace trainsim::observe {

// Runs of one configuration, each a log and its steady-state summary.
struct RunSet {
  std::vector<RunLog> logs;
  std::vector<StepSummary> summaries;
  int samples = 0;  // steps used, over every run
  // The median of the runs' medians, each counted once per sample: seconds per step, or for
  // throughput logs seconds per sample (per_sample) or per token per GPU (per_token).
  double median = 0;
  bool per_sample = false, per_token = false;  // every run's (RunLog::per_sample, per_token)
  bool throughput() const { return per_sample || per_token; }
};

// Fails when the runs are not of one kind of figure (a step time beside a throughput) or not
// of one global batch. `logs` and `summaries` are parallel and not empty.
Expected<RunSet> CombineRuns(std::vector<RunLog> logs, std::vector<StepSummary> summaries);

// The runs' measured step for scenario `s`: their median, or for a throughput log that figure
// times the scenario's samples (or tokens per GPU) per step. Fails when the runs' global batch
// is not the scenario's.
struct MeasuredStep {
  double step_s = 0;
  double units_per_step = 0;  // samples, or tokens per GPU, per step; 0 without a throughput
};
Expected<MeasuredStep> MeasuredStepFor(const RunSet& runs, const Scenario& s);

// The largest of the runs' logged memory (max reserved, or max allocated), GiB.
std::optional<double> LargestMemory(const RunSet& runs, bool reserved);

}  // namespace trainsim::observe
