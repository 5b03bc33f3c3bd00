#include "planner/search/pareto.h"

#include <gtest/gtest.h>

namespace trainsim::planner {
namespace {

// Hand-checked: (time, cost) points; the front is the cheapest at each speed.
TEST(ParetoFront, SmallHandCheckedCase) {
  const std::vector<TimeCost> points = {
      {10, 100},  // 0: fastest, dearest -> front
      {20, 50},   // 1: front
      {20, 60},   // 2: same time as 1, dearer -> dominated
      {30, 55},   // 3: slower and dearer than 1 -> dominated
      {40, 20},   // 4: front
      {50, 20},   // 5: same cost as 4, slower -> dominated
      {60, 10},   // 6: cheapest -> front
      {15, 100},  // 7: slower than 0 at the same cost -> dominated
  };
  EXPECT_EQ(ParetoFront(points), (std::vector<int>{0, 1, 4, 6}));
}

TEST(ParetoFront, ExactDuplicatesKeepTheFirst) {
  EXPECT_EQ(ParetoFront({{5, 5}, {5, 5}, {1, 9}}), (std::vector<int>{2, 0}));
}

TEST(ParetoFront, EmptyAndSingle) {
  EXPECT_TRUE(ParetoFront({}).empty());
  EXPECT_EQ(ParetoFront({{3, 4}}), (std::vector<int>{0}));
}

}  // namespace
}  // namespace trainsim::planner
