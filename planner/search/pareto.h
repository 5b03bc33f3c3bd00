// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// The Pareto front of time against cost: the points that no other point
// beats on both.
#pragma once

#include <vector>

namespace trainsim::planner {

struct TimeCost {
  double time_s = 0;
  double cost_usd = 0;
};

// Indices of the points on the front, ordered by time ascending (so cost
// descending). A point is on the front when no other point is at least as
// good on both figures and better on one; of exact duplicates, the first
// index stays. Deterministic.
std::vector<int> ParetoFront(const std::vector<TimeCost>& points);

}  // namespace trainsim::planner
