// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Elastic training on spot ("spot-elastic"): the job keeps training on the
// data-parallel replicas that are left after a reclaim, as Parcae (NSDI'24)
// does, instead of stopping for the replacement. docs/planner.md section 6.13.
//
// The job's data-parallel replicas each hold the whole training state
// (ZeRO-0). A node's loss takes the replicas that have GPUs on it: the nodes
// fall into `groups` groups of nodes / groups nodes whose loss takes the same
// replicas (planner/job/pricing.cc derives them from the rank layout); a group's
// replicas are live while all its nodes are up.
//
// Time 0 is the end of provisioning. The dataset download comes first and is
// never interrupted; then the training makes progress at the share of
// replicas live (gradient accumulation keeps the global batch, so the step
// does the same work on fewer replicas, more slowly; all-reduce time is taken
// to scale the same way). Each up node fails at rate lambda; a failure event
// takes min(wave_nodes, up) distinct up nodes at once. A failed node's
// replacement waits for capacity (geometric, planner/job/spot_capacity.h, one wait
// per event) and restart_s, then joins. Every change of the live replicas
// stalls the job: loss_pause_s when replicas leave (the interrupted step is
// redone), join_pause_s when they join (the newcomers receive the state). When
// no replica is left the state is gone: progress goes back to the last
// checkpoint, and the first group to come back restarts from it (its reload is
// in restart_s). Checkpoints are written every interval_s of progress, taking
// checkpoint_write_s with progress stopped; a write that the last replica
// does not survive is lost; the last write ends the run.
//
// Billing by EC2 sessions: each node from time 0 (or its join) to its failure
// (or the end), at least kMinimumSession_s each; a replacement that has not
// joined by the end is never billed.
//
// ElasticSimulator is not thread-safe; results depend only on the shape and
// seed (std::mt19937_64 and inverse-CDF sampling, as planner/job/job_run.h).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "planner/job/job_run.h"

namespace trainsim::planner {

struct ElasticShape {
  double download_s = 0;
  double work_s = 0;      // progress to make at full speed; > 0
  double interval_s = 0;  // progress between checkpoints; >= work_s: only the final write
  double checkpoint_write_s = 0;
  double node_rate_per_s = 0;  // lambda: failures per up node per second
  double restart_s = 0;        // a replacement's provisioning and reload
  double loss_pause_s = 0;
  double join_pause_s = 0;
  int nodes = 1;
  int groups = 2;  // >= 2, dividing nodes
  int wave_nodes = 1;
  double capacity_chance = 1;
  double retry_s = 0;
};

// Closed forms under independent failures (wave_nodes 1) in the steady state,
// each node up for a mean 1 / lambda and then down for D = E[W] + restart_s:
// the share of time a node is down is f = lambda D / (1 + lambda D) (an
// alternating renewal process), a group of g = nodes / groups nodes is live
// with (1 - f)^g, G = groups.
//  - LiveShare: (1 - f)^g, the mean share of replicas live.
//  - TotalLossRate_per_s: the rate at which the last live group fails,
//    G g lambda (1 - f)^g (1 - (1 - f)^g)^(G - 1); reclaim waves make it
//    larger (they strike several groups at once) and are not counted.
//  - ExpectedElasticRun_s: an approximation for ranking and tests, exact in
//    the limit of long jobs at q = 1 with no pauses and no total loss:
//    download + W / (LiveShare (1 - pause share)) + writes, the pause share
//    being the membership changes' rate times their mean pause, plus the
//    work redone after total losses (half an interval and a restart each).
double LiveShare(const ElasticShape& shape);
double TotalLossRate_per_s(const ElasticShape& shape);
double ExpectedElasticRun_s(const ElasticShape& shape);
// Expected failure events over that run: up nodes x lambda / wave_nodes.
double ExpectedElasticFailures(const ElasticShape& shape);
// Expected instance-seconds billed over that run: every node through the download, then
// the up share 1 - f of each node through the training.
double ExpectedElasticBilled_s(const ElasticShape& shape);

struct ElasticOutcome {
  TrialOutcome trial;        // start wait, run, failure events, billed sessions
  double live_share = 0;     // group-seconds live / (groups x training seconds)
  int64_t total_losses = 0;  // times the last replica was lost
};

class ElasticSimulator {
 public:
  ElasticSimulator(const ElasticShape& shape, uint64_t seed);
  ElasticOutcome RunTrial();
  // The next trials run `shape` (same nodes and groups; the generator goes on).
  void SetShape(const ElasticShape& shape) { shape_ = shape; }

 private:
  double Uniform01();
  double Exponential_s(double rate_per_s);  // infinity at rate 0
  double CapacityWait_s();
  void Fail();             // a failure event at now_s_
  void Join(double at_s);  // every replacement due at at_s joins
  void Stall(double pause_s);
  void Reset();                   // every node up, nothing done, at the download's end
  double FailRate_per_s() const;  // of failure events (waves count once) among the up nodes
  double NextJoin_s() const;      // the earliest replacement due; infinity when none

  ElasticShape shape_;
  int group_nodes_ = 1;
  std::mt19937_64 rng_;
  double now_s_ = 0;
  std::vector<double> back_s_;      // per node: when its replacement joins; < 0 = up
  std::vector<double> since_s_;     // per node: its session's start
  std::vector<int> down_in_group_;  // per group: nodes down
  std::vector<int> up_;             // the up nodes (unordered)
  std::vector<int> slot_;           // per node: its index in up_, -1 when down
  int live_groups_ = 0;
  double progress_s_ = 0, saved_s_ = 0;
  double blocked_until_s_ = 0;  // no progress before (a write or a pause)
  double writing_to_s_ = -1;    // the progress a write in flight saves; < 0: none
  ElasticOutcome out_;
};

}  // namespace trainsim::planner
