#include "planner/job/job_elastic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "planner/job/job.h"
#include "planner/job/spot_capacity.h"

namespace trainsim::planner {
namespace {

struct Mean {
  double mean = 0;
  double se = 0;  // standard error of the mean
};

Mean MeanOf(const std::vector<double>& v) {
  double sum = 0, squares = 0;
  for (double x : v) sum += x;
  const double n = static_cast<double>(v.size());
  const double mean = sum / n;
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / (n - 1) / n)};
}

struct Runs {
  Mean run_s, billed_s, live;
  double total_losses = 0;
};

Runs Draw(const ElasticShape& shape, int trials, uint64_t seed = 7) {
  ElasticSimulator sim(shape, seed);
  std::vector<double> run, billed, live;
  Runs out;
  for (int i = 0; i < trials; ++i) {
    const ElasticOutcome o = sim.RunTrial();
    run.push_back(o.trial.run_s);
    billed.push_back(o.trial.session_billed_instance_s);
    live.push_back(o.live_share);
    out.total_losses += static_cast<double>(o.total_losses) / trials;
  }
  out.run_s = MeanOf(run);
  out.billed_s = MeanOf(billed);
  out.live = MeanOf(live);
  return out;
}

// 8 nodes, each its own group; a node fails every 1e5 s and is back 3600 s later:
// f = 0.036 / 1.036, the down share.
ElasticShape Independent() {
  ElasticShape s;
  s.work_s = 1e7;
  s.interval_s = 1e7;
  s.node_rate_per_s = 1e-5;
  s.restart_s = 3600;
  s.nodes = 8;
  s.groups = 8;
  return s;
}

double DownShare(const ElasticShape& s) {
  const double x = s.node_rate_per_s * (SpotWaitMean_s(s.capacity_chance, s.retry_s) + s.restart_s);
  return x / (1 + x);
}

TEST(ElasticJob, WithoutFailuresRunsTheWorkAndItsWrites) {
  ElasticShape s;
  s.download_s = 50;
  s.work_s = 1000;
  s.interval_s = 300;  // writes at 300, 600, 900 and the final one at 1000
  s.checkpoint_write_s = 10;
  s.nodes = 4;
  s.groups = 2;
  ElasticSimulator sim(s, 1);
  const ElasticOutcome o = sim.RunTrial();
  EXPECT_DOUBLE_EQ(o.trial.run_s, 50 + 1000 + 4 * 10);
  EXPECT_DOUBLE_EQ(o.trial.session_billed_instance_s, 4 * 1090.0);
  EXPECT_EQ(o.trial.interruptions, 0);
  EXPECT_EQ(o.total_losses, 0);
  EXPECT_DOUBLE_EQ(o.live_share, 1);
  EXPECT_DOUBLE_EQ(ExpectedElasticRun_s(s), 1090);
  EXPECT_DOUBLE_EQ(TotalLossRate_per_s(s), 0);
}

// Every failure takes every replica: each segment (work + its write) starts over after
// M + R on average, as a single spot instance whose restarts are never struck:
// E = (M + R)(e^{L/M} - 1) per segment (failures strike only up nodes).
double AllOrNothing_s(double segment_s, double restart_s, double mtbi_s) {
  return (mtbi_s + restart_s) * std::expm1(segment_s / mtbi_s);
}

TEST(ElasticJob, OneGroupLosesEverythingAndGoesBackToTheCheckpoint) {
  ElasticShape s;
  s.work_s = 20000;
  s.interval_s = 2000;
  s.checkpoint_write_s = 50;
  s.node_rate_per_s = 1 / 5000.0;
  s.restart_s = 300;
  s.loss_pause_s = 100;  // never paid: no replica is left to pause
  s.join_pause_s = 100;  // never paid: the first group back restarts from the checkpoint
  s.nodes = 2;
  s.groups = 2;
  s.wave_nodes = 2;  // a wave takes both groups: all or nothing, at rate 2 lambda / 2
  const Runs r = Draw(s, 20000);
  const double expected = 10 * AllOrNothing_s(2050, 300, 5000);
  EXPECT_NEAR(r.run_s.mean, expected, 3 * r.run_s.se) << "expected " << expected;
  EXPECT_GT(r.total_losses, 4);
}

