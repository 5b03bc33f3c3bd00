// `trainsim launch PLAN --backend local`: the real run on this machine, each
// step printed beside the simulator's prediction (docs/local-run.md).
#pragma once

#include "launch/local_run.h"

namespace trainsim {

// Returns the exit code: 0 when the run completed, 130 when interrupted (the
// checkpoint lets --resume continue), 1 for bad input or a failed run.
int RunLocalCommand(const launch::LaunchPlan& plan, const launch::LocalOptions& options);

}  // namespace trainsim
