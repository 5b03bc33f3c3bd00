// Sweeps: a scenario file with a "sweep" grid stands for one scenario per
// combination of the grid's values (docs/formats.md#sweep):
//
//   "sweep": {"grid": {"cluster.nodes": [8, 16, 32], "parallel.tp": [4, 8]}}
//
// The file is itself a valid scenario (the values it gives are the grid's
// baseline); each grid point replaces the fields the grid names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/search.h"
#include "core/status.h"

namespace trainsim {

// A grid has at most this many points.
inline constexpr int64_t kMaxSweepPoints = 100000;

// The fields a grid may vary, as dotted paths: "model" (only where the
// scenario gives a preset name) and every scalar field of the scenario's
// field table (core/scenario_fields.h), in its order.
const std::vector<std::string>& SweepableFields();

// The scenarios of a sweep file, one per grid point, the first field varying
// slowest (row-major). Each point is the file with the grid's values put in
// and is parsed and checked like any scenario (a hardware profile is loaded
// as LoadPlanningScenario does); it keeps the file's search section, is named
// "stem[cluster.nodes=16,parallel.tp=4]" (stem: the scenario's name) and has
// no sweep of its own. A file without a grid gives itself alone. A point that
// fails names itself, after the position of the value at fault (the grid's
// value where it is that one):
//   x.json:9:32: sweep point 3 of 6 (cluster.nodes=16, parallel.tp=3): parallel.tp = 3 ...
Expected<std::vector<PlanningScenario>> ExpandSweepGrid(const std::string& path,
                                                        const Catalog& catalog,
                                                        const std::string& profile_path = "");
// The same from text; like ParsePlanningScenario, it loads no hardware profile.
Expected<std::vector<PlanningScenario>> ExpandSweepGridString(std::string_view text,
                                                              std::string_view filename,
                                                              const Catalog& catalog);

}  // namespace trainsim
