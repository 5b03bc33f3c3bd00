// The recommendation in plain words: why this parallelism, this instance,
// this pricing; and whether it follows the field's usual practice (max out a
// node, data parallel while the model fits, sharded data parallel in
// between, model parallel when it does not) or the numbers say otherwise.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "planner/search/plan.h"

namespace trainsim::planner {

// A candidate the estimator ranked, with its closed-form job figures per
// pricing option of the space (infinite where the option has no price).
struct EstimatedCandidate {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  Candidate c;
  StepEstimate e;
  std::array<double, kPricingOptions> time_s = Unpriced();
  std::array<double, kPricingOptions> cost_usd = Unpriced();

  static std::array<double, kPricingOptions> Unpriced() {
    std::array<double, kPricingOptions> out;
    out.fill(kNone);
    return out;
  }
};

// The plan's reasons in words; `q` is the search section it was planned under.
std::vector<std::string> Reasons(const Scenario& base, const SearchConfig& q, const Plan& plan,
                                 const std::vector<EstimatedCandidate>& estimated);

// What an option's figures rest on, in a few words: the expected interruptions
// of a spot option, the blocks booked for a reserved one, the share of a
// commitment; empty for on-demand and SageMaker.
std::string DescribeTerms(const PricedJob& p);

// "memory: 12345 (e.g. ...); batch: 67 (...)", largest count first.
std::string DescribePruning(const PruneTally& tally);

}  // namespace trainsim::planner
