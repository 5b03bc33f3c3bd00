// `trainsim observe`: what real runs printed, read back and set beside the
// simulator's prediction (docs/observe.md).
#pragma once

#include <string>
#include <vector>

namespace trainsim {

// `words`: the arguments after "observe". Exit codes: 0 ok, 1 bad input, 2 internal error.
int ObserveCommand(const std::vector<std::string>& words);

}  // namespace trainsim
