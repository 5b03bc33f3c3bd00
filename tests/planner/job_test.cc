#include "planner/job/job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "planner/job/interruptions.h"
#include "planner/job/spot_capacity.h"

namespace trainsim::planner {
namespace {

JobInputs OnDemand() {
  JobInputs in;
  in.work_s = 36000;
  in.nodes = 4;
  in.price_usd_hr = 32.77;
  in.provisioning_s = 600;
  in.download_s = 300;
  in.checkpoint_write_s = 120;
  in.restart_s = 900;
  in.trials = 100;
  return in;
}

// Spot on 8 instances, 0.05 interruptions per instance-hour: M = 9000 s.
JobInputs Spot() {
  JobInputs in = OnDemand();
  in.pricing = Pricing::kSpot;
  in.nodes = 8;
  in.price_usd_hr = 9.83;
  in.work_s = 360000;
  in.checkpoint_write_s = 300;
  in.interruptions_per_instance_hour = 0.05;
  in.trials = 2000;
  return in;
}

JobEstimate Estimate(const JobInputs& in) {
  Expected<JobEstimate> e = EstimateJob(in);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? *e : JobEstimate();
}

TEST(EstimateJob, OnDemandIsExact) {
  const JobEstimate e = Estimate(OnDemand());
  const double wall_s = 600 + 300 + 36000 + 120;  // provisioning, download, work, final write
  EXPECT_DOUBLE_EQ(e.expected_wall_s, wall_s);
  EXPECT_EQ(e.interval_source, IntervalSource::kNone);
  EXPECT_EQ(e.checkpoints, 1);
  EXPECT_EQ(e.expected_interruptions, 0);
  EXPECT_EQ(e.mean_interruptions, 0);
  EXPECT_EQ(e.trials_run, 100);
  for (double v : {e.wall_s.mean, e.wall_s.p50, e.wall_s.p90, e.wall_s.p99}) {
    EXPECT_DOUBLE_EQ(v, wall_s);
  }
  EXPECT_EQ(e.wall_s.stddev, 0);
  const double billed_s = 4 * (300 + 36000 + 120);  // provisioning is not billed
  EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, billed_s);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, 32.77 / 3600 * billed_s);
  EXPECT_DOUBLE_EQ(e.cost_usd->p90, 32.77 / 3600 * billed_s);
  EXPECT_FALSE(e.max_wait_s.has_value());
}

// Model error: each trial's work is work_s times a factor drawn from the list. On demand,
// where nothing else varies, the trials' wall times are exactly the factors' jobs: P50 and P90
// of factors 0.5, 1, 1.5 drawn uniformly are the 1 and 1.5 jobs; the closed form and the
// means stay the prediction's; the cost follows the billed time.
TEST(EstimateJob, ModelErrorSpreadsTheWallTimeByTheWorkFactors) {
  JobInputs in = OnDemand();
  in.trials = 3000;
  in.work_factors = {0.5, 1.0, 1.5};
  const JobEstimate e = Estimate(in);
  auto wall = [](double f) { return 600 + 300 + 36000 * f + 120; };
  EXPECT_DOUBLE_EQ(e.expected_wall_s, wall(1));
  EXPECT_DOUBLE_EQ(e.wall_s.p50, wall(1));
  EXPECT_DOUBLE_EQ(e.wall_s.p90, wall(1.5));
  EXPECT_DOUBLE_EQ(e.wall_s.mean, wall(1));  // the mean is the prediction's
  EXPECT_GT(e.wall_s.stddev, 0.3 * 36000);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, 32.77 / 3600 * 4 * (300 + 36000 + 120));
  EXPECT_DOUBLE_EQ(e.cost_usd->p90, 32.77 / 3600 * 4 * (300 + 36000 * 1.5 + 120));
  // The same inputs, the same numbers.
  EXPECT_EQ(Estimate(in).wall_s.stddev, e.wall_s.stddev);
  in.work_factors = {1.0, -2.0};
  EXPECT_EQ(EstimateJob(in).status().message(),
            "work_factors[1]: expected a finite number > 0, got -2");
}

