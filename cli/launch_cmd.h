// `trainsim launch PLAN [options]`: from a plan of `trainsim plan` to what
// starts the job (docs/launch.md). The bundle backend (the default) writes
// the launch bundle into --out and prints the commands that submit it; with
// --submit it submits one target, for real only with --yes.
#pragma once

#include <string>
#include <vector>

namespace trainsim {

// `words`: the arguments after "launch". Returns the process exit code (0 ok, 1 bad input or
// a failed submission, 2 internal).
int LaunchCommand(const std::vector<std::string>& words);

}  // namespace trainsim
