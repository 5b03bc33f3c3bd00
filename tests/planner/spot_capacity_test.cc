#include "planner/job/spot_capacity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace trainsim::planner {
namespace {

// q = 1/2 every 10 min: P(F <= 3) = 1 - 1/16 = 0.9375 is the first >= 0.9, so P90 = 3 retries.
TEST(WaitForSpotCapacity, HandComputedAtOneChanceInTwo) {
  const Expected<SpotCapacityWait> w = WaitForSpotCapacity(0.5, 600);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_DOUBLE_EQ(w->mean_s, 600);
  EXPECT_DOUBLE_EQ(w->p50_s, 0);     // the first request succeeds half the time
  EXPECT_DOUBLE_EQ(w->p90_s, 1800);  // 1 - 0.5^4 = 0.9375 >= 0.9 > 1 - 0.5^3
  EXPECT_DOUBLE_EQ(w->p99_s, 3600);  // 1 - 0.5^7 = 0.992 >= 0.99 > 1 - 0.5^6
  EXPECT_DOUBLE_EQ(SpotNotStartedBy(0.5, 600, 1799), 0.125);
  EXPECT_DOUBLE_EQ(SpotNotStartedBy(0.5, 600, 1800), 0.0625);
}

// The closed forms against the geometric distribution summed term by term.
TEST(WaitForSpotCapacity, ClosedFormsMatchTheSummedDistribution) {
  for (double q : {0.02, 0.2, 0.5, 0.9}) {
    double mean = 0, below = 0;  // below: P(F <= k)
    int k90 = -1, k99 = -1;
    for (int k = 0; k < 100000 && (k99 < 0 || q * std::pow(1 - q, k) * k > 1e-15); ++k) {
      const double pk = q * std::pow(1 - q, k);
      mean += k * pk;
      below += pk;
      if (k90 < 0 && below >= 0.9 - 1e-12) k90 = k;
      if (k99 < 0 && below >= 0.99 - 1e-12) k99 = k;
    }
    const Expected<SpotCapacityWait> w = WaitForSpotCapacity(q, 60);
    ASSERT_TRUE(w.ok());
    EXPECT_NEAR(w->mean_s, 60 * mean, 1e-6 * 60 * mean + 1e-9) << q;
    EXPECT_DOUBLE_EQ(w->p90_s, 60.0 * k90) << q;
    EXPECT_DOUBLE_EQ(w->p99_s, 60.0 * k99) << q;
  }
}

TEST(WaitForSpotCapacity, CertainCapacityMeansNoWait) {
  const Expected<SpotCapacityWait> w = WaitForSpotCapacity(1, 600);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->mean_s, 0);
  EXPECT_EQ(w->p99_s, 0);
}

TEST(WaitForSpotCapacity, BadInputsNameTheirField) {
  for (double q : {0.0, -0.1, 1.5, std::nan("")}) {
    const Expected<SpotCapacityWait> w = WaitForSpotCapacity(q, 600);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("success_per_request: expected a chance in (0, 1]"),
              std::string::npos);
  }
  const Expected<SpotCapacityWait> w = WaitForSpotCapacity(0.5, 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("retry_s: expected a time > 0"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::planner