TEST(EstimateJob, IntervalOverrideWithoutInterruptions) {
  const struct {
    double work_s, interval_s;
    int64_t checkpoints;
  } kCases[] = {{10000, 3000, 4}, {9000, 3000, 3}, {100, 3000, 1}, {0.3, 0.1, 3}};
  for (const auto& c : kCases) {
    JobInputs in = OnDemand();
    in.work_s = c.work_s;
    in.checkpoint_interval_s = c.interval_s;
    const JobEstimate e = Estimate(in);
    EXPECT_EQ(e.interval_source, IntervalSource::kOverride);
    EXPECT_EQ(e.checkpoints, c.checkpoints) << c.work_s;
    EXPECT_NEAR(e.expected_wall_s, 900 + c.work_s + c.checkpoints * 120, 1e-9) << c.work_s;
  }
}

TEST(EstimateJob, SixtySecondMinimumPerSession) {
  JobInputs in = OnDemand();
  in.work_s = 10;
  in.download_s = 0;
  in.checkpoint_write_s = 0;
  in.nodes = 3;
  in.price_usd_hr = 3.6;
  for (Pricing p : {Pricing::kOnDemand, Pricing::kSagemaker}) {
    in.pricing = p;
    const JobEstimate e = Estimate(in);
    EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, 3 * 60);
    EXPECT_DOUBLE_EQ(e.cost_usd->mean, 0.18);
  }
}

TEST(EstimateJob, SixtySecondMinimumForReplacementSessions) {
  // One instance interrupted every 30 s on average, no restart time: without
  // the minimum the billed seconds would be the run time exactly.
  JobInputs in = Spot();
  in.nodes = 1;
  in.work_s = 600;
  in.download_s = 0;
  in.restart_s = 0;
  in.checkpoint_write_s = 1;
  in.interruptions_per_instance_hour = 120;
  const JobEstimate e = Estimate(in);
  const double run_s = e.wall_s.mean - in.provisioning_s;
  EXPECT_GT(e.mean_interruptions, 10);
  EXPECT_GE(e.mean_billed_instance_s, 60 * (e.mean_interruptions + 1));
  EXPECT_GT(e.mean_billed_instance_s, 1.5 * run_s);
}

TEST(EstimateJob, SurvivorsAreBilledThroughRestarts) {
  // Long gaps between interruptions (no session under 60 s) and short
  // restarts (none struck): each interruption leaves one instance unbilled
  // for R, no more, no less.
  JobInputs in = Spot();
  in.restart_s = 60;
  in.trials = 1;
  const JobEstimate e = Estimate(in);
  const double run_s = e.wall_s.mean - in.provisioning_s;
  ASSERT_GT(e.mean_interruptions, 10);
  EXPECT_NEAR(e.mean_billed_instance_s, 8 * run_s - e.mean_interruptions * in.restart_s, 1e-6);
}

TEST(EstimateJob, ManagedSpotBillsAFractionOfTheRun) {
  JobInputs in = OnDemand();
  in.pricing = Pricing::kSagemakerSpot;
  in.spot_billed_fraction = 0.3;
  in.provisioning_s = 1800;
  in.download_s = 0;
  in.work_s = 35900;
  in.checkpoint_write_s = 100;
  const JobEstimate e = Estimate(in);
  EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, 4 * 36000 * 0.3);
  EXPECT_DOUBLE_EQ(*e.max_runtime_s, 36000);  // 10 h exactly
  EXPECT_DOUBLE_EQ(*e.max_wait_s, 39600);     // 10.5 h rounded up to 11 h

  in.interruptions_per_instance_hour = 0.05;  // per trial: billed = N x run x fraction
  in.trials = 500;
  const JobEstimate spot = Estimate(in);
  const double run_s = spot.wall_s.mean - in.provisioning_s;
  EXPECT_NEAR(spot.mean_billed_instance_s, 4 * run_s * 0.3, 1e-9 * run_s);
  EXPECT_GE(*spot.max_wait_s, spot.wall_s.p99);
  EXPECT_LT(*spot.max_wait_s, spot.wall_s.p99 + 3600);
  EXPECT_EQ(std::fmod(*spot.max_wait_s, 3600), 0);
}

TEST(EstimateJob, MissingPriceGivesNoCost) {
  JobInputs in = Spot();
  in.price_usd_hr.reset();
  in.trials = 50;
  const JobEstimate e = Estimate(in);
  EXPECT_FALSE(e.cost_usd.has_value());
  EXPECT_GT(e.wall_s.mean, 0);
  EXPECT_GT(e.mean_billed_instance_s, 0);
}

