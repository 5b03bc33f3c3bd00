#include "planner/job/capacity_block.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace trainsim::planner {
namespace {

constexpr double kHour = 3600, kDay = 24 * kHour;

TEST(BlockDays, WholeDaysToTwoWeeksThenWholeWeeksTo182) {
  EXPECT_EQ(BlockDays(0), 1);
  EXPECT_EQ(BlockDays(1), 1);
  EXPECT_EQ(BlockDays(kDay), 1);
  EXPECT_EQ(BlockDays(kDay + 1), 2);
  EXPECT_EQ(BlockDays(14 * kDay), 14);
  EXPECT_EQ(BlockDays(14 * kDay + 1), 21);
  EXPECT_EQ(BlockDays(175 * kDay + 1), 182);
  EXPECT_EQ(BlockDays(182 * kDay), 182);
  EXPECT_EQ(BlockDays(182 * kDay + 1), std::nullopt);
  EXPECT_EQ(BlockDays(-1), std::nullopt);
  EXPECT_EQ(BlockDays(std::numeric_limits<double>::infinity()), std::nullopt);
}

TEST(BlockSizes, BinaryDigitsOfTheNodesWith64sFirst) {
  EXPECT_EQ(BlockSizes(1), std::vector<int>{1});
  EXPECT_EQ(BlockSizes(24), (std::vector<int>{16, 8}));
  EXPECT_EQ(BlockSizes(64), std::vector<int>{64});
  EXPECT_EQ(BlockSizes(100), (std::vector<int>{64, 32, 4}));
  EXPECT_EQ(BlockSizes(256), (std::vector<int>{64, 64, 64, 64}));
  EXPECT_TRUE(BlockSizes(0).empty());
  EXPECT_TRUE(BlockSizes(257).empty());
}

// 8 nodes, 1 h of setup, 10 days of training: one block of ceil(10 d + 1.5 h) = 11 days.
TEST(PlanCapacityBlocks, OneBlockHoldsTheJobAndItsEndMargin) {
  CapacityBlockInputs in;
  in.nodes = 8;
  in.price_usd_hr = 40;
  in.setup_s = kHour;
  in.training_s = 10 * kDay;
  const Expected<CapacityBlockJob> job = PlanCapacityBlocks(in);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->block_days, std::vector<int>{11});
  EXPECT_EQ(job->block_sizes, (std::vector<int>{8}));
  EXPECT_DOUBLE_EQ(job->wall_s, 10 * kDay + kHour);
  EXPECT_DOUBLE_EQ(job->reserved_instance_hours, 8 * 11 * 24);           // 2112
  EXPECT_DOUBLE_EQ(job->idle_instance_hours, 2112 - 8 * (10 * 24 + 1));  // 184
  ASSERT_TRUE(job->cost_usd.has_value());
  EXPECT_DOUBLE_EQ(*job->cost_usd, 40 * 2112.0);
}

// 200 days of training: a 182-day block that trains 182 d - 0.5 h margin - 0.5 h checkpoint,
// a day's gap, then 1 h restart + the 18 d 1 h left + the margin: 18.1 days, so 21.
TEST(PlanCapacityBlocks, ALongJobContinuesInTheNextBlockAfterTheGap) {
  CapacityBlockInputs in;
  in.nodes = 2;
  in.training_s = 200 * kDay;
  in.checkpoint_write_s = 0.5 * kHour;
  in.restart_s = kHour;
  in.gap_s = kDay;
  const Expected<CapacityBlockJob> job = PlanCapacityBlocks(in);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->block_days, (std::vector<int>{182, 21}));
  EXPECT_DOUBLE_EQ(job->wall_s, 182 * kDay + kDay + kHour + 18 * kDay + kHour);
  EXPECT_DOUBLE_EQ(job->reserved_instance_hours, 2 * (182 + 21) * 24);  // 9744
  // Used: 182 d - 0.5 h, then 18 d + 2 h: 4801.5 h on each of the 2 nodes.
  EXPECT_NEAR(job->idle_instance_hours, 9744 - 2 * 4801.5, 1e-9);
  EXPECT_FALSE(job->cost_usd.has_value());
}

