// Plan files as `trainsim launch` reads them (launch/plan_file.h ParsePlan), against the
// built-in catalog.
//
// Checks:
// - every error names the file: "fuzz.plan.json: FIELD ..." (the plan is read with
//   nlohmann::json, which keeps no positions, so a plan's errors name the field path, as
//   plan_file.h documents), or "fuzz.plan.json (recommended scenario):L:C: ..." for the
//   scenario rebuilt from scenario_json and the recommendation (its line and column are in
//   that rebuilt text, which the caller never sees: only the form is checked);
// - round trip: the plan JSON it keeps (LaunchPlan::plan), written with dump() and read
//   again, gives the same plan: the same JSON, the same recommended scenario
//   (ScenarioDigest) and the same figures.
#include <string>

#include "fuzz/fuzz_util.h"
#include "launch/plan_file.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using trainsim::launch::LaunchPlan;

constexpr char kFile[] = "fuzz.plan.json";

std::string Figures(const LaunchPlan& p) {
  nlohmann::ordered_json j = {{"steps", p.steps},
                              {"step_time_s", p.step_time_s},
                              {"expected_hours", p.expected_hours},
                              {"max_wait_s", p.max_wait_s ? *p.max_wait_s : -1},
                              {"max_runtime_s", p.max_runtime_s ? *p.max_runtime_s : -1},
                              {"checkpoint_interval_s", p.checkpoint_interval_s},
                              {"scenario", trainsim::fuzz::ScenarioDigest(p.scenario)}};
  return j.dump();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trainsim::fuzz::BuiltinCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(trainsim::fuzz::Text(data, size));
  const trainsim::Catalog& catalog = trainsim::fuzz::BuiltinCatalog();
  Expected<LaunchPlan> plan = trainsim::launch::ParsePlan(text, kFile, catalog);
  if (!plan.ok()) {
    const std::string& message = plan.status().message();
    int line = 0, column = 0;
    Check(trainsim::fuzz::StartsWithFile(message, kFile) ||
              trainsim::fuzz::StartsWithLineColumn(
                  message, std::string(kFile) + " (recommended scenario)", &line, &column),
          "an error naming neither the file nor the recommended scenario's place", message);
    return 0;
  }
  const std::string written = plan->plan.dump();
  Expected<LaunchPlan> again = trainsim::launch::ParsePlan(written, kFile, catalog);
  Check(again.ok(), "the plan written does not read back", again.status().message());
  Check(again->plan.dump() == written, "the plan read back is written differently", written);
  Check(Figures(*again) == Figures(*plan), "the plan read back has other figures", Figures(*plan));
  return 0;
}