// The whole job's expectation, written out here from Daly's segment formula.
double ExpectedWall(const JobInputs& in, double interval_s) {
  const double m = 3600 / (in.interruptions_per_instance_hour * in.nodes);
  const double r = in.restart_s, d = in.checkpoint_write_s;
  const double n = std::ceil(in.work_s / interval_s);
  const double last_s = in.work_s - (n - 1) * interval_s;
  auto segment = [&](double len) { return m * std::exp(r / m) * (std::exp(len / m) - 1); };
  return in.provisioning_s + in.download_s + (n - 1) * segment(interval_s + d) +
         segment(last_s + d);
}

TEST(EstimateJob, SpotUsesDalyAndTheClosedForm) {
  const JobInputs in = Spot();
  const JobEstimate e = Estimate(in);
  EXPECT_EQ(e.mtbi_s, 9000);
  EXPECT_EQ(e.interval_source, IntervalSource::kDaly);
  EXPECT_NEAR(e.checkpoint_interval_s, 2128.093322553569, 1e-9);
  EXPECT_EQ(e.checkpoints, 170);  // ceil(360000 / 2128.09)
  EXPECT_NEAR(e.expected_wall_s, ExpectedWall(in, e.checkpoint_interval_s),
              1e-9 * e.expected_wall_s);
  // Failures come at rate 1/M over the exposed time (all but provisioning and download).
  EXPECT_NEAR(e.expected_interruptions, (e.expected_wall_s - 900) / 9000, 1e-9);
}

// Table of jobs whose Monte-Carlo mean must converge to the closed form.
struct ConvergenceCase {
  const char* name;
  JobInputs in;
};

std::vector<ConvergenceCase> ConvergenceCases() {
  std::vector<ConvergenceCase> cases;
  cases.push_back({"spot, Daly", Spot()});
  JobInputs notice = Spot();
  notice.checkpoint_on_notice = true;
  notice.checkpoint_write_s = 60;
  cases.push_back({"spot, checkpoint on notice", notice});
  JobInputs harsh = Spot();  // one instance, M = 1000 s, restarts often struck
  harsh.nodes = 1;
  harsh.interruptions_per_instance_hour = 3.6;
  harsh.restart_s = 500;
  harsh.checkpoint_write_s = 50;
  harsh.work_s = 20000;
  cases.push_back({"one instance, long restarts", harsh});
  JobInputs fixed = harsh;  // an interval far from the optimum: long lost segments
  fixed.checkpoint_interval_s = 4000;
  cases.push_back({"interval override", fixed});
  JobInputs waves = Spot();  // 2 events of 4 instances instead of 8 of one: M = 36000 s
  waves.reclaim_wave_nodes = 4;
  cases.push_back({"reclaim waves of 4", waves});
  JobInputs waiting = Spot();  // a wait before the start, none in the restarts (q = 1 there)
  waiting.interruptions_per_instance_hour = 0;
  waiting.capacity_chance = 0.25;
  waiting.capacity_retry_s = 600;
  cases.push_back({"waiting for capacity", waiting});
  return cases;
}

TEST(EstimateJob, MonteCarloMeanConvergesToTheClosedForm) {
  for (ConvergenceCase c : ConvergenceCases()) {
    c.in.trials = 20000;
    const JobEstimate e = Estimate(c.in);
    const double standard_error = e.wall_s.stddev / std::sqrt(20000.0);
    EXPECT_GT(standard_error, 0) << c.name;
    EXPECT_LT(std::abs(e.wall_s.mean - e.expected_wall_s), 3 * standard_error) << c.name;
    EXPECT_NEAR(e.mean_interruptions, e.expected_interruptions, 0.03 * e.expected_interruptions)
        << c.name;
  }
}

