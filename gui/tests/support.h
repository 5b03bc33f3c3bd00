// Shared fixtures of the GUI tests: the built-in catalog, the small plan
// scenario (tests/cli/data/plan-small.json, planned in about a second) and
// its plan.
#pragma once

#include <QByteArray>
#include <QString>
#include <memory>

#include "core/catalog.h"
#include "core/scenario.h"
#include "planner/plan.h"

namespace trainsim::gui::test {

std::shared_ptr<const Catalog> TheCatalog();
QString SmallScenarioPath();
Scenario SmallScenario();
std::shared_ptr<const planner::Plan> SmallPlan();  // planned once, shared

// A hardware profile trainsim-calibrate --backend cpu wrote on a 2-core
// machine (gui/tests/data/cpu-profile.json).
QString CpuProfilePath();
QByteArray ReadFile(const QString& path);  // empty when unreadable

}  // namespace trainsim::gui::test
