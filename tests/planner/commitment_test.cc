#include "planner/job/commitment.h"

#include <gtest/gtest.h>

#include <string>

namespace trainsim::planner {
namespace {

// 4 instances for 1 year: 35,040 instance-hours committed at 30 USD/h. A job of
// 4 x 720 h = 2,880 instance-hours uses 8.2% of it: 86,400 USD; the rest
// (32,160 h) costs 964,800 USD whether used or not.
TEST(PriceCommitment, AJobUsesAShareOfTheTerm) {
  CommitmentInputs in;
  in.nodes = 4;
  in.term_years = 1;
  in.committed_usd_hr = 30;
  in.on_demand_usd_hr = 50;
  in.job_instance_hours = 4 * 720;
  const Expected<CommitmentCost> c = PriceCommitment(in);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->term_instance_hours, 35040);
  EXPECT_DOUBLE_EQ(c->covered_instance_hours, 2880);
  EXPECT_DOUBLE_EQ(c->beyond_instance_hours, 0);
  EXPECT_DOUBLE_EQ(c->job_share, 2880.0 / 35040);
  EXPECT_DOUBLE_EQ(c->job_cost_usd, 86400);
  EXPECT_DOUBLE_EQ(c->rest_cost_usd, 964800);
  EXPECT_DOUBLE_EQ(c->total_cost_usd, 30 * 35040.0);
  EXPECT_DOUBLE_EQ(c->saving, 0.4);
}

// 1 instance, 3 years (26,280 h), a job of 30,000 h: 3,720 h past the term on demand.
TEST(PriceCommitment, HoursPastTheTermAreBilledOnDemand) {
  CommitmentInputs in;
  in.term_years = 3;
  in.committed_usd_hr = 10;
  in.on_demand_usd_hr = 20;
  in.job_instance_hours = 30000;
  const Expected<CommitmentCost> c = PriceCommitment(in);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->covered_instance_hours, 26280);
  EXPECT_DOUBLE_EQ(c->beyond_instance_hours, 3720);
  EXPECT_DOUBLE_EQ(c->job_share, 1);
  EXPECT_DOUBLE_EQ(c->job_cost_usd, 262800 + 74400);
  EXPECT_DOUBLE_EQ(c->rest_cost_usd, 0);
}

TEST(PriceCommitment, BadInputsNameTheirField) {
  const auto error = [](void (*edit)(CommitmentInputs*)) {
    CommitmentInputs in;
    in.committed_usd_hr = 1;
    in.on_demand_usd_hr = 2;
    in.job_instance_hours = 3;
    edit(&in);
    const Expected<CommitmentCost> c = PriceCommitment(in);
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_EQ(error([](CommitmentInputs*) {}), "ok");
  EXPECT_NE(error([](CommitmentInputs* in) { in->nodes = 0; }).find("nodes: expected at least 1"),
            std::string::npos);
  EXPECT_NE(
      error([](CommitmentInputs* in) { in->term_years = 2; }).find("term_years: expected 1 or 3"),
      std::string::npos);
  EXPECT_NE(error([](CommitmentInputs* in) { in->committed_usd_hr = 0; }).find("committed_usd_hr"),
            std::string::npos);
  EXPECT_NE(
      error([](CommitmentInputs* in) { in->job_instance_hours = -1; }).find("job_instance_hours"),
      std::string::npos);
}

}  // namespace
}  // namespace trainsim::planner