// Waiting for capacity before the start, q = 1/2 per request every 600 s: E[W] = 600 s and
// the P90 wait 1800 s (planner/job/spot_capacity.h); the wait is not billed.
TEST(EstimateJob, TheStartWaitsForCapacityUnbilled) {
  JobInputs in = OnDemand();
  in.trials = 4000;
  const JobEstimate at_once = Estimate(in);
  in.capacity_chance = 0.5;
  in.capacity_retry_s = 600;
  const JobEstimate e = Estimate(in);
  EXPECT_DOUBLE_EQ(e.expected_start_wait_s, 600);
  EXPECT_DOUBLE_EQ(e.expected_wall_s, at_once.expected_wall_s + 600);
  EXPECT_DOUBLE_EQ(e.wall_s.p90, at_once.wall_s.p90 + SpotWaitQuantile_s(0.5, 600, 0.9));
  EXPECT_DOUBLE_EQ(SpotWaitQuantile_s(0.5, 600, 0.9), 1800);
  EXPECT_NEAR(e.wall_s.mean, e.expected_wall_s, 3 * e.wall_s.stddev / std::sqrt(4000.0));
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, at_once.cost_usd->mean);
  EXPECT_EQ(e.cost_usd->stddev, 0);
}

// Reclaim waves keep each instance's rate: a wave of 4 on 8 nodes makes a quarter of the
// events, each taking 4 instances (their sessions all end).
TEST(EstimateJob, ReclaimWavesAreFewerLargerEvents) {
  JobInputs in = Spot();
  in.reclaim_wave_nodes = 4;
  const JobEstimate e = Estimate(in);
  EXPECT_EQ(e.mtbi_s, 36000);
  // Each event ends 4 distinct sessions, whose replacements start R later: billed about
  // nodes x run - 4 x events x R (restarts struck again, rare at M = 36000 s, aside).
  const double billed = 8 * (e.wall_s.mean - 600) - 4 * e.mean_interruptions * in.restart_s;
  EXPECT_NEAR(e.mean_billed_instance_s, billed, 0.005 * billed);
  in.reclaim_wave_nodes = 100;  // capped at the nodes: every event takes them all
  EXPECT_EQ(Estimate(in).mtbi_s, 72000);
  in.reclaim_wave_nodes = 0;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "reclaim_wave_nodes: expected an integer in [1, 1000000], got 0");
}

// Replacements wait for capacity too. The closed form takes the restart as R + E[W]; the
// simulation keeps the longer of two pending waits when a failure strikes a restart, so the
// two agree only where restarts are rarely struck (here (R + E[W]) / M = 1/6).
TEST(EstimateJob, ReplacementsWaitForCapacity) {
  JobInputs in = Spot();
  in.trials = 20000;
  in.capacity_chance = 0.5;
  in.capacity_retry_s = 300;
  const JobEstimate e = Estimate(in);
  JobInputs constant = Spot();  // the same mean restart, without the wait's spread
  constant.restart_s += 300;
  const JobEstimate c = Estimate(constant);
  EXPECT_NEAR(e.expected_wall_s, c.expected_wall_s + 300, 1e-6 * e.expected_wall_s);
  EXPECT_NEAR(e.expected_interruptions, c.expected_interruptions, 1e-9);
  EXPECT_NEAR(e.wall_s.mean, e.expected_wall_s, 0.01 * e.expected_wall_s);
  EXPECT_GT(e.wall_s.p90, c.wall_s.p90);  // the waits' spread
  JobInputs bad = Spot();
  bad.capacity_chance = 0.5;
  EXPECT_EQ(EstimateJob(bad).status().message(),
            "capacity_retry_s: expected a finite number > 0, got 0");
  bad.capacity_chance = 0;
  EXPECT_EQ(EstimateJob(bad).status().message(),
            "capacity_chance: expected a chance in (0, 1], got 0");
}

// Spot that falls back to on-demand: Spot() is expected to take 117.6 h (M = 9000 s);
// on demand it would take 900 s + 100 h + the final write.
JobInputs Fallback(double deadline_h) {
  JobInputs in = Spot();
  in.pricing = Pricing::kSpotFallback;
  in.fallback_deadline_s = deadline_h * 3600;
  in.fallback_usd_hr = 32.77;
  return in;
}

// With a deadline far away the policy never switches: the same draws, the same figures as spot.
TEST(EstimateJob, AFarDeadlineNeverFallsBack) {
  const JobEstimate spot = Estimate(Spot());
  const JobEstimate e = Estimate(Fallback(1e6));
  EXPECT_EQ(e.fallback_share, 0.0);
  EXPECT_FALSE(e.mean_fallback_at_s.has_value());
  EXPECT_EQ(e.wall_s.p90, spot.wall_s.p90);
  EXPECT_EQ(e.cost_usd->p90, spot.cost_usd->p90);
  EXPECT_EQ(e.expected_wall_s, spot.wall_s.mean);  // no closed form: the mean
}

