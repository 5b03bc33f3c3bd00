#include "planner/sweep/sweep_eval.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/sweep_grid.h"
#include "core/units.h"
#include "planner/job/pricing.h"
#include "planner/search/plan.h"
#include "planner/search/reasons.h"
#include "sim/simulate.h"

namespace trainsim::planner {
namespace {

// Part of every fingerprint: a change of what an evaluation computes changes it.
constexpr char kSimulateKind[] = "simulate/1";
constexpr char kPlanKind[] = "plan/1";

Expected<std::string> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

SweepRow ConfigRow(const Scenario& s) {
  SweepRow row;
  row.scenario = s.name;
  SetScenarioColumns(s, &row);
  return row;
}

void FillResult(const Scenario& s, const sim::SimulationResult& r, SweepRow* row) {
  row->status = SweepStatus::kOk;
  row->step_time_s = r.step.step_time_s;
  row->samples_per_s = r.samples_per_s;
  row->tokens_per_s = r.tokens_per_s;
  row->mfu = r.mfu;
  if (const double steps = StepsToTrain(s); steps > 0) {
    row->time_to_train_h = steps * r.step.step_time_s / kSecondsPerHour;
    // Spot, reserved blocks and commitments need the planner's job model: their cost stays
    // unknown here.
    const Pricing p = s.cluster.pricing;
    if (p == Pricing::kOnDemand || p == Pricing::kSagemaker) {
      if (std::optional<double> price = PriceUsdHr(s.instance, p, SearchConfig())) {
        row->cost_usd = *price * s.cluster.nodes * *row->time_to_train_h;
      }
    }
  }
}

// The step time's band (docs/validation.md section 0.7) into the row's low/high columns.
void SetStepBand(const std::optional<Band>& band, double step_s, SweepRow* row) {
  if (!Judged(band)) return;
  row->step_time_low_s = step_s / band->hi;
  row->step_time_high_s = step_s / band->lo;
}

}  // namespace

std::string Fnv1a64Hex(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

Expected<ScenarioSweep> LoadScenarioSweep(const std::vector<std::string>& paths,
                                          const Catalog& catalog, std::string_view extra_inputs,
                                          SweepMode mode) {
  ScenarioSweep sweep;
  for (const std::string& path : paths) {
    Expected<std::string> bytes = ReadBytes(path);
    if (!bytes.ok()) return bytes.status();
    Expected<PlanningScenario> s = LoadPlanningScenario(path, catalog);
    if (!s.ok()) return s.status();
    std::vector<PlanningScenario> points;
    const bool grid = !s->sweep.empty();
    if (grid) {
      Expected<std::vector<PlanningScenario>> expanded = ExpandSweepGrid(path, catalog);
      if (!expanded.ok()) return expanded.status();
      points = std::move(*expanded);
    } else {
      points.push_back(std::move(*s));
    }
    for (size_t k = 0; k < points.size(); ++k) {
      const bool plan = mode == SweepMode::kAuto && !grid && points[k].has_search;
      const char* kind = plan ? kPlanKind : kSimulateKind;
      // The whole file is the point's input: editing a grid refuses a resume.
      const std::string inputs = std::string(kind) + '\0' + *bytes + '\0' + std::to_string(k) +
                                 '\0' + std::string(extra_inputs);
      const int index = static_cast<int>(sweep.points.size());
      sweep.points.push_back(SweepPoint{index, path + "#" + std::to_string(k), Fnv1a64Hex(inputs)});
      sweep.plan.push_back(plan);
      sweep.scenarios.push_back(std::move(points[k]));
    }
  }
  return sweep;
}

SweepRow SimulateScenarioRow(const Scenario& s, const ErrorBands* bands) {
  SweepRow row = ConfigRow(s);
  try {
    Expected<sim::SimulationResult> r = sim::Simulate(s, sim::SimulateOptions());
    if (!r.ok()) {
      row.message = r.status().message();
      return row;
    }
    std::optional<Band> band;
    if (bands) band = BandFor(*bands, BandKeyOf(s));
    row.detail = sim::ToJson(s, *r, band ? &*band : nullptr);
    if (!r->simulated) {
      row.status = SweepStatus::kDoesNotFit;
      row.message = sim::DescribeShortfall(r->memory, s);
      return row;
    }
    FillResult(s, *r, &row);
    SetStepBand(band, r->step.step_time_s, &row);
  } catch (const std::exception& e) {
    row.status = SweepStatus::kError;
    row.message = std::string("the simulation failed: ") + e.what();
  }
  return row;
}

}  // namespace trainsim::planner

namespace trainsim::planner {

SweepRow PlanScenarioRow(const PlanningScenario& s, const Catalog& catalog,
                         std::shared_ptr<const ErrorBands> bands) {
  SweepRow row;
  row.scenario = s.scenario.name;
  try {
    PlanOptions options;  // jobs 1: the sweep's threads run points side by side
    options.bands = std::move(bands);
    Expected<Plan> plan = MakePlan(s, catalog, options);
    if (!plan.ok()) {
      row.message = plan.status().message();
      return row;
    }
    const ConfirmedCandidate& best = plan->confirmed[plan->best];
    const PricedJob& priced = best.priced[plan->best_priced];
    Scenario chosen = s.scenario;
    ApplyCandidate(plan->space, best.candidate, &chosen);
    row = ConfigRow(chosen);
    row.column("pricing") = ToString(priced.pricing);
    if (std::string terms = DescribeTerms(priced); !terms.empty()) row.pricing_terms = terms;
    row.status = SweepStatus::kOk;
    if (!plan->meets_constraints) row.message = "no plan meets the deadline and budget";
    const sim::SimulationResult& r = best.simulated;
    row.step_time_s = r.step.step_time_s;
    row.samples_per_s = r.samples_per_s;
    row.tokens_per_s = r.tokens_per_s;
    row.mfu = r.mfu;
    row.time_to_train_h = priced.job.expected_wall_s / kSecondsPerHour;
    row.time_to_train_p90_h = priced.job.wall_s.p90 / kSecondsPerHour;
    if (priced.job.cost_usd) {
      row.cost_usd = priced.job.cost_usd->mean;
      row.cost_p90_usd = priced.job.cost_usd->p90;
    }
    SetStepBand(best.band, r.step.step_time_s, &row);
    row.detail = ToJson(s, *plan);
  } catch (const std::exception& e) {
    row.status = SweepStatus::kError;
    row.message = std::string("the plan failed: ") + e.what();
  }
  return row;
}

}  // namespace trainsim::planner
