// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Commitments: Compute or EC2 Instance Savings Plans and reserved instances
// (docs/planner.md section 6.9). The buyer commits to a rate per hour for a
// term of one or three years (AWS Savings Plans API: TermInYears ONE_YEAR |
// THREE_YEARS) and pays it whether used or not; usage within it is billed at
// the plan's lower rate. A training job uses a share of such a commitment: the
// planner states the job's share, its cost at the committed rate, and what the
// rest of the commitment costs if nothing else uses it.
//
// Sized here to the job: a commitment covering its N instances for the term.
// The committed rate per instance-hour (a payment option's effective rate,
// upfront payments spread over the term) comes from the user or a sourced
// catalog figure; none is invented. Pure functions, thread-safe.
#pragma once

#include <optional>

#include "core/status.h"

namespace trainsim::planner {

// Hours in a term year: 365 days (stated assumption; leap days not counted).
inline constexpr double kCommitmentHoursPerYear = 8760;

struct CommitmentInputs {
  int nodes = 1;
  int term_years = 1;             // 1 or 3
  double committed_usd_hr = 0;    // per instance-hour under the commitment; > 0
  double on_demand_usd_hr = 0;    // beyond the term's hours; > 0
  double job_instance_hours = 0;  // the job's billed instance-hours; > 0
};

struct CommitmentCost {
  double term_instance_hours = 0;     // nodes x term hours: what is committed
  double covered_instance_hours = 0;  // the job's hours within the commitment
  double beyond_instance_hours = 0;   // the job's hours past it, billed on demand
  double job_share = 0;               // covered / committed, 0..1
  double job_cost_usd = 0;            // covered at the committed rate + beyond on demand
  double rest_cost_usd = 0;           // the unused commitment, paid all the same
  // job_cost_usd + rest_cost_usd: what the whole commitment and any overflow cost.
  double total_cost_usd = 0;
  // The committed rate's saving on on-demand, 1 - committed / on-demand.
  double saving = 0;
};

// InvalidInput naming the field for nodes < 1, a term other than 1 or 3 years,
// or a rate or job size that is not > 0.
Expected<CommitmentCost> PriceCommitment(const CommitmentInputs& in);

}  // namespace trainsim::planner
