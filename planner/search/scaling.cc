#include "planner/search/scaling.h"

#include <atomic>
#include <cmath>
#include <thread>

#include "core/strategy.h"
#include "core/units.h"
#include "planner/job/pricing.h"
#include "planner/search/estimator.h"
#include "sim/isolate.h"
#include "sim/memory_model.h"
#include "sim/simulate.h"

namespace trainsim::planner {

std::vector<bool> ScalingPointsToSimulate(int n, int must) {
  std::vector<bool> pick(n, n <= kMaxSimulatedScalingPoints);
  if (n <= kMaxSimulatedScalingPoints) return pick;
  for (int k = 0; k < kMaxSimulatedScalingPoints; ++k) {
    pick[static_cast<std::size_t>(std::llround(k * (n - 1.0) / (kMaxSimulatedScalingPoints - 1)))] =
        true;
  }
  if (must >= 0) pick[must] = true;
  return pick;
}

namespace {

// The fastest micro batch of the space for `s` (its layout set) that divides the global batch,
// gives the interleaved schedule whole groups of pp microbatches and fits; 0 when none does.
// Its estimate goes to *fastest.
int FastestMicroBatch(Scenario* s, const Candidate& c, const SearchSpace& space,
                      const Estimator& est, StepEstimate* fastest) {
  const int dp = s->parallel.dp;
  int fastest_mb = 0;
  for (int mb : space.micro_batch) {
    const int64_t per_step = static_cast<int64_t>(dp) * mb;
    if (s->training.global_batch % per_step) continue;
    if (c.schedule == Schedule::kInterleaved &&
        MicrobatchesPerPipeline(s->training.global_batch, dp, mb) % c.pp) {
      continue;
    }
    s->training.micro_batch = mb;
    if (!sim::ComputeMemory(*s).fits) continue;
    const StepEstimate e = est.Step(*s, est.Figures(*s));
    if (fastest_mb == 0 || e.step_s < fastest->step_s) *fastest = e, fastest_mb = mb;
  }
  return fastest_mb;
}

// The curve's points before simulation: each node count's scenario and step.
struct CurvePoints {
  std::vector<Scenario> scenarios;
  std::vector<double> step_s;  // estimated, then simulated where it ran
};

// Every node count of the space where the recommended layout's shape (tp, pp, cp, ZeRO, shard
// group) still divides the GPUs, with the fastest micro batch that works, estimated.
void EstimatePoints(Scenario s, const Candidate& c, const Plan& plan, const Estimator& est,
                    const PlanOptions& options, std::vector<ScalingPoint>* out,
                    CurvePoints* curve) {
  for (int n = plan.space.min_nodes; n <= plan.space.max_nodes; ++n) {
    const int gpus = n * s.instance.gpus;
    const int split = SlotSplit(c.degrees);  // the same strategies (cp)
    if (gpus % (c.tp * c.pp * split)) continue;
    const int dp = gpus / (c.tp * c.pp * split);
    if (c.zero_stage > 0 && dp * split == 1) continue;
    // The same hybrid shard group, where it still divides dp and is below it.
    if (c.shard_group > 0 && (dp % c.shard_group != 0 || dp <= c.shard_group)) continue;
    s.cluster.nodes = n;
    s.parallel.dp = dp;
    StepEstimate fastest;
    const int fastest_mb = FastestMicroBatch(&s, c, plan.space, est, &fastest);
    if (fastest_mb == 0) continue;
    s.training.micro_batch = fastest_mb;
    ScalingPoint p;
    p.nodes = n;
    p.estimated_samples_per_s = s.training.global_batch / fastest.step_s;
    if (options.bands) p.band = BandFor(*options.bands, BandKeyOf(s));
    out->push_back(p);
    curve->scenarios.push_back(s);
    curve->step_s.push_back(fastest.step_s);
  }
}

// Simulates the points ScalingPointsToSimulate picks (the recommendation's own among them),
// options.jobs at a time; a refused or failed one keeps its estimate.
void SimulatePoints(int nodes, const PlanOptions& options, std::vector<ScalingPoint>* out,
                    CurvePoints* curve) {
  int must = -1;
  for (std::size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i].nodes == nodes) must = static_cast<int>(i);
  }
  const std::vector<bool> pick = ScalingPointsToSimulate(static_cast<int>(out->size()), must);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < out->size(); i = next++) {
      if (!pick[i] || (options.cancel && options.cancel->load())) continue;
      sim::SimulateOptions so;
      so.params = options.params;
      so.cancel = options.cancel;
      Expected<sim::SimulationResult> r = sim::Simulate(curve->scenarios[i], so);
      if (!r.ok() || !r->simulated) continue;  // refused or failed: the estimate stays
      (*out)[i].simulated = true;
      curve->step_s[i] = r->step.step_time_s;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < sim::SimulationThreads(options.jobs); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
}

// Each point's throughput, expected hours and cost under `pricing`.
void PricePoints(const SearchConfig& q, double steps, Pricing pricing, const CurvePoints& curve,
                 std::vector<ScalingPoint>* out) {
  for (std::size_t i = 0; i < out->size(); ++i) {
    ScalingPoint& p = (*out)[i];
    p.samples_per_s = curve.scenarios[i].training.global_batch / curve.step_s[i];
    std::optional<PricingInputs> in =
        MakeJobInputs(curve.scenarios[i], q, curve.step_s[i], steps, pricing);
    if (in) {
      double t, cost;
      ClosedFormJob(in->job, &t, &cost);
      p.expected_hours = t / kSecondsPerHour;
      if (std::isfinite(cost)) p.expected_cost_usd = cost;
    }
  }
}

// Each point's efficiency against the first, and the node count after which adding nodes
// stops paying: where the next step up returns less than half of what the nodes it adds
// would give at the first count's rate.
void Efficiencies(std::vector<ScalingPoint>* out, int* stops_paying) {
  if (out->empty()) return;
  const ScalingPoint& first = out->front();
  for (size_t i = 0; i < out->size(); ++i) {
    ScalingPoint& p = (*out)[i];
    p.efficiency = p.samples_per_s / p.nodes / (first.samples_per_s / first.nodes);
    if (i + 1 < out->size() && *stops_paying == 0) {
      const ScalingPoint& q = (*out)[i + 1];
      const double gain = (q.samples_per_s - p.samples_per_s) / (q.nodes - p.nodes);
      if (gain < 0.5 * first.samples_per_s / first.nodes) *stops_paying = p.nodes;
    }
  }
}

}  // namespace

void ScalingCurve(const Scenario& base, const SearchConfig& q, const Plan& plan, double steps,
                  const PlanOptions& options, std::vector<ScalingPoint>* out, int* stops_paying) {
  const ConfirmedCandidate& best = plan.confirmed[plan.best];
  const PricedJob& priced = best.priced[plan.best_priced];
  Scenario s = base;
  ApplyCandidate(plan.space, best.candidate, &s);
  Expected<Estimator> est = Estimator::Create(s, options.params);
  if (!est.ok()) return;
  CurvePoints curve;
  EstimatePoints(s, best.candidate, plan, *est, options, out, &curve);
  SimulatePoints(best.candidate.nodes, options, out, &curve);
  PricePoints(q, steps, priced.pricing, curve, out);
  Efficiencies(out, stops_paying);
}

}  // namespace trainsim::planner
