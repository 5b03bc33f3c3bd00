#include "planner/job/commitment.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/json_doc.h"

namespace trainsim::planner {

Expected<CommitmentCost> PriceCommitment(const CommitmentInputs& in) {
  auto bad = [](const char* field, const char* expected, double got) {
    return Status::InvalidInput(std::string("commitment: ") + field + ": expected " + expected +
                                ", got " + FormatNumber(got));
  };
  if (in.nodes < 1) return bad("nodes", "at least 1", in.nodes);
  if (in.term_years != 1 && in.term_years != 3) return bad("term_years", "1 or 3", in.term_years);
  const std::pair<const char*, double> positive[] = {{"committed_usd_hr", in.committed_usd_hr},
                                                     {"on_demand_usd_hr", in.on_demand_usd_hr},
                                                     {"job_instance_hours", in.job_instance_hours}};
  for (const auto& [field, value] : positive) {
    if (!(std::isfinite(value) && value > 0)) return bad(field, "a value > 0", value);
  }
  CommitmentCost c;
  c.term_instance_hours = in.nodes * in.term_years * kCommitmentHoursPerYear;
  c.covered_instance_hours = std::min(in.job_instance_hours, c.term_instance_hours);
  c.beyond_instance_hours = in.job_instance_hours - c.covered_instance_hours;
  c.job_share = c.covered_instance_hours / c.term_instance_hours;
  c.job_cost_usd = c.covered_instance_hours * in.committed_usd_hr +
                   c.beyond_instance_hours * in.on_demand_usd_hr;
  c.rest_cost_usd = (c.term_instance_hours - c.covered_instance_hours) * in.committed_usd_hr;
  c.total_cost_usd = c.job_cost_usd + c.rest_cost_usd;
  c.saving = 1 - in.committed_usd_hr / in.on_demand_usd_hr;
  return c;
}

}  // namespace trainsim::planner
