// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Whole-job time and cost of one candidate configuration under one pricing
// option: provisioning, dataset download, the computation, checkpoint writes,
// and the time lost to interruptions (spot reclaims, or any failures the
// caller gives a rate for). DESIGN.md section 5; docs/planner.md section 6.
//
// The expectation comes from closed forms (Daly 2006); the spread from a
// seeded Monte-Carlo of the job, which also draws the model's error when
// JobInputs::work_factors are given. EstimateJob is a pure function: no I/O, no
// globals, thread-safe; the same inputs give the same bytes.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/scenario.h"
#include "core/status.h"
#include "planner/job/capacity_block.h"
#include "planner/job/job_elastic.h"

namespace trainsim::planner {

// The largest MaxRuntimeInSeconds SageMaker accepts: 28 days (AWS CloudFormation
// reference, AWS::SageMaker StoppingCondition, MaxRuntimeInSeconds: "The maximum
// value is 28 days"). A longer job runs as a chain of training jobs.
inline constexpr double kSagemakerMaxRuntime_s = 28 * 24 * 3600.0;
// SageMaker managed warm pools keep instances alive for at most 3600 s after a
// job (SageMaker Developer Guide, "SageMaker Managed Warm Pools").
inline constexpr double kMaxWarmPoolKeepAlive_s = 3600;
// ... and a warm pool's cluster runs consecutive jobs for at most 7 days (same guide).
inline constexpr double kMaxWarmPoolLife_s = 7 * 24 * 3600.0;

struct JobInputs {
  double work_s = 0;  // computation at full speed: steps x seconds per step; > 0
  int nodes = 1;      // instances
  // Price per instance-hour under `pricing` (for SageMaker options, the
  // SageMaker price). Absent: every cost in the estimate is absent, never 0.
  std::optional<double> price_usd_hr;
  Pricing pricing = Pricing::kOnDemand;
  double provisioning_s = 0;      // request to instances up: in the wall time, not billed
  double download_s = 0;          // dataset download before the first step: billed
  double checkpoint_write_s = 0;  // delta: one checkpoint write, training paused
  // Reading a checkpoint back (a SageMaker chain's later jobs); unset: checkpoint_write_s.
  // Restarts carry their reload in restart_s.
  std::optional<double> checkpoint_read_s;
  // R: after an interruption, re-provisioning the lost instance and reloading
  // the checkpoint. The surviving instances are billed through it.
  double restart_s = 0;
  // Interruptions per instance-hour: 0 for on-demand and SageMaker, the spot
  // rate (InterruptionsPerHour) for spot; a non-zero rate under on-demand
  // pricing models hardware failures the same way.
  double interruptions_per_instance_hour = 0;
  // Reclaim waves: instances each interruption event takes at once (capped at
  // nodes). Events then come at nodes x the rate / wave, so that each instance
  // keeps its rate; each event stops the job once and waits for wave
  // replacements together.
  int reclaim_wave_nodes = 1;
  // Capacity (planner/job/spot_capacity.h): the chance that one request for the
  // job's instances is filled, retried every capacity_retry_s. The job waits
  // before it starts, and each interruption's replacements wait too (the same
  // chance: a conservative reading for fewer instances). 1: always at once.
  double capacity_chance = 1;
  double capacity_retry_s = 0;
  // kSpotFallback (and only it): the wall time from the request by which the
  // job must end, and the on-demand price it falls back to. The job runs on
  // spot while it could still finish on on-demand if one more stretch were
  // lost, then switches (planner/job/job_run.h); no closed form: the expectations
  // are the Monte-Carlo's means.
  std::optional<double> fallback_deadline_s;
  std::optional<double> fallback_usd_hr;
  // kSpotElastic (and only it): the groups of nodes whose loss takes the same
  // data-parallel replicas (>= 2, dividing nodes; each replica holds the whole
  // training state); the job trains on the replicas left after a reclaim
  // (planner/job/job_elastic.h), stalling
  // elastic_loss_pause_s when replicas leave and elastic_join_pause_s when they
  // join. Checkpoints guard against losing every replica: the Daly interval of
  // that rate unless checkpoint_interval_s is set. No closed form: the
  // expectations are the Monte-Carlo's means.
  int elastic_groups = 0;
  double elastic_loss_pause_s = 0;
  double elastic_join_pause_s = 0;
  // kSagemaker, kSagemakerSpot: the run goes as a chain of training jobs of at
  // most max_job_s each (kSagemakerMaxRuntime_s); each later job provisions
  // again (provisioning_s, not billed) and reloads the checkpoint
  // (checkpoint_read_s, billed). Infinity: one job.
  double max_job_s = std::numeric_limits<double>::infinity();
  // kSagemaker only (SageMaker: warm pools do not run spot): the warm pool's
  // keep-alive, 0 to 3600 s. A later job of the chain that starts within the
  // pool's 7 days (kMaxWarmPoolLife_s) runs on the retained instances (no
  // provisioning); the keep-alive after the last job is billed. With 28-day
  // jobs no later job starts within 7 days: the pool then only costs.
  double warm_pool_keep_alive_s = 0;
  // Work seconds between checkpoints. Unset: the Daly interval when the rate
  // is non-zero, else no periodic checkpoints (one final write).
  std::optional<double> checkpoint_interval_s;
  // Write a checkpoint within the 120 s spot notice (needs checkpoint_write_s
  // <= 120; spot and sagemaker-spot only): no work is lost, no periodic
  // checkpoints unless checkpoint_interval_s is set.
  bool checkpoint_on_notice = false;
  // kSagemakerSpot: billed seconds / run seconds (1 - the managed-spot saving).
  double spot_billed_fraction = 1;
  // kCapacityBlock, kTrainingPlan (and only they): the reservation's rules,
  // nodes, checkpoint write, restart, gap and the blocks booked for the
  // prediction (planner/job/capacity_block.h). Each trial runs its training in
  // them (setup_s and training_s are the trial's, set by EstimateJob); its
  // wall time and bill are the blocks', never interrupted.
  std::optional<CapacityBlockInputs> blocks;
  // kSavingsPlan1y/3y: the instance-hours the commitment covers (price_usd_hr
  // is its committed rate); billed hours past them cost beyond_usd_hr each.
  double committed_instance_hours = std::numeric_limits<double>::infinity();
  std::optional<double> beyond_usd_hr;
  int trials = 2000;  // Monte-Carlo runs, 1 to 1000000
  uint64_t seed = 1;
  // Model error: factors on work_s (the simulated step time's error against
  // published measurements like this job, core/error_bands.h BandErrors as
  // exp(-e)). Each Monte-Carlo trial runs the job with work_s times one of
  // them, drawn uniformly; empty = work_s exactly. Expectations (the closed
  // forms and the Spreads' means) stay those of work_s itself: the
  // prediction; the Spreads' stddev and percentiles include the error.
  std::vector<double> work_factors;
};

// A figure over the Monte-Carlo trials. Percentiles are nearest-rank: the
// value at position ceil(p * trials) of the sorted trials (1-based).
struct Spread {
  double mean = 0;
  double stddev = 0;  // sample standard deviation; 0 for one trial
  double p10 = 0;     // with p90, the central 80% (the GUI's Pareto error bars)
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

enum class IntervalSource {
  kNone,      // no periodic checkpoints: only the final write
  kDaly,      // DalyInterval_s of the write time and the job's MTBI
  kOverride,  // JobInputs::checkpoint_interval_s
};

struct JobEstimate {
  // Closed forms (exact expectations under the model; with capacity_chance < 1
  // the restarts' waits enter as their mean, planner/job/job_run.h).
  double expected_wall_s = 0;  // capacity wait + provisioning + download + training with its losses
  double expected_start_wait_s = 0;  // waiting for capacity before provisioning
  double expected_interruptions = 0;
  double mtbi_s = 0;  // the whole job's mean time between interruptions; infinity without

