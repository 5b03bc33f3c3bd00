// The launch plan (launch/plan_file.h) of the candidate chosen in the plan
// view: the plan JSON with that candidate, priced as its best option, as the
// recommendation (planner::ToJsonChoosing), read back as `trainsim launch`
// reads a plan file. The planner's own recommendation gives the plan that
// `trainsim plan --out` would have written.
#pragma once

#include "core/status.h"
#include "gui/models/planned.h"
#include "launch/plan_file.h"

namespace trainsim::gui {

// `confirmed`: a Plan::confirmed index. Fails on an index out of range, a
// plan without its scenario document, or a scenario that does not parse.
Expected<launch::LaunchPlan> ChosenLaunchPlan(const PlannedScenario& planned, int confirmed);

}  // namespace trainsim::gui
