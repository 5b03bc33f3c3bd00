// Saving a plan from the GUI: the same plan JSON `trainsim plan --out`
// writes (planner::ToJson with the scenario file's JSON embedded), written
// atomically. Used by the window's "Save plan…" and by the headless
// `trainsim-gui SCENARIO --export FILE`.
#pragma once

#include <QString>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "gui/models/planned.h"

namespace trainsim::gui {

// The plan JSON text, ending in a newline (byte-identical to the CLI's file).
std::string PlanJsonText(const PlannedScenario& planned);

// Writes PlanJsonText to `path` through a temporary file and a rename.
Status SavePlanJson(const PlannedScenario& planned, const QString& path);

}  // namespace trainsim::gui