  // Checkpoints.
  double checkpoint_interval_s = 0;  // work between writes; work_s when kNone
  IntervalSource interval_source = IntervalSource::kNone;
  int64_t checkpoints = 0;  // scheduled writes, the final one included (not notice writes)

  // Monte-Carlo. Cost percentiles are taken over cost on its own (the P90
  // cost and the P90 time may come from different trials).
  Spread wall_s;
  std::optional<Spread> cost_usd;     // absent without a price
  double mean_billed_instance_s = 0;  // what the price applies to
  double mean_interruptions = 0;      // events (a reclaim wave counts once)
  int trials_run = 0;                 // fewer than asked when the interruptions would take too long
  // Too many interruptions to simulate: wall_s and cost_usd hold the closed
  // form (stddev 0) and billing ignores the per-session minimum.
  bool monte_carlo_skipped = false;

  // SageMaker: the training jobs the predicted run takes (JobInputs::max_job_s).
  int64_t jobs = 1;

  // kSpotFallback: the share of trials that switched to on-demand, and the mean
  // wall time (from the request) at which they did; with work_factors, over the
  // trials with the model's error (like the percentiles).
  std::optional<double> fallback_share;
  std::optional<double> mean_fallback_at_s;

  // kSpotElastic: the mean share of replicas live over the training (Parcae's
  // liveput over the full throughput), and the mean times all were lost.
  std::optional<double> live_share;
  std::optional<double> total_losses;

  // Reserved blocks: the ones booked for the prediction (expected_wall_s is
  // theirs); trials that outlast them buy more.
  std::optional<CapacityBlockJob> blocks;

  // SageMaker managed spot: MaxWaitTimeInSeconds = P99 wall time, and
  // MaxRuntimeInSeconds = P99 of the wall time less provisioning, each
  // rounded up to a whole hour.
  std::optional<double> max_wait_s;
  std::optional<double> max_runtime_s;
};

// InvalidInput naming the field for a bad input (negative or non-finite
// times, nodes < 1, trials out of range, interruptions with no way to
// checkpoint, a job that would never finish, blocks that cannot hold it).
Expected<JobEstimate> EstimateJob(const JobInputs& in);

// The reserved blocks (in.blocks, which must be set) that hold a run of
// `run_s` seconds from the end of provisioning (the download, the training
// and its checkpoint writes): their wall time counts from the first block's
// start, provisioning included.
Expected<CapacityBlockJob> RunInBlocks(const JobInputs& in, double run_s);

// A run of `run_s` seconds (from the end of provisioning) as a chain of
// training jobs (JobInputs::max_job_s): how many, the later jobs' reloads
// (billed) and their provisioning (not billed; none for the jobs a warm pool
// still holds).
struct JobChain {
  int64_t jobs = 1;
  int64_t warm_starts = 0;  // later jobs started on the warm pool
  double reload_s = 0;
  double provisioning_s = 0;
};
JobChain ChainOf(const JobInputs& in, double run_s);

// The elastic job of `in` (kSpotElastic) with `work_s` of work: its shape, the
// checkpoint interval included (in's override, else the Daly interval of the
// rate of losing every replica, else none), and where the interval comes from.
ElasticShape ElasticShapeOf(const JobInputs& in, double work_s, IntervalSource* source);

// What `billed_instance_s` instance-seconds cost under in's price and
// commitment (not the fallback's on-demand hours); infinity without a price.
double CostOf_usd(const JobInputs& in, double billed_instance_s);

}  // namespace trainsim::planner
