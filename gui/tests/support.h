// Shared fixtures of the GUI tests: the built-in catalog, the small plan
// scenario (tests/cli/data/plan-small.json, planned in about a second) and
// its plan, and the pipeline scenario (gui/tests/data/plan-pipeline.json:
// the same model with pp 2 or 4 and up to 8 nodes, whose scaling curve
// stops paying).
#pragma once

#include <QByteArray>
#include <QString>
#include <QWidget>
#include <memory>

#include "core/catalog.h"
#include "core/search.h"
#include "gui/models/planned.h"
#include "planner/search/plan.h"

namespace trainsim::gui::test {

std::shared_ptr<const Catalog> TheCatalog();
QString SmallScenarioPath();
PlanningScenario SmallScenario();
std::shared_ptr<const planner::Plan> SmallPlan();  // planned once, shared
QString PipelineScenarioPath();
PlanningScenario PipelineScenario();
std::shared_ptr<const planner::Plan> PipelinePlan();  // planned once, shared
// What the window hands its pages for `plan` of `s` (no file, no document).
std::shared_ptr<const PlannedScenario> MakePlanned(const PlanningScenario& s,
                                                   std::shared_ptr<const planner::Plan> plan);

// A hardware profile trainsim-calibrate --backend cpu wrote on a 2-core
// machine (gui/tests/data/cpu-profile.json).
QString CpuProfilePath();
QByteArray ReadFile(const QString& path);  // empty when unreadable

// Grabs `w` and saves it as TRAINSIM_SCREENSHOT_DIR/<page>.png and, when
// TRAINSIM_UPDATE_DOCS_SCREENSHOTS is set, docs/images/gui-<page>.png (tracked
// by git, so refreshed on request only). "" on success, else what failed.
QString SaveScreenshot(QWidget& w, const QString& page);

}  // namespace trainsim::gui::test