// In the steady state each node is down a share f of the time: the job moves at 1 - f
// and is billed for the up nodes. Exact in the long-run limit (the job starts with every
// node up: a deficit of about f D per node against 1e7 s of work).
TEST(ElasticJob, IndependentNodesMoveAtTheLiveShare) {
  const ElasticShape s = Independent();
  const double f = DownShare(s);
  const Runs r = Draw(s, 300);
  const double expected = s.work_s / (1 - f);
  EXPECT_NEAR(r.run_s.mean, expected, 3 * r.run_s.se + 1e-4 * expected);
  EXPECT_NEAR(ExpectedElasticRun_s(s), expected, 1e-6 * expected);
  EXPECT_NEAR(r.live.mean, 1 - f, 3 * r.live.se + 1e-4);
  EXPECT_NEAR(r.billed_s.mean, s.nodes * (1 - f) * r.run_s.mean, 1e-3 * r.billed_s.mean);
  EXPECT_EQ(r.total_losses, 0);  // f^8 ~ 1e-12 of the time
}

TEST(ElasticJob, AGroupOfTwoNodesIsLiveWhenBothAreUp) {
  ElasticShape s = Independent();
  s.groups = 4;  // nodes 0-1, 2-3, ...
  // A group is down 7% of the time: all four about 2.4e-5 of it, which over 1e7 s loses
  // every replica about once in four runs; free checkpoints every 1e4 s keep that small.
  s.interval_s = 1e4;
  const double f = DownShare(s);
  EXPECT_NEAR(LiveShare(s), (1 - f) * (1 - f), 1e-12);
  const double expected = ExpectedElasticRun_s(s);
  EXPECT_NEAR(expected, s.work_s / ((1 - f) * (1 - f)), 5e-4 * expected);
  const Runs r = Draw(s, 300);
  EXPECT_NEAR(r.run_s.mean, expected, 3 * r.run_s.se + 1e-4 * expected);
  EXPECT_GT(r.total_losses, 0.05);
  EXPECT_NEAR(r.total_losses, TotalLossRate_per_s(s) * expected, 0.1);
}

// Waiting for capacity lengthens each down time by E[W]: the steady state takes its mean.
TEST(ElasticJob, CapacityWaitsLengthenTheDownTime) {
  ElasticShape s = Independent();
  s.capacity_chance = 0.5;
  s.retry_s = 1800;  // E[W] = 1800 s
  const double f = DownShare(s);
  EXPECT_NEAR(f, 0.054 / 1.054, 1e-12);
  const Runs r = Draw(s, 300);
  const double expected = s.work_s / (1 - f);
  EXPECT_NEAR(r.run_s.mean, expected, 3 * r.run_s.se + 1e-4 * expected);
}

// Pauses at each change: the closed form's product (1 - f)(1 - pause share) is an
// approximation (pauses after a loss come when a node is down), so the check is 0.5%.
TEST(ElasticJob, PausesStallEveryReplica) {
  ElasticShape s = Independent();
  s.loss_pause_s = 60;
  s.join_pause_s = 120;
  const double f = DownShare(s);
  const double paused = s.nodes * s.node_rate_per_s * (1 - f) * 180;
  const Runs r = Draw(s, 300);
  EXPECT_NEAR(ExpectedElasticRun_s(s), s.work_s / ((1 - f) * (1 - paused)), 1);
  EXPECT_NEAR(r.run_s.mean, ExpectedElasticRun_s(s), 5e-3 * r.run_s.mean);
  const Runs still = Draw(Independent(), 300);
  EXPECT_GT(r.run_s.mean, still.run_s.mean * (1 + paused / 2));
}

