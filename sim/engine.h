// Runs one training step's StepProgram on a SimGrid platform.
//
// Each simulated GPU has a compute actor (the compute stream, which also
// issues the blocking TP collectives), two send actors (pipeline activations
// forward, gradients backward) and a DP actor (gradient buckets), so
// communication overlaps compute exactly as far as the dependencies allow.
//
// Modes:
//  - kFull: every GPU is simulated and every collective and pipeline message
//    is real message exchange during the step.
//  - kReduced: TP ranks and DP replicas are symmetric, so one GPU per
//    pipeline stage is simulated. Each distinct collective (kind, size,
//    stage) is first simulated once as real message exchange among all the
//    groups that run it at the same time (so they contend for NICs as in the
//    step), and the step then reuses its duration. Tests prove the two modes
//    agree on small cases. Parameter-server scenarios always run kFull.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/strategy.h"
#include "sim/model_params.h"
#include "sim/platform.h"
#include "sim/workload.h"

namespace trainsim::sim {

enum class SimMode { kReduced, kFull };

// Trace tracks of a GPU (Chrome trace "threads").
enum TraceTrack {
  kTrackCompute = 0,       // kernels: forward, backward, recompute, optimizer
  kTrackSendForward = 1,   // pipeline activations
  kTrackSendBackward = 2,  // pipeline gradients
  kTrackDp = 3,            // gradient reduction (all-reduce, ZeRO reduce-scatter)
  kTrackTp = 4,            // tensor-parallel collectives
  kTrackWait = 5,          // compute stream waiting: pipeline bubble / messages, DP
  kTrackWeightGather = 6,  // ZeRO / FSDP all-gathers of weights
  kTrackHostCopy = 7,      // offload copies between GPU and host memory
  kTrackEp = 8,            // expert-parallel all-to-alls (MoE token dispatch and combine)
  // One track per strategy (core/strategy.h) from here: its exchanges (context parallelism's
  // key/value ring).
  kTrackFirstStrategy = 9,
  kTrackCount = kTrackFirstStrategy + kStrategyCount
};

struct TraceEvent {
  int gpu = 0;     // global rank
  int stream = 0;  // a TraceTrack
  std::string name;
  double start_s = 0, end_s = 0;
};

// Where the time of the slowest GPU's compute stream went (sums to the step).
struct Breakdown {
  double compute_s = 0;    // forward + backward kernels
  double recompute_s = 0;  // activation recompute
  double optimizer_s = 0;
  double tp_comm_s = 0;  // TP collectives (blocking: always exposed)
  double ep_comm_s = 0;  // expert-parallel all-to-alls (blocking as well)
  // Each strategy's exchanges beyond the compute they are pipelined with, in kStrategies'
  // order (context parallelism's K/V ring beyond the attention core).
  std::array<double, kStrategyCount> strategy_comm_s{};
  double dp_comm_exposed_s = 0;        // waiting for gradient reduction (buckets, ZeRO RS)
  double weight_gather_exposed_s = 0;  // waiting for ZeRO / FSDP weight all-gathers
  double offload_exposed_s = 0;        // waiting for copies to / from host memory
  double pp_comm_exposed_s = 0;        // waiting for a neighbour stage beyond the ideal bubble
  double pipeline_bubble_s = 0;        // ideal bubble: (pp - 1) x per-microbatch compute
  double data_wait_s = 0;              // waiting for the input pipeline
};

struct StepResult {
  double step_time_s = 0;
  Breakdown breakdown;
  int critical_stage = 0;
  int simulated_gpus = 0;
  int distinct_collectives = 0;  // kReduced: collectives simulated once and reused
  std::vector<TraceEvent> trace;
};

// Progress (sim/isolate.h ReportProgress) comes in 2 pp + 2 units: the
// platform (unit 1, reported by Simulate), each stage's DP collectives, each
// stage's other collectives, and the step.
inline int ProgressUnits(int pp) { return 2 * pp + 2; }

// Must run inside the simulation process (see isolate.h), after BuildPlatform.
// kReduced measures the collectives of the first `fold_replicas` DP replicas of
// each stage (sim/fold.h Fold::replicas, the platform built for it; 0 = all).
StepResult RunStep(const Scenario& s, const StepProgram& program, const Platform& platform,
                   const ModelParams& params, SimMode mode, bool record_trace,
                   int fold_replicas = 0);

}  // namespace trainsim::sim