// A deadline of 140 h: on demand takes 100.6 h, so the slack is about 38 h, less a segment
// and a restart kept in reserve; on spot each of the 170 segments spends a 300 s write and
// each of the ~47 failures about 35 min. Most runs, not all, switch; the cost lies between
// spot's and on-demand's. The deadline holds unless failures strike a restart again and again
// (the reserve covers one): checked at P90.
TEST(EstimateJob, ATightDeadlineFallsBackAndIsMet) {
  const double deadline_h = 140;
  const JobEstimate e = Estimate(Fallback(deadline_h));
  ASSERT_TRUE(e.fallback_share.has_value());
  EXPECT_GT(*e.fallback_share, 0.2);
  EXPECT_LT(*e.fallback_share, 1.0);
  ASSERT_TRUE(e.mean_fallback_at_s.has_value());
  EXPECT_LT(*e.mean_fallback_at_s, deadline_h * 3600);
  EXPECT_LE(e.wall_s.p90, deadline_h * 3600);
  JobInputs od = OnDemand();
  od.nodes = 8;
  od.work_s = 360000;
  od.checkpoint_write_s = 300;
  const JobEstimate on_demand = Estimate(od);
  const JobEstimate spot = Estimate(Spot());
  EXPECT_GT(e.cost_usd->mean, spot.cost_usd->mean);
  EXPECT_LT(e.cost_usd->mean, on_demand.cost_usd->mean);
  // A deadline no run can meet on spot: all of them run on demand from the start (after the
  // download on spot), one restart late.
  const JobEstimate hopeless = Estimate(Fallback(100));
  EXPECT_EQ(hopeless.fallback_share, 1.0);
  EXPECT_DOUBLE_EQ(hopeless.wall_s.p50, 600 + 300 + 900 + 360000 + 300);
  JobInputs no_deadline = Fallback(100);
  no_deadline.fallback_deadline_s.reset();
  EXPECT_EQ(EstimateJob(no_deadline).status().message(),
            "fallback_deadline_s: spot-fallback pricing (and only it) needs a deadline and an "
            "on-demand price");
}

// SageMaker runs at most 28 days per job: 60 days of work go as 3 jobs, each later one
// provisioning again (600 s, not billed) and reloading the checkpoint (120 s, billed). A warm
// pool's cluster runs consecutive jobs for 7 days at most, so after a 28-day job nothing is
// left to reuse: the pool only bills its keep-alive. With jobs of 2 days (a shorter MaxRuntime),
// the later jobs starting at 2, 4 and 6 days reuse it; the one at 8 days provisions again.
TEST(EstimateJob, ALongSagemakerJobIsAChainOfJobs) {
  JobInputs in = OnDemand();  // 4 nodes, 600 s provisioning, 300 s download, 120 s write
  in.pricing = Pricing::kSagemaker;
  in.work_s = 60 * 86400.0;
  in.max_job_s = kSagemakerMaxRuntime_s;
  const double run_s = 300 + 60 * 86400.0 + 120;
  JobEstimate e = Estimate(in);
  EXPECT_EQ(e.jobs, 3);
  EXPECT_DOUBLE_EQ(e.expected_wall_s, 600 + run_s + 2 * (600 + 120));
  EXPECT_DOUBLE_EQ(e.wall_s.p90, e.expected_wall_s);
  EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, 4 * (run_s + 2 * 120));
  in.warm_pool_keep_alive_s = 1800;
  e = Estimate(in);
  EXPECT_DOUBLE_EQ(e.expected_wall_s, 600 + run_s + 2 * (600 + 120));
  EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, 4 * (run_s + 2 * 120 + 1800));
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, 32.77 / 3600 * 4 * (run_s + 2 * 120 + 1800));
  in.max_job_s = 2 * 86400.0;
  in.work_s = 9 * 86400.0;
  const double short_run_s = 300 + 9 * 86400.0 + 120;
  const JobChain chain = ChainOf(in, short_run_s);
  EXPECT_EQ(chain.jobs, 5);
  EXPECT_EQ(chain.warm_starts, 3);
  EXPECT_DOUBLE_EQ(chain.provisioning_s, 600);
  EXPECT_DOUBLE_EQ(chain.reload_s, 4 * 120);
  EXPECT_DOUBLE_EQ(Estimate(in).expected_wall_s, 600 + short_run_s + 600 + 4 * 120);
  in.checkpoint_read_s = 45;  // reads from a storage faster than it writes
  EXPECT_DOUBLE_EQ(ChainOf(in, short_run_s).reload_s, 4 * 45);
  in.checkpoint_read_s.reset();
  in.warm_pool_keep_alive_s = 3601;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "warm_pool_keep_alive_s: expected 0 to 3600 s (SageMaker's limit), got 3601");
  in.warm_pool_keep_alive_s = 600;
  in.pricing = Pricing::kSagemakerSpot;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "warm_pool_keep_alive_s: a warm pool is SageMaker's, on demand only (not with spot); "
            "got sagemaker-spot pricing");
}

