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
// After a failure the job restarts for restart_s; a failure during a restart
// starts the restart over. Failures come at rate 1/mtbi_s at any time except
// during the download and the notice writes.
//
// Billing by sessions (EC2): each of `nodes` instances is billed from time 0;
// a failure strikes one instance drawn uniformly. A running instance's session
// ends there and its replacement's session starts restart_s later; a failure
// striking an instance whose replacement has not started yet (a reclaim during
// re-provisioning) pushes that start to restart_s after it. Each session is
// billed at least kMinimumSession_s.
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
  double mtbi_s = std::numeric_limits<double>::infinity();  // whole job; infinity = no failures
  double restart_s = 0;
  int nodes = 1;
  bool on_notice = false;
  // periodic
  int64_t full_segments = 0;
  double full_segment_s = 0;
  double last_segment_s = 0;
  // on notice
  double progress_s = 0;
  double notice_write_s = 0;
};

// Expected seconds from time 0 to the end of the run, and expected failures.
double ExpectedRun_s(const JobShape& shape);
double ExpectedInterruptions(const JobShape& shape);

struct TrialOutcome {
  double run_s = 0;  // time 0 to the end of the final checkpoint
  int64_t interruptions = 0;
  double session_billed_instance_s = 0;  // by the session rule above
};

class JobSimulator {
 public:
  JobSimulator(const JobShape& shape, uint64_t seed);
  TrialOutcome RunTrial();
  // The next trials run `shape` (same nodes; the generator goes on): a job whose work
  // differs from trial to trial (model error, planner/job.h).
  void SetShape(const JobShape& shape) { shape_ = shape; }

 private:
  double Uniform01();  // the generator's 53 high bits: [0, 1)
  double NextGap_s();  // exponential with mean mtbi_s: -M ln(1 - u)
  void RunPeriodic();
  void RunOnNotice();
  // A failure at now_s_, then the restart phase; returns the gap from its end
  // to the next failure.
  double Interrupt();
  void StrikeInstance();
  void CloseSessions();

  JobShape shape_;
  std::mt19937_64 rng_;
  double now_s_ = 0;
  TrialOutcome out_;
  std::vector<double> session_start_s_;  // per instance; a future time = replacement pending
  std::vector<char> struck_;             // per instance: struck in this trial
  std::vector<int> touched_;             // the instances struck in this trial
};

}  // namespace trainsim::planner