TEST(ElasticJob, SameSeedSameTrials) {
  ElasticShape s = Independent();
  s.work_s = 1e6;
  s.interval_s = 1e5;
  s.checkpoint_write_s = 30;
  s.wave_nodes = 3;
  s.capacity_chance = 0.3;
  s.retry_s = 600;
  ElasticSimulator a(s, 11), b(s, 11);
  for (int i = 0; i < 20; ++i) {
    const ElasticOutcome x = a.RunTrial(), y = b.RunTrial();
    EXPECT_EQ(x.trial.run_s, y.trial.run_s);
    EXPECT_EQ(x.trial.session_billed_instance_s, y.trial.session_billed_instance_s);
    EXPECT_EQ(x.trial.start_wait_s, y.trial.start_wait_s);
    EXPECT_EQ(x.total_losses, y.total_losses);
  }
}

// EstimateJob with spot-elastic: the checks, the interval from the rate of losing every
// replica, and the means.
JobInputs Elastic() {
  JobInputs in;
  in.pricing = Pricing::kSpotElastic;
  in.work_s = 360000;
  in.nodes = 8;
  in.elastic_groups = 8;
  in.price_usd_hr = 9.83;
  in.provisioning_s = 600;
  in.checkpoint_write_s = 300;
  in.restart_s = 900;
  in.interruptions_per_instance_hour = 0.05;
  in.elastic_loss_pause_s = 20;
  in.elastic_join_pause_s = 40;
  in.trials = 500;
  return in;
}

TEST(ElasticJob, EstimateTakesTheMonteCarloMeans) {
  Expected<JobEstimate> e = EstimateJob(Elastic());
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(e->live_share.has_value());
  ASSERT_TRUE(e->total_losses.has_value());
  EXPECT_DOUBLE_EQ(e->expected_wall_s, e->wall_s.mean);
  EXPECT_GT(*e->live_share, 0.95);
  EXPECT_LT(*e->live_share, 1);
  // f = 0.0125 / 1.0125 per node: losing all 8 at once (f^7 of the time, times a failure)
  // comes about once in 1e12 hours, so the Daly interval outlasts the work: one final write.
  EXPECT_EQ(e->interval_source, IntervalSource::kNone);
  EXPECT_EQ(e->checkpoints, 1);
  // Faster than stopping the whole job for every reclaim.
  JobInputs spot = Elastic();
  spot.pricing = Pricing::kSpot;
  spot.elastic_groups = 0;
  Expected<JobEstimate> stop = EstimateJob(spot);
  ASSERT_TRUE(stop.ok());
  EXPECT_LT(e->wall_s.mean, stop->wall_s.mean);
  ASSERT_TRUE(e->cost_usd.has_value());
  EXPECT_NEAR(e->cost_usd->mean, 9.83 / 3600 * e->mean_billed_instance_s, 1e-6);
}

TEST(ElasticJob, BadInputsNameTheField) {
  JobInputs in = Elastic();
  in.elastic_groups = 3;
  Expected<JobEstimate> e = EstimateJob(in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("elastic_groups: expected 2 or more groups dividing the 8 "
                                      "nodes, got 3"),
            std::string::npos)
      << e.status().message();
  in = Elastic();
  in.elastic_groups = 0;
  e = EstimateJob(in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("elastic_groups"), std::string::npos);
  in = Elastic();
  in.pricing = Pricing::kSpot;
  e = EstimateJob(in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("expected 0 with spot pricing, got 8"), std::string::npos)
      << e.status().message();
  in = Elastic();
  in.checkpoint_on_notice = true;
  in.checkpoint_write_s = 60;
  e = EstimateJob(in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("checkpoint_on_notice"), std::string::npos);
  in = Elastic();
  in.elastic_join_pause_s = -1;
  e = EstimateJob(in);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("elastic_join_pause_s"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::planner