TEST(EstimateJob, MonteCarloErrorShrinksWithTrials) {
  auto mean_error = [](int trials) {
    double sum = 0;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      JobInputs in = Spot();
      in.trials = trials;
      in.seed = seed;
      const JobEstimate e = Estimate(in);
      sum += std::abs(e.wall_s.mean - e.expected_wall_s);
    }
    return sum / 10;
  };
  // The error goes as 1/sqrt(trials): a hundred times the trials, a tenth the error.
  EXPECT_LT(mean_error(20000), mean_error(200) / 3);
}

TEST(EstimateJob, SameSeedSameBytesOtherSeedOtherNumbers) {
  const JobEstimate a = Estimate(Spot()), b = Estimate(Spot());
  EXPECT_EQ(std::memcmp(&a.wall_s, &b.wall_s, sizeof(Spread)), 0);
  EXPECT_EQ(std::memcmp(&*a.cost_usd, &*b.cost_usd, sizeof(Spread)), 0);
  EXPECT_EQ(a.mean_interruptions, b.mean_interruptions);
  JobInputs other = Spot();
  other.seed = 2;
  const JobEstimate c = Estimate(other);
  EXPECT_NE(a.wall_s.mean, c.wall_s.mean);
  EXPECT_NE(a.cost_usd->p90, c.cost_usd->p90);
  EXPECT_EQ(a.expected_wall_s, c.expected_wall_s);  // the closed form has no seed
}

TEST(EstimateJob, PercentilesAreNearestRank) {
  // Two trials: P50 is the smaller (rank ceil(0.5 x 2) = 1), P90 and P99 the
  // larger; an interpolating percentile would put P50 at the mean.
  JobInputs in = Spot();
  in.trials = 2;
  const JobEstimate e = Estimate(in);
  EXPECT_LT(e.wall_s.p50, e.wall_s.p90);
  EXPECT_EQ(e.wall_s.p90, e.wall_s.p99);
  EXPECT_DOUBLE_EQ(e.wall_s.p50 + e.wall_s.p90, 2 * e.wall_s.mean);
  EXPECT_DOUBLE_EQ(e.wall_s.stddev, (e.wall_s.p90 - e.wall_s.p50) / std::sqrt(2.0));
  EXPECT_LT(e.cost_usd->p50, e.cost_usd->p90);
}

TEST(EstimateJob, ThousandInterruptionsPerTrialIsFast) {
  JobInputs in = Spot();
  in.interruptions_per_instance_hour = 1.25;  // M = 360 s
  in.restart_s = 30;
  in.checkpoint_write_s = 10;  // about 1400 interruptions per trial
  const auto start = std::chrono::steady_clock::now();
  const JobEstimate e = Estimate(in);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(e.expected_interruptions, 1000);
  EXPECT_LT(e.expected_interruptions, 2000);
  EXPECT_EQ(e.trials_run, 2000);
  EXPECT_LT(ms, 1000);  // about 50 ms in Release; generous for shared or Debug machines
  RecordProperty("ms", std::to_string(ms));
}

TEST(EstimateJob, HugeInterruptionCountsFallBackInsteadOfHanging) {
  JobInputs in = Spot();
  in.nodes = 1;
  in.work_s = 1e7;
  in.restart_s = 0;
  in.checkpoint_write_s = 0.01;
  in.interruptions_per_instance_hour = 3600;  // M = 1 s
  const JobEstimate e = Estimate(in);
  EXPECT_GT(e.expected_interruptions, 1e6);
  EXPECT_TRUE(e.monte_carlo_skipped);
  EXPECT_EQ(e.trials_run, 0);
  EXPECT_EQ(e.wall_s.mean, e.expected_wall_s);
  EXPECT_EQ(e.wall_s.p90, e.expected_wall_s);

  in.work_s = 5e4;  // about 5e4 interruptions: fewer trials, still simulated
  const JobEstimate fewer = Estimate(in);
  EXPECT_FALSE(fewer.monte_carlo_skipped);
  EXPECT_GE(fewer.trials_run, 100);
  EXPECT_LT(fewer.trials_run, in.trials);
}

