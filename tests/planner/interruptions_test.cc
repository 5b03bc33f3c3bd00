#include "planner/job/interruptions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace trainsim::planner {
namespace {

TEST(MonthlyInterruptionFraction, Buckets) {
  const struct {
    const char* bucket;
    double fraction;
    bool lower_bound;
  } kCases[] = {
      {"<5%", 0.025, false},    {"5-10%", 0.075, false}, {"10-15%", 0.125, false},
      {"15-20%", 0.175, false}, {">20%", 0.20, true},
  };
  for (const auto& c : kCases) {
    bool lower_bound = !c.lower_bound;  // must be overwritten
    const std::optional<double> f = MonthlyInterruptionFraction(c.bucket, &lower_bound);
    ASSERT_TRUE(f.has_value()) << c.bucket;
    EXPECT_DOUBLE_EQ(*f, c.fraction) << c.bucket;
    EXPECT_EQ(lower_bound, c.lower_bound) << c.bucket;
  }
}

TEST(MonthlyInterruptionFraction, UnknownBucketsLeaveTheFlagAlone) {
  for (const char* bucket : {"", "20%", "< 5%", "5-10", ">20", "unknown"}) {
    bool lower_bound = true;
    EXPECT_FALSE(MonthlyInterruptionFraction(bucket, &lower_bound).has_value()) << bucket;
    EXPECT_TRUE(lower_bound) << bucket;
  }
  EXPECT_TRUE(MonthlyInterruptionFraction(">20%", nullptr).has_value());
}

TEST(InterruptionsPerHour, HandValuesAndDefinition) {
  // -ln(1 - f) / 730.5, computed with Python's math.log1p.
  const struct {
    double fraction, per_hour;
  } kCases[] = {
      {0.025, 3.465819025912372e-05},  {0.075, 1.067235338394413e-04},
      {0.125, 1.8279451420194747e-04}, {0.175, 2.633427688534648e-04},
      {0.20, 3.054668738045308e-04},   {0, 0},
  };
  for (const auto& c : kCases) {
    const double rate = InterruptionsPerHour(c.fraction);
    EXPECT_NEAR(rate, c.per_hour, 1e-15) << c.fraction;
    // P(at least one interruption in 730.5 h) is the fraction.
    EXPECT_NEAR(1 - std::exp(-rate * 730.5), c.fraction, 1e-14) << c.fraction;
  }
}

TEST(CheckpointInterval, YoungAndDalyHandValues) {
  // Hand-computed: sqrt(2 d M); Daly: sqrt(2 d M) (1 + sqrt(x)/3 + x/9) - d, x = d / 2M.
  const struct {
    double write_s, mtbi_s, young_s, daly_s;
  } kCases[] = {
      {60, 3600, 657.2670690061993, 617.8756496256495},
      {300, 9000, 2323.7900077244503, 2128.093322553569},
      {7200, 3600, 7200, 3600},  // delta = 2M: Daly's tau = M
      {10000, 3600, std::sqrt(2.0 * 10000 * 3600), 3600},
  };
  for (const auto& c : kCases) {
    EXPECT_NEAR(YoungInterval_s(c.write_s, c.mtbi_s), c.young_s, 1e-9) << c.write_s;
    EXPECT_NEAR(DalyInterval_s(c.write_s, c.mtbi_s), c.daly_s, 1e-9) << c.write_s;
  }
}

// Simpson's rule, independent of the closed forms' algebra.
double Integrate(const std::function<double(double)>& f, double a, double b) {
  const int n = 20000;  // even
  const double h = (b - a) / n;
  double sum = f(a) + f(b);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4 : 2) * f(a + i * h);
  return sum * h / 3;
}

struct FirstStep {
  double time_s, failures;
};

// One stretch of length len under failures at rate 1/M that each start it
// over after `restart_phase` more seconds: by conditioning on the first
// failure, E = len p + int_0^len t f(t) dt + (1 - p) (phase + E), p = e^{-len/M}.
FirstStep Stretch(double len, double mtbi_s, FirstStep restart_phase) {
  const double p = std::exp(-len / mtbi_s);
  const double lost =
      Integrate([&](double t) { return t * std::exp(-t / mtbi_s) / mtbi_s; }, 0, len);
  const double failed_attempts = (1 - p) / p;
  return {(len * p + lost + (1 - p) * restart_phase.time_s) / p,
          failed_attempts * (1 + restart_phase.failures)};
}

// The restart phase: a stretch of R that starts over at once after a failure.
FirstStep RestartPhase(double restart_s, double mtbi_s) {
  return Stretch(restart_s, mtbi_s, {0, 0});
}

TEST(ExpectedSegment, HandValueWithoutRestart) {
  // M = L = 3600, R = 0: 3600 (e - 1) and e - 1 failures.
  EXPECT_NEAR(ExpectedSegment_s(3600, 0, 3600), 6185.814582452563, 1e-9);
  EXPECT_NEAR(ExpectedSegmentInterruptions(3600, 0, 3600), 1.718281828459045, 1e-12);
}

TEST(ExpectedSegment, MatchesFirstStepAnalysis) {
  const struct {
    double segment_s, restart_s, mtbi_s;
  } kCases[] = {
      {677.9, 0, 3600}, {2428, 900, 9000}, {1000, 500, 1000}, {50, 3000, 2000}, {7200, 60, 600},
  };
  for (const auto& c : kCases) {
    const FirstStep want = Stretch(c.segment_s, c.mtbi_s, RestartPhase(c.restart_s, c.mtbi_s));
    EXPECT_NEAR(ExpectedSegment_s(c.segment_s, c.restart_s, c.mtbi_s), want.time_s,
                1e-9 * want.time_s)
        << c.segment_s;
    EXPECT_NEAR(ExpectedSegmentInterruptions(c.segment_s, c.restart_s, c.mtbi_s), want.failures,
                1e-9 * want.failures)
        << c.segment_s;
  }
}

TEST(ExpectedOnNotice, MatchesFirstStepAnalysis) {
  // Failures at rate 1/M during W (Poisson, W/M of them), each costing the
  // notice write and a restart phase with its own failures.
  const struct {
    double progress_s, write_s, restart_s, mtbi_s;
  } kCases[] = {{360000, 60, 900, 9000}, {20000, 120, 500, 1000}, {3600, 0, 0, 600}};
  for (const auto& c : kCases) {
    const FirstStep phase = RestartPhase(c.restart_s, c.mtbi_s);
    const double n = c.progress_s / c.mtbi_s;
    const double want_s = c.progress_s + n * (c.write_s + phase.time_s);
    const double want_failures = n * (1 + phase.failures);
    EXPECT_NEAR(ExpectedOnNotice_s(c.progress_s, c.write_s, c.restart_s, c.mtbi_s), want_s,
                1e-9 * want_s);
    EXPECT_NEAR(ExpectedOnNoticeInterruptions(c.progress_s, c.restart_s, c.mtbi_s), want_failures,
                1e-9 * want_failures);
  }
}

TEST(ExpectedSegment, NoFailures) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ExpectedSegment_s(1234, 600, inf), 1234);
  EXPECT_EQ(ExpectedSegmentInterruptions(1234, 600, inf), 0);
  EXPECT_EQ(ExpectedOnNotice_s(1234, 60, 600, inf), 1234);
  EXPECT_EQ(ExpectedOnNoticeInterruptions(1234, 600, inf), 0);
}

}  // namespace
}  // namespace trainsim::planner
