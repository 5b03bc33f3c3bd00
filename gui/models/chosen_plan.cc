#include "gui/models/chosen_plan.h"

#include <QFileInfo>

namespace trainsim::gui {

Expected<launch::LaunchPlan> ChosenLaunchPlan(const PlannedScenario& planned, int confirmed) {
  if (!planned.plan || !planned.catalog) return Status::InvalidInput("no plan");
  if (!planned.scenario.document.is_object()) {
    return Status::InvalidInput(planned.path.toStdString() +
                                ": the scenario file is not JSON; save it and plan again");
  }
  const planner::Plan& plan = *planned.plan;
  const int priced = confirmed >= 0 && confirmed < static_cast<int>(plan.confirmed.size())
                         ? plan.confirmed[confirmed].best_priced
                         : 0;
  Expected<nlohmann::json> json =
      planner::ToJsonChoosing(planned.scenario, plan, planned.scenario.document, confirmed, priced);
  if (!json.ok()) return json.status();
  // Named as `trainsim plan --out` would name it, for the messages.
  const QFileInfo scenario(planned.path);
  const std::string file = scenario.completeBaseName().toStdString() + ".plan.json";
  return launch::ParsePlan(json->dump(), file, *planned.catalog);
}

}  // namespace trainsim::gui
