#include "planner/scaling.h"

#include <cmath>

#include "planner/estimator.h"
#include "planner/pricing.h"
#include "sim/memory_model.h"

namespace trainsim::planner {

void ScalingCurve(const Scenario& base, const Plan& plan, double steps,
                  const sim::ModelParams& params, const ErrorBands* bands,
                  std::vector<ScalingPoint>* out, int* stops_paying) {
  const ConfirmedCandidate& best = plan.confirmed[plan.best];
  const PricedJob& priced = best.priced[plan.best_priced];
  Scenario s = base;
  ApplyCandidate(plan.space, best.candidate, &s);
  Expected<Estimator> est = Estimator::Create(s, params);
  if (!est.ok()) return;
  const Candidate& c = best.candidate;
  for (int n = plan.space.min_nodes; n <= plan.space.max_nodes; ++n) {
    const int gpus = n * s.instance.gpus;
    if (gpus % (c.tp * c.pp)) continue;
    const int dp = gpus / (c.tp * c.pp);
    if (c.zero_stage > 0 && dp == 1) continue;
    // The same hybrid shard group, where it still divides dp and is below it.
    if (c.shard_group > 0 && (dp % c.shard_group != 0 || dp <= c.shard_group)) continue;
    s.cluster.nodes = n;
    s.parallel.dp = dp;
    // The same shape; the micro batch may change where the chosen one does
    // not divide the batch or fit: the fastest that works.
    std::optional<StepEstimate> fastest;
    for (int mb : plan.space.micro_batch) {
      const int64_t per_step = static_cast<int64_t>(dp) * mb;
      if (s.training.global_batch % per_step) continue;
      if (c.schedule == Schedule::kInterleaved && (s.training.global_batch / per_step) % c.pp) {
        continue;
      }
      s.training.micro_batch = mb;
      if (!sim::ComputeMemory(s).fits) continue;
      const StepEstimate e = est->Step(s, est->Figures(s));
      if (!fastest || e.step_s < fastest->step_s) fastest = e;
    }
    if (!fastest) continue;
    const StepEstimate& e = *fastest;
    ScalingPoint p;
    p.nodes = n;
    p.samples_per_s = s.training.global_batch / e.step_s;
    if (bands) p.band = BandFor(*bands, BandKeyOf(s));
    std::optional<PricingInputs> in = MakeJobInputs(s, e.step_s, steps, priced.pricing);
    if (in) {
      double t, cost;
      ClosedFormJob(in->job, &t, &cost);
      p.expected_hours = t / 3600;
      if (std::isfinite(cost)) p.expected_cost_usd = cost;
    }
    out->push_back(p);
  }
  if (out->empty()) return;
  const ScalingPoint& first = out->front();
  for (size_t i = 0; i < out->size(); ++i) {
    ScalingPoint& p = (*out)[i];
    p.efficiency = p.samples_per_s / p.nodes / (first.samples_per_s / first.nodes);
    // Adding nodes stops paying where the next step up returns less than half
    // of what the nodes it adds would give at the first count's rate.
    if (i + 1 < out->size() && *stops_paying == 0) {
      const ScalingPoint& q = (*out)[i + 1];
      const double gain = (q.samples_per_s - p.samples_per_s) / (q.nodes - p.nodes);
      if (gain < 0.5 * first.samples_per_s / first.nodes) *stops_paying = p.nodes;
    }
  }
}

}  // namespace trainsim::planner
