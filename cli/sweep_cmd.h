// `trainsim sweep`: the subcommand that runs headless sweeps (docs/sweep.md).
#pragma once

#include <string>
#include <vector>

namespace trainsim::cli {

// `trainsim sweep SCENARIO... [--out DIR] [--jobs N] [--catalog FILE]`, with
// `args` the words after "sweep". Returns the exit code: 0 when every point
// ran (rows with status error included), 1 bad input, 2 internal error, 130
// interrupted.
int SweepCommand(const std::vector<std::string>& args);

}  // namespace trainsim::cli
