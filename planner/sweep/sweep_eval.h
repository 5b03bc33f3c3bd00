// The evaluation of a sweep over scenario files (docs/sweep.md): a file with
// a `sweep` grid gives one point per grid point, each simulated as `trainsim
// simulate` would; a file with a `search` section gives one point, its plan
// (`trainsim plan`); any other file one point, simulated.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/error_bands.h"
#include "core/scenario.h"
#include "core/search.h"
#include "planner/sweep/sweep.h"

namespace trainsim::planner {

// FNV-1a 64 of `bytes`, as 16 lower-case hex digits.
std::string Fnv1a64Hex(std::string_view bytes);

struct ScenarioSweep {
  std::vector<SweepPoint> points;
  std::vector<PlanningScenario> scenarios;  // scenarios[i] is points[i]'s
  std::vector<bool> plan;                   // plan[i]: points[i] is a plan, else a simulation
};

// kSimulate simulates every file's own configuration, plans or not.
enum class SweepMode { kAuto, kSimulate };

// Loads every file (and expands its grid); one that cannot be read or parsed
// fails the whole sweep before it starts. Points are numbered in file order;
// ids are "PATH#k" (k: the grid point, 0 without a grid); a fingerprint
// covers the evaluation kind, the file's bytes, k and `extra_inputs` (what
// else the results depend on, e.g. the bytes of an extra catalog file).
Expected<ScenarioSweep> LoadScenarioSweep(const std::vector<std::string>& paths,
                                          const Catalog& catalog, std::string_view extra_inputs,
                                          SweepMode mode = SweepMode::kAuto);

// Simulates the scenario and fills a row: ok, does-not-fit (with the
// shortfall) or error. detail is the `simulate --json` object. Never throws.
// With `bands` (may be null) the row has the step time's 80% error band.
SweepRow SimulateScenarioRow(const Scenario& s, const ErrorBands* bands = nullptr);

// Plans the scenario and fills a row with the recommendation: its layout and
// pricing, simulated step, expected hours and cost; detail is the plan JSON.
// A plan that meets no constraint is ok, with a message saying so. Never throws.
SweepRow PlanScenarioRow(const PlanningScenario& s, const Catalog& catalog,
                         std::shared_ptr<const ErrorBands> bands = nullptr);

}  // namespace trainsim::planner
