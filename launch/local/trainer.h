// The training loop of one rank: its pipeline stage of the model, the 1F1B
// (or GPipe) schedule over the step's microbatches with activations sent
// forward and gradients backward, gradient sums over the stage's replicas in
// buckets as the last microbatch's backward pass finishes them (PyTorch DDP),
// Adam, checkpoints and resume, and a stop request agreed by all ranks once
// per step. Everything it says goes through a TrainObserver; every rank runs
// Train with the same config.
//
// Rank layout (Megatron's with tp = 1): rank = stage x dp + replica. Replica
// r's microbatch i of step s holds samples (r m + i) b .. + b - 1 of step s
// (m microbatches of b sequences per replica), so any layout sees the same
// global batch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "launch/local/ops.h"
#include "launch/local/run_config.h"
#include "launch/local/transport.h"

namespace trainsim::local {

struct RankLayout {
  int rank = 0, world = 1, pp = 1, dp = 1;
  int stage = 0, replica = 0;

  static RankLayout Of(int rank, int world, int pp);
  int RankAt(int stage, int replica) const { return stage * dp + replica; }
  // The rank whose stdout carries the losses: the last stage's replica 0.
  bool reports() const { return stage == pp - 1 && replica == 0; }
};

struct StepResult {
  int step = 0;
  double loss = 0;     // mean over the global batch's tokens; NaN off the last stage
  double seconds = 0;  // the step's wall time, the largest over the ranks
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  // Before the first step: the step it starts at (1, or after the checkpoint
  // it resumed from) and this stage's parameter count.
  virtual void OnStart(int /*first_step*/, int64_t /*stage_params*/) {}
  virtual void OnStep(const StepResult& /*step*/) {}
  virtual void OnCheckpoint(int /*step*/) {}
};

struct TrainResult {
  std::vector<StepResult> steps;  // those run by this call
  bool interrupted = false;       // stopped early on a stop request
  int checkpoint_step = 0;        // the last complete checkpoint (0: none)
};

// The order of a stage's passes over microbatches 0..m-1: forward (true) or
// backward, and the microbatch. 1F1B: pp - stage - 1 warm-up forwards, then
// one forward and one backward in turn, then the remaining backwards.
struct Pass {
  bool forward = true;
  int microbatch = 0;
};
std::vector<Pass> ScheduleOrder(Schedule schedule, int pp, int stage, int m);

// Runs steps from 1 (or after the checkpoint resumed from) to config.steps,
// or until `stop_requested` returns true on some rank at the end of a step.
// config.dp must be resolved (ResolveLayout). Errors of code kInvalidInput
// (resume refused) are the same on every rank; others are this rank's own,
// and ranks whose peers failed return an error with an empty message.
Expected<TrainResult> Train(const RunConfig& config, const RankLayout& layout, Transport& transport,
                            TrainObserver& observer, const std::function<bool()>& stop_requested);
// The same with the model's memory and kernels in `ops` (ops.h); `transport`
// then moves that memory (a device transport for device ops). Without it: a
// CpuOps.
Expected<TrainResult> Train(const RunConfig& config, const RankLayout& layout, Transport& transport,
                            Ops& ops, TrainObserver& observer,
                            const std::function<bool()>& stop_requested);

// Summary of a run's steps after the first `warmup` (the caller's line).
struct RunSummary {
  int steps = 0;  // the timed steps
  double mean_step_s = 0, median_step_s = 0;
  double first_loss = 0, last_loss = 0;  // of the timed steps
};
RunSummary Summarize(const std::vector<StepResult>& steps, int warmup);

}  // namespace trainsim::local
