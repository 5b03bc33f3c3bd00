// The recommendation in plain words: why this parallelism, this instance,
// this pricing; and whether it follows the field's usual practice (max out a
// node, data parallel while the model fits, sharded data parallel in
// between, model parallel when it does not) or the numbers say otherwise.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "planner/plan.h"

namespace trainsim::planner {

// A candidate the estimator ranked, with its closed-form job figures per
// pricing option of the space (infinite where the option has no price).
struct EstimatedCandidate {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  Candidate c;
  StepEstimate e;
  double time_s[4] = {kNone, kNone, kNone, kNone};
  double cost_usd[4] = {kNone, kNone, kNone, kNone};
};

// The plan's reasons in words; `q` is the search section it was planned under.
std::vector<std::string> Reasons(const Scenario& base, const SearchConfig& q, const Plan& plan,
                                 const std::vector<EstimatedCandidate>& estimated);

// "memory: 12345 (e.g. ...); batch: 67 (...)", largest count first.
std::string DescribePruning(const PruneTally& tally);

}  // namespace trainsim::planner