TEST(PlanCapacityBlocks, BadInputsNameTheirField) {
  const auto error = [](void (*edit)(CapacityBlockInputs*)) {
    CapacityBlockInputs in;
    in.training_s = kDay;
    edit(&in);
    const Expected<CapacityBlockJob> job = PlanCapacityBlocks(in);
    return job.ok() ? std::string("ok") : job.status().message();
  };
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->nodes = 0; }).find("nodes: expected 1 to 256"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->nodes = 257; }).find("nodes"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->training_s = 0; }).find("training_s"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->gap_s = -1; }).find("gap_s: expected a time"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->price_usd_hr = 0; }).find("price_usd_hr"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) {
              in->training_s = 400 * kDay;
              in->restart_s = 182 * kDay;
            }).find("no time to train"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->training_s = 1e12; }).find("more than 1000"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) { in->booked_days = {15}; }).find("booked_days"),
            std::string::npos);
  EXPECT_NE(error([](CapacityBlockInputs* in) {
              in->rules = kTrainingPlanRules;
              in->booked_days = {0};
            }).find("training plan: booked_days"),
            std::string::npos);
}

TEST(BlockDays, TrainingPlansTakeWholeDaysTo182) {
  EXPECT_EQ(BlockDays(14 * kDay + 1, kTrainingPlanRules), 15);
  EXPECT_EQ(BlockDays(100.5 * kDay, kTrainingPlanRules), 101);
  EXPECT_EQ(BlockDays(182 * kDay + 1, kTrainingPlanRules), std::nullopt);
  EXPECT_EQ(BlockSizes(300, kTrainingPlanRules), (std::vector<int>{64, 64, 64, 64, 32, 8, 4}));
}

// Booked for 10 days of training (an 11-day block); this run needs 8: it ends early and
// the block's rest is idle, paid all the same.
TEST(PlanCapacityBlocks, ARunShorterThanItsBookingPaysTheWholeBooking) {
  CapacityBlockInputs in;
  in.nodes = 4;
  in.price_usd_hr = 10;
  in.training_s = 8 * kDay;
  in.booked_days = {11};
  const Expected<CapacityBlockJob> job = PlanCapacityBlocks(in);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->block_days, std::vector<int>{11});
  EXPECT_DOUBLE_EQ(job->wall_s, 8 * kDay);
  EXPECT_DOUBLE_EQ(job->reserved_instance_hours, 4 * 11 * 24);
  EXPECT_DOUBLE_EQ(job->idle_instance_hours, 4 * 3 * 24);
  EXPECT_DOUBLE_EQ(*job->cost_usd, 10 * 4 * 11 * 24.0);
}

// Booked one 3-day block; the run needs 4 days of training. The block trains 3 d - 0.5 h margin
// - 1 h checkpoint = 70.5 h; after a 12 h gap, a second block holds the 2 h restart, the
// 25.5 h left and the margin: 28 h, so 2 days.
TEST(PlanCapacityBlocks, ARunOutlastingItsBookingContinuesInABlockBoughtThen) {
  CapacityBlockInputs in;
  in.nodes = 2;
  in.price_usd_hr = 10;
  in.training_s = 4 * kDay;
  in.checkpoint_write_s = kHour;
  in.restart_s = 2 * kHour;
  in.gap_s = 12 * kHour;
  in.booked_days = {3};
  const Expected<CapacityBlockJob> job = PlanCapacityBlocks(in);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->block_days, (std::vector<int>{3, 2}));
  EXPECT_DOUBLE_EQ(job->wall_s, 3 * kDay + 12 * kHour + 2 * kHour + 25.5 * kHour);
  EXPECT_DOUBLE_EQ(job->reserved_instance_hours, 2 * 5 * 24);
  // Used: 72 h - 0.5 h, then 27.5 h, on each of the 2 nodes.
  EXPECT_NEAR(job->idle_instance_hours, 240 - 2 * (71.5 + 27.5), 1e-9);
  EXPECT_DOUBLE_EQ(*job->cost_usd, 10 * 240.0);
}

}  // namespace
}  // namespace trainsim::planner
