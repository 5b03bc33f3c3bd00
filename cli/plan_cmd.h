// `trainsim plan SCENARIO [options]`: the best plan for a scenario's search
// section, printed as a table with the recommendation and written as JSON.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

// `words`: the arguments after "plan". Returns the process exit code (0 ok, 1 bad input,
// 2 internal).
int PlanCommand(const std::vector<std::string>& words);

}  // namespace trainsim
