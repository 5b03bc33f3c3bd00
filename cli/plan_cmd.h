// `trainsim plan SCENARIO [options]`: the best plan for a scenario's search
// section, printed as a table with the recommendation and written as JSON.
#pragma once

namespace trainsim {

// argv[0] is "plan". Returns the process exit code (0 ok, 1 bad input, 2 internal).
int PlanCommand(int argc, char** argv);

}  // namespace trainsim
