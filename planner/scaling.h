// The scaling curve of a plan's recommendation: its shape (instance, tp, pp,
// ZeRO stage, recompute, schedule) at every node count of the search range
// where it is valid, estimated, with where adding nodes stops paying
// (docs/planner.md section 5).
#pragma once

#include <vector>

#include "planner/plan.h"

namespace trainsim::planner {

// Fills *out (by node count) and *stops_paying (0 = never); with `bands` (may
// be null) each point has its error band. `plan` has a recommendation.
void ScalingCurve(const Scenario& base, const Plan& plan, double steps,
                  const sim::ModelParams& params, const ErrorBands* bands,
                  std::vector<ScalingPoint>* out, int* stops_paying);

}  // namespace trainsim::planner
