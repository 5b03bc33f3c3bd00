// A plan together with what it was made from. The window makes one when a
// plan arrives and hands it to every page that shows the plan (plan view,
// timeline, scaling, launch); the pages only read it.
#pragma once

#include <QMetaType>
#include <QString>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/catalog.h"
#include "core/search.h"
#include "planner/search/plan.h"

namespace trainsim::gui {

struct PlannedScenario {
  QString path;  // the scenario file
  // As planned (before any candidate is applied); its document is the text planned, embedded
  // in the plan JSON.
  PlanningScenario scenario;
  std::shared_ptr<const Catalog> catalog;  // the plan's search space points into it
  std::shared_ptr<const planner::Plan> plan;
};

}  // namespace trainsim::gui

Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::gui::PlannedScenario>)