constexpr double kHour = 3600, kDay = 24 * kHour;

// 8 nodes in a Capacity Block at $40/h: 10 days of work after 1 h of provisioning.
JobInputs InABlock() {
  JobInputs in;
  in.pricing = Pricing::kCapacityBlock;
  in.work_s = 10 * kDay;
  in.nodes = 8;
  in.price_usd_hr = 40;
  in.provisioning_s = kHour;
  in.trials = 1000;
  in.blocks.emplace();
  in.blocks->nodes = 8;
  return in;
}

// The blocks are booked for the prediction: one block of ceil(10 d + 1 h + the 0.5 h end
// margin) = 11 days, paid whole; the job is never interrupted.
TEST(EstimateJob, ABlockIsBookedForThePredictionAndPaidWhole) {
  const JobEstimate e = Estimate(InABlock());
  ASSERT_TRUE(e.blocks.has_value());
  EXPECT_EQ(e.blocks->block_days, std::vector<int>{11});
  EXPECT_DOUBLE_EQ(e.expected_wall_s, 10 * kDay + kHour);
  EXPECT_DOUBLE_EQ(e.wall_s.p90, 10 * kDay + kHour);
  EXPECT_DOUBLE_EQ(e.mean_billed_instance_s, 8 * 11 * kDay);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, 40 * 8 * 11 * 24.0);
  EXPECT_EQ(e.cost_usd->stddev, 0);
  EXPECT_EQ(e.mean_interruptions, 0);
}

// With the model's error the booking stays the prediction's 11 days. A run at half the
// work ends early and pays the same; one at 1.5x trains 11 d - 1 h - 0.5 h in the block,
// then continues, back to back, in a block bought for the 4 d 1.5 h left (+ margin): 5 days.
TEST(EstimateJob, ARunThatOutlastsItsBlockBuysAnotherOne) {
  JobInputs in = InABlock();
  in.work_factors = {0.5, 1.5};
  const JobEstimate e = Estimate(in);
  EXPECT_DOUBLE_EQ(e.expected_wall_s, 10 * kDay + kHour);
  EXPECT_DOUBLE_EQ(e.wall_s.p10, 5 * kDay + kHour);
  EXPECT_DOUBLE_EQ(e.wall_s.p90, 11 * kDay + 4 * kDay + 1.5 * kHour);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_DOUBLE_EQ(e.cost_usd->p10, 40 * 8 * 11 * 24.0);
  EXPECT_DOUBLE_EQ(e.cost_usd->p90, 40 * 8 * 16 * 24.0);
  EXPECT_DOUBLE_EQ(e.cost_usd->mean, 40 * 8 * 11 * 24.0);  // the prediction's
}

// A Savings Plan bills EC2 sessions at the committed rate; hours past the commitment cost
// the on-demand price.
TEST(EstimateJob, ACommitmentBillsItsRateAndOnDemandPastIt) {
  JobInputs in = OnDemand();  // 4 nodes, billed 4 x 36420 s = 40.4667 h
  in.pricing = Pricing::kSavingsPlan1y;
  in.price_usd_hr = 20;
  in.committed_instance_hours = 4 * 8760;
  in.beyond_usd_hr = 32.77;
  const double billed_h = 4 * (300 + 36000 + 120) / kHour;
  EXPECT_DOUBLE_EQ(Estimate(in).cost_usd->mean, 20 * billed_h);
  in.committed_instance_hours = 30;
  EXPECT_DOUBLE_EQ(Estimate(in).cost_usd->mean, 20 * 30 + 32.77 * (billed_h - 30));
  in.beyond_usd_hr.reset();
  EXPECT_EQ(EstimateJob(in).status().message(),
            "beyond_usd_hr: missing: the price of hours past the commitment");
}

