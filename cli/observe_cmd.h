// `trainsim observe`: what real runs printed, read back and set beside the
// simulator's prediction (docs/observe.md).
#pragma once

namespace trainsim {

// argv[0] is "observe". Exit codes: 0 ok, 1 bad input, 2 internal error.
int ObserveCommand(int argc, char** argv);

}  // namespace trainsim
