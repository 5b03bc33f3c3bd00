// A plan as `trainsim launch` reads it: the plan JSON that `trainsim plan`
// writes (docs/formats.md#plan-json-trainsim-plan), with the scenario it was
// made from rebuilt with the recommendation applied.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/scenario.h"

namespace trainsim::launch {

struct LaunchPlan {
  std::string file;           // where it was read from
  Scenario scenario;          // the recommended configuration: instance, nodes, tp/pp/dp, ZeRO,
                              // micro batch, recompute, schedule, pricing (cluster.pricing)
  double steps = 0;           // optimizer steps of the whole job
  double step_time_s = 0;     // simulated
  double expected_hours = 0;  // whole job, the recommended pricing
  std::optional<double> max_wait_s;     // SageMaker managed spot: suggested MaxWait
  std::optional<double> max_runtime_s;  // ... and MaxRuntime
  double checkpoint_interval_s = 0;     // the plan's (Daly) interval; 0 = none
  std::vector<int> block_days;          // capacity-block, training-plan: the blocks booked
  nlohmann::json plan;                  // the whole plan JSON
};

// Reads and checks a plan file; errors name the file and the field
// ("my.plan.json: recommendation.config.tp: expected an integer >= 1").
Expected<LaunchPlan> LoadPlanFile(const std::string& path, const Catalog& catalog);
Expected<LaunchPlan> ParsePlan(const std::string& text, const std::string& file,
                               const Catalog& catalog);

}  // namespace trainsim::launch