TEST(EstimateJob, BlocksGoWithTheirPricingAndAreNotInterrupted) {
  JobInputs in = InABlock();
  in.pricing = Pricing::kOnDemand;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "blocks: given with on-demand pricing; capacity-block and training-plan (only) run "
            "in blocks");
  in = InABlock();
  in.blocks.reset();
  EXPECT_EQ(EstimateJob(in).status().message(),
            "blocks: missing for capacity-block pricing; capacity-block and training-plan (only) "
            "run in blocks");
  in = InABlock();
  in.interruptions_per_instance_hour = 0.01;
  in.checkpoint_write_s = 60;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "interruptions_per_instance_hour: expected 0 with reserved blocks (they are not "
            "interrupted), got 0.01");
  in = InABlock();
  in.nodes = 300;
  in.blocks->nodes = 300;
  EXPECT_EQ(EstimateJob(in).status().message(),
            "capacity block: nodes: expected 1 to 256 (the most instances held at once), got 300");
}

TEST(EstimateJob, InvalidInputsNameTheField) {
  const struct {
    void (*edit)(JobInputs*);
    const char* message;
  } kCases[] = {
      {[](JobInputs* in) { in->work_s = 0; }, "work_s: expected a finite number > 0, got 0"},
      {[](JobInputs* in) { in->work_s = std::numeric_limits<double>::infinity(); },
       "work_s: expected a finite number > 0, got inf"},
      {[](JobInputs* in) { in->nodes = 0; }, "nodes: expected an integer in [1, 1000000], got 0"},
      {[](JobInputs* in) { in->price_usd_hr = -1; },
       "price_usd_hr: expected a finite number >= 0, got -1"},
      {[](JobInputs* in) { in->provisioning_s = -5; },
       "provisioning_s: expected a finite number >= 0, got -5"},
      {[](JobInputs* in) { in->download_s = -1.5; },
       "download_s: expected a finite number >= 0, got -1.5"},
      {[](JobInputs* in) { in->checkpoint_write_s = -1; },
       "checkpoint_write_s: expected a finite number >= 0, got -1"},
      {[](JobInputs* in) { in->restart_s = -1; },
       "restart_s: expected a finite number >= 0, got -1"},
      {[](JobInputs* in) { in->interruptions_per_instance_hour = -0.1; },
       "interruptions_per_instance_hour: expected a finite number >= 0, got -0.1"},
      {[](JobInputs* in) { in->checkpoint_interval_s = 0; },
       "checkpoint_interval_s: expected a finite number > 0, got 0"},
      {[](JobInputs* in) { in->spot_billed_fraction = 0; },
       "spot_billed_fraction: expected a number in (0, 1], got 0"},
      {[](JobInputs* in) { in->trials = 0; }, "trials: expected an integer in [1, 1000000], got 0"},
      {[](JobInputs* in) { in->checkpoint_on_notice = true; },
       "checkpoint_on_notice: on-demand pricing gives no interruption notice; only the spot "
       "options do"},
      {[](JobInputs* in) {
         in->pricing = Pricing::kSpot;
         in->checkpoint_on_notice = true;
         in->checkpoint_write_s = 300;
       },
       "checkpoint_write_s: 300 s does not fit in the 120 s spot interruption notice "
       "(checkpoint_on_notice)"},
      {[](JobInputs* in) {
         in->interruptions_per_instance_hour = 0.1;
         in->checkpoint_write_s = 0;
       },
       "checkpoint_write_s: 0 with interruptions gives a Young/Daly interval of 0; give the "
       "write time or checkpoint_interval_s"},
      {[](JobInputs* in) { in->checkpoint_interval_s = 1e-9; },
       "checkpoint_interval_s: 1e-09 s splits work_s = 36000 s into more than 1000000000000 "
       "checkpoints"},
      {[](JobInputs* in) {
         in->interruptions_per_instance_hour = 3600;
         in->nodes = 1;
         in->restart_s = 1000;
       },
       "interruptions_per_instance_hour: 3600 x nodes = 1 means an interruption every 1 s on "
       "average: the expected wall time overflows (the job would never finish)"},
  };
  for (const auto& c : kCases) {
    JobInputs in = OnDemand();
    c.edit(&in);
    const Expected<JobEstimate> e = EstimateJob(in);
    ASSERT_FALSE(e.ok()) << c.message;
    EXPECT_EQ(e.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(e.status().message(), c.message);
  }
}

}  // namespace
}  // namespace trainsim::planner
