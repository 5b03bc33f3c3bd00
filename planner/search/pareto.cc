#include "planner/search/pareto.h"

#include <algorithm>
#include <numeric>

namespace trainsim::planner {

std::vector<int> ParetoFront(const std::vector<TimeCost>& points) {
  std::vector<int> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  // By time, then cost, then index: a sweep keeps each point cheaper than all faster ones.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const TimeCost &x = points[a], &y = points[b];
    if (x.time_s != y.time_s) return x.time_s < y.time_s;
    if (x.cost_usd != y.cost_usd) return x.cost_usd < y.cost_usd;
    return a < b;
  });
  std::vector<int> front;
  for (int i : order) {
    if (front.empty() || points[i].cost_usd < points[front.back()].cost_usd) front.push_back(i);
  }
  return front;
}

}  // namespace trainsim::planner
