#include "cli/observe_common.h"

#include <cstdio>
#include <fstream>

#include "core/catalog.h"
#include "launch/plan_file.h"
#include "observe/file_kind.h"

namespace trainsim::observe_cli {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Signed(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
  return buf;
}

Expected<Prediction> Predict(const ObserveArgs& a) {
  Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
  if (!catalog.ok()) return catalog.status();
  Prediction p;
  if (!a.scenario.empty()) {
    Expected<Scenario> s = LoadScenarioFile(a.scenario, *catalog, a.profile);
    if (!s.ok()) return s.status();
    p.scenario = std::move(*s);
  } else {
    Expected<launch::LaunchPlan> plan = launch::LoadPlanFile(a.plan, *catalog);
    if (!plan.ok()) return plan.status();
    p.scenario = std::move(plan->scenario);
    if (!a.profile.empty()) {
      return Status::InvalidInput("--profile applies with --scenario (a plan carries its own)");
    }
  }
  Expected<sim::SimulationResult> r = sim::Simulate(p.scenario, sim::SimulateOptions());
  if (!r.ok()) return r.status();
  if (!r->simulated) {
    return Status::InvalidInput(p.scenario.name +
                                " does not fit: " + sim::DescribeShortfall(r->memory, p.scenario));
  }
  p.result = std::move(*r);
  std::string why_not;
  if (const auto bands = DefaultErrorBands(&why_not)) {
    p.band = BandFor(*bands, BandKeyOf(p.scenario));
  }
  return p;
}

Expected<std::optional<InstanceType>> InstanceArg(const ObserveArgs& a) {
  if (a.instance.empty()) return std::optional<InstanceType>();
  std::string instance = a.instance;
  if (instance.rfind("ml.", 0) == 0) instance = instance.substr(3);
  Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
  if (!catalog.ok()) return catalog.status();
  const InstanceType* t = catalog->Find(instance);
  if (t == nullptr) {
    return Status::InvalidInput("--instance: unknown instance type \"" + a.instance +
                                "\" (trainsim catalog list)");
  }
  return std::optional<InstanceType>(*t);
}

// A SageMaker export's format: --format's, else detected from the file's first bytes.
std::optional<observe::SageMakerFormat> SageMakerFormatOf(const ObserveArgs& a,
                                                          const std::string& file) {
  if (!a.format.empty()) {
    Expected<observe::SageMakerFormat> f = observe::ParseSageMakerFormat(a.format, "--format");
    return f.ok() ? std::optional(*f) : std::nullopt;
  }
  return observe::DetectSageMakerFormat(observe::FileHead(file));
}

}  // namespace trainsim::observe_cli
