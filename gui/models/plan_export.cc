#include "gui/models/plan_export.h"

#include "core/durable_file.h"

namespace trainsim::gui {

std::string PlanJsonText(const PlannedScenario& planned) {
  return planner::ToJson(planned.scenario, *planned.plan, planned.scenario.document).dump(2) + "\n";
}

Status SavePlanJson(const PlannedScenario& planned, const QString& path) {
  if (!planned.plan) return Status::InvalidInput(path.toStdString() + ": there is no plan to save");
  return WriteFileDurably(path.toStdString(), PlanJsonText(planned));
}

}  // namespace trainsim::gui
