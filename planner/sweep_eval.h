// The evaluation of a sweep over scenario files: each file is one point,
// simulated as `trainsim simulate` would simulate it. (Grid expansion and
// plan evaluation replace this; see docs/sweep.md.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/scenario.h"
#include "planner/sweep.h"

namespace trainsim::planner {

// FNV-1a 64 of `bytes`, as 16 lower-case hex digits.
std::string Fnv1a64Hex(std::string_view bytes);

struct ScenarioSweep {
  std::vector<SweepPoint> points;
  std::vector<Scenario> scenarios;  // scenarios[i] is points[i]'s
};

// Loads every file; one that cannot be read or parsed fails the whole sweep
// before it starts. Point i is file i: id "PATH#0", fingerprint of the
// evaluation kind, the file's bytes and `extra_inputs` (what else the results
// depend on, e.g. the bytes of an extra catalog file).
Expected<ScenarioSweep> LoadScenarioSweep(const std::vector<std::string>& paths,
                                          const Catalog& catalog, std::string_view extra_inputs);

// Optimizer steps for the scenario's amount of work (tokens, samples or
// epochs x dataset samples), rounded up; unknown when it gives none.
std::optional<double> TrainingSteps(const Scenario& s);

// Simulates the scenario and fills a row: ok, does-not-fit (with the
// shortfall) or error. detail is the `simulate --json` object. Never throws.
SweepRow SimulateScenarioRow(const Scenario& s);

}  // namespace trainsim::planner
