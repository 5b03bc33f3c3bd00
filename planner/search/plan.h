// `trainsim plan`: the best way to train a scenario's model within its
// `search` section — which instances, how many, which parallelism, which
// pricing, how long and how much. DESIGN.md section 5, docs/planner.md.
//
// Pipeline: WalkSpace enumerates and prunes; the Estimator ranks every
// surviving candidate under every pricing option (closed-form job time and
// cost); the SimGrid simulator confirms the best `confirm_top`; each
// confirmed candidate is priced with the Monte-Carlo job model; the final
// ranking, the Pareto front and the recommendation use simulated figures.
#pragma once

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/error_bands.h"
#include "core/scenario.h"
#include "core/search.h"
#include "planner/job/commitment.h"
#include "planner/job/job.h"
#include "planner/search/estimator.h"
#include "planner/search/space.h"
#include "sim/simulate.h"

namespace trainsim::planner {

class PlanObserver {
 public:
  virtual ~PlanObserver() = default;
  virtual void Estimated(int64_t candidates, double seconds) = 0;
  virtual void Simulated(int done, int total) = 0;
};

struct PlanOptions {
  int jobs = 1;  // simulations run at once
  sim::ModelParams params;
  PlanObserver* observer = nullptr;
  // Set by another thread to stop the plan: checked while ranking (the
  // remaining candidates are skipped) and by the running simulations (they
  // are stopped, sim::SimulateOptions::cancel). MakePlan then
  // returns Status::Cancelled("<scenario>: planning cancelled").
  const std::atomic<bool>* cancel = nullptr;
  // The validation corpus's error bands (core/error_bands.h, the built-in
  // instance-catalog/error-bands.json): each confirmed candidate gets its band,
  // and its job Monte-Carlo draws the model's error from the band's samples
  // (P50/P90 of time and cost then include it). Null: no bands.
  std::shared_ptr<const ErrorBands> bands;
};

// One pricing option of a confirmed candidate.
struct PricedJob {
  Pricing pricing = Pricing::kOnDemand;
  std::optional<double> price_usd_hr;  // per instance-hour (spot: discounted); absent: no cost
  JobInputs inputs;
  JobEstimate job;
  bool interruption_rate_lower_bound = false;  // the ">20%" bucket
  bool meets_deadline = true, meets_budget = true;
  // Savings Plans: the job's share of a commitment sized to its nodes, and what the rest costs
  // (at the mean billed instance-hours).
  std::optional<CommitmentCost> commitment;
};

struct ConfirmedCandidate {
  Candidate candidate;
  StepEstimate estimate;
  sim::SimulationResult simulated;
  double estimator_error = 0;  // estimate / simulated - 1
  double steps = 0;            // optimizer steps of the whole job
  std::vector<PricedJob> priced;
  int best_priced = -1;      // its best option by the objective (constraints first)
  std::optional<Band> band;  // PlanOptions::bands at its family
};

// Throughput and job figures of the recommended layout at another node count.
struct ScalingPoint {
  int nodes = 0;
  double samples_per_s = 0;  // simulated, or where not simulated estimated
  double estimated_samples_per_s = 0;
  bool simulated = false;  // see kMaxSimulatedScalingPoints (planner/search/scaling.h)
  double expected_hours = 0;
  std::optional<double> expected_cost_usd;
  double efficiency = 0;  // samples/s per node relative to the smallest node count
  // PlanOptions::bands at this node count's family: samples/s within [lo, hi] x samples_per_s
  // for its coverage (the band widens where the corpus measured fewer GPUs).
  std::optional<Band> band;
};

struct Plan {
  SearchSpace space;
  PruneTally pruned;
  int64_t estimated = 0;                      // candidates that reached the estimator
  std::vector<ConfirmedCandidate> confirmed;  // by final rank, best first
  // The Pareto front of expected time against expected cost, as
  // (confirmed index, priced index), fastest first.
  std::vector<std::pair<int, int>> pareto;
  int best = -1, best_priced = -1;  // the recommendation
  // The candidate the prediction alone would recommend, when the recommendation was
  // preferred over it for its narrower error band (SearchConfig::prefer_validated); else -1.
  int preferred_over = -1;
  bool meets_constraints = false;
  std::vector<std::string> reasons;
  std::vector<ScalingPoint> scaling;
  int scaling_stops_paying = 0;  // node count after which adding nodes stops paying; 0 = never
  std::vector<std::string> assumptions;
};

// Plans `s.scenario` within `s.search`. Fails on a scenario the planner
// cannot price or size (no work given, an unknown instance, nothing survives
// pruning).
Expected<Plan> MakePlan(const PlanningScenario& s, const Catalog& catalog,
                        const PlanOptions& options);

// The plan JSON that `trainsim launch` reads (docs/formats.md#plan).
// `scenario_doc`, the scenario file's JSON, is embedded (as "scenario_json")
// so that the launcher can rebuild the recommended scenario; null leaves it
// out. Deterministic: no timings, hosts or dates.
nlohmann::json ToJson(const PlanningScenario& s, const Plan& p,
                      const nlohmann::json& scenario_doc = nullptr);

// The same plan JSON with another choice as its "recommendation" -- the one
// `trainsim launch` starts: confirmed candidate `confirmed` priced as its
// option `priced`. Its meets_constraints is that option's deadline and
// budget; its reasons are the planner's for the planner's own choice (the
// JSON is then ToJson's) and none for another. Fails on an index out of range.
Expected<nlohmann::json> ToJsonChoosing(const PlanningScenario& s, const Plan& p,
                                        const nlohmann::json& scenario_doc, int confirmed,
                                        int priced);

// Optimizer steps the scenario's work takes (tokens, samples or epochs over
// the global batch, rounded up); 0 when no work is given.
double StepsToTrain(const Scenario& s);

}  // namespace trainsim::planner
