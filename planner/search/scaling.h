// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// The scaling curve of a plan's recommendation: its shape (instance, tp, pp,
// ZeRO stage, recompute, schedule) at every node count of the search range
// where it is valid, simulated (the estimator picks each point's micro batch),
// with where adding nodes stops paying (docs/planner.md section 5).
#pragma once

#include <vector>

#include "planner/search/plan.h"

namespace trainsim::planner {

// At most this many points of a curve are simulated, spread over the range
// with its ends, and the recommendation's node count besides; the others keep
// the estimator's figure and say so (ScalingPoint::simulated).
inline constexpr int kMaxSimulatedScalingPoints = 48;

// Which of a curve's n points are simulated: all, or kMaxSimulatedScalingPoints
// spread evenly (the first and the last among them) and point `must` (-1: none).
std::vector<bool> ScalingPointsToSimulate(int n, int must);

// Fills *out (by node count) and *stops_paying (0 = never), each point priced
// under the search section `q`; with options.bands each point has its error
// band. Simulates the points options.jobs at a time; a point the simulator
// refuses or fails keeps its estimate. `plan` has a recommendation.
void ScalingCurve(const Scenario& base, const SearchConfig& q, const Plan& plan, double steps,
                  const PlanOptions& options, std::vector<ScalingPoint>* out, int* stops_paying);

}  // namespace trainsim::planner
