// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// One run of a training job under Poisson interruptions: its shape, its
// expectation in closed form, and a seeded simulator that draws it.
//
// The run starts at the end of provisioning (time 0) with the dataset
// download, which is never interrupted; then comes the training, which is:
//  - periodic: full_segments segments of full_segment_s (work + checkpoint)
//    and a last one of last_segment_s (the rest of the work + the final
//    checkpoint). A failure loses the segment in progress; or
//  - on notice: progress_s seconds (work + scheduled writes) that are never
//    lost: each failure costs a notice write of notice_write_s.
// Failures come at rate 1/mtbi_s at any time except during the download and
// the notice writes; each takes wave_nodes distinct instances at once (a
// reclaim wave; 1 = independent reclaims).
//
// Capacity (planner/job/spot_capacity.h): with capacity_chance q < 1 each request
// for instances is filled with chance q, retried every retry_s; the wait is
// geometric. The job waits once before time 0 (TrialOutcome::start_wait_s) and
// the replacements of each failure wait again. After a failure the job
// restarts when its replacements are there and restart_s has passed (wait +
// restart_s); a failure during a restart strikes again, and the restart ends
// when the last replacement is back.
//
// Falling back (fallback_deadline_s finite: "spot-fallback", Can't Be Late's
// greedy policy): at the start and after each restart the job asks whether it
// could still finish on on-demand by the deadline if the next stretch on spot
// were lost (the segment in progress and a restart; with notice, a write and a
// restart). When not, it switches: the spot sessions end, an on-demand fleet
// comes up in restart_s and runs the rest uninterrupted, without the periodic
// checkpoints (one final write)
// (TrialOutcome::on_demand_billed_instance_s). A start wait longer than that
// slack is cut short: the job then starts on on-demand.
//
// Billing by sessions (EC2): each of `nodes` instances is billed from time 0;
// a failure strikes instances drawn uniformly. A running instance's session
// ends there and its replacement's session starts wait + restart_s later; a
// failure striking an instance whose replacement has not started yet (a
// reclaim during re-provisioning) pushes that start to wait + restart_s after
// it. Each session is billed at least kMinimumSession_s.
//
// JobSimulator is not thread-safe; results depend only on the shape and seed
// (std::mt19937_64 and our own inverse-CDF sampling, not std distributions).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace trainsim::planner {

// EC2 per-second billing, 60 s minimum per Linux instance session
// (reference/aws-instances-sources.json, _spot_and_billing.ec2_billing_granularity).
inline constexpr double kMinimumSession_s = 60;

struct JobShape {
  double download_s = 0;
  // The whole job's mean time between failure events; infinity = no failures.
  double mtbi_s = std::numeric_limits<double>::infinity();
  double restart_s = 0;
  int nodes = 1;
  int wave_nodes = 1;          // instances each failure takes, 1..nodes
  double capacity_chance = 1;  // q: a request for instances is filled; 1 = at once
  double retry_s = 0;          // between requests, when q < 1
  // From time 0 (the end of provisioning, before any start wait) to the
  // deadline; infinity = never fall back.
  double fallback_deadline_s = std::numeric_limits<double>::infinity();
  bool on_notice = false;
  double checkpoint_write_s = 0;  // delta: one write (in each segment's length)
  // periodic
  int64_t full_segments = 0;
  double full_segment_s = 0;
  double last_segment_s = 0;
  // on notice
  double progress_s = 0;
  double notice_write_s = 0;
};

// Expected seconds from time 0 to the end of the run, and expected failures.
// Closed forms with a constant restart of restart_s + the mean capacity wait:
// exact when q = 1, an approximation otherwise (a failure during a restart
// keeps the longer of two waits).
double ExpectedRun_s(const JobShape& shape);
double ExpectedInterruptions(const JobShape& shape);
// E[W] of one wait for capacity (SpotWaitMean_s, planner/job/spot_capacity.h).
double MeanCapacityWait_s(const JobShape& shape);

struct TrialOutcome {
  double start_wait_s = 0;                 // waiting for capacity before provisioning (not billed)
  double run_s = 0;                        // time 0 to the end of the final checkpoint
  int64_t interruptions = 0;               // failure events (a wave counts once)
  double session_billed_instance_s = 0;    // by the session rule above
  double fallback_at_s = -1;               // when it switched to on-demand; < 0: never
  double on_demand_billed_instance_s = 0;  // the on-demand fleet after the switch
};

class JobSimulator {
 public:
  JobSimulator(const JobShape& shape, uint64_t seed);
  TrialOutcome RunTrial();
  // The next trials run `shape` (same nodes; the generator goes on): a job whose work
  // differs from trial to trial (model error, planner/job/job.h).
  void SetShape(const JobShape& shape) { shape_ = shape; }

 private:
  double Uniform01();       // the generator's 53 high bits: [0, 1)
  double NextGap_s();       // exponential with mean mtbi_s: -M ln(1 - u)
  double CapacityWait_s();  // geometric retries: retry_s floor(ln(1 - u) / ln(1 - q))
  void RunPeriodic();
  void RunOnNotice();
  // A failure at now_s_, then the restart phase; returns the gap from its end
  // to the next failure.
  double Interrupt();
  // Switches to on-demand when the deadline calls for it, with remaining_s of
  // work and writes left and reserve_s the loss of one more stretch on spot;
  // true when it did (the run is then finished).
  bool FallBack(double remaining_s, double reserve_s);
  // Strikes a wave at now_s_; returns how long until its replacements are back
  // and the restart is done.
  double StrikeWave();
  void StrikeInstance(int i, double back_s);
  void CloseSessions(double end_s);  // the spot fleet's sessions end at end_s

  JobShape shape_;
  std::mt19937_64 rng_;
  double now_s_ = 0;
  double deadline_s_ = 0;  // this trial's fallback deadline in run time
  TrialOutcome out_;
  std::vector<double> session_start_s_;  // per instance; a future time = replacement pending
  std::vector<char> struck_;             // per instance: struck in this trial
  std::vector<int> touched_;             // the instances struck in this trial
  std::vector<int> order_;               // reclaim waves: a permutation of the instances
};

}  // namespace trainsim::planner
