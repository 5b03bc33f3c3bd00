// The types that travel through queued signals between the GUI thread and
// the workers. RegisterMetaTypes() runs once before the first worker starts.
#pragma once

#include <QMetaType>
#include <memory>

#include "core/catalog.h"
#include "core/search.h"
#include "gui/models/planned.h"
#include "planner/search/plan.h"

Q_DECLARE_METATYPE(trainsim::PlanningScenario)
Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::Catalog>)
Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::planner::Plan>)

namespace trainsim::gui {

void RegisterMetaTypes();

}  // namespace trainsim::gui
