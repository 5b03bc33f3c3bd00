#include "planner/search/plan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "core/units.h"
#include "planner/job/interruptions.h"
#include "planner/job/pricing.h"
#include "planner/search/pareto.h"
#include "planner/search/reasons.h"
#include "planner/search/scaling.h"
#include "sim/isolate.h"

namespace trainsim::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Ranked = EstimatedCandidate;

// The objective's score (lower is better). Weighted scores are normalised by
// the best time and cost seen.
struct Scorer {
  const SearchConfig& q;
  double best_time = 1, best_cost = 1;
  double operator()(double time_s, double cost_usd) const {
    switch (q.objective) {
      case Objective::kMinCost:
        return cost_usd + time_s * 1e-12;  // ties go to the faster
      case Objective::kMinTime:            // ties go to the cheaper
        return time_s + (std::isfinite(cost_usd) ? cost_usd * 1e-12 : 0);
      case Objective::kWeighted:
        return q.time_weight * time_s / best_time + (1 - q.time_weight) * cost_usd / best_cost;
    }
    return cost_usd;
  }
  bool Feasible(double time_s, double cost_usd) const {
    return (!q.deadline_hours || time_s <= *q.deadline_hours * kSecondsPerHour) &&
           (!q.budget_usd || cost_usd <= *q.budget_usd);
  }
};

// Best (feasible first) score of a ranked candidate over its pricing options.
std::pair<bool, double> BestScore(const Ranked& r, const Scorer& score, int options) {
  std::pair<bool, double> best{false, kInf};
  for (int i = 0; i < options; ++i) {
    if (!std::isfinite(r.time_s[i])) continue;
    const std::pair<bool, double> v{score.Feasible(r.time_s[i], r.cost_usd[i]),
                                    score(r.time_s[i], r.cost_usd[i])};
    if (v.first > best.first || (v.first == best.first && v.second < best.second)) best = v;
  }
  return best;
}

// The estimator's pass over the whole space.
struct Ranking {
  std::vector<Ranked> ranked;
  PruneTally pruned;
  double seconds = 0;
};

bool Cancelled(const PlanOptions& opt) {
  return opt.cancel && opt.cancel->load(std::memory_order_relaxed);
}

Expected<Ranking> RankSpace(const Scenario& base, const SearchConfig& q, const SearchSpace& space,
                            double steps, const PlanOptions& opt) {
  const sim::ModelParams& params = opt.params;
  Ranking out;
  std::optional<Estimator> estimator;
  sim::PieceCosts figures;
  Status failure;
  std::string estimator_for;  // the instance type the estimator was made for
  SpaceVisitor visit;
  visit.on_figures = [&](const Scenario& s) {
    if (Cancelled(opt)) return;
    if (!estimator || s.instance.name != estimator_for) {
      Expected<Estimator> e = Estimator::Create(s, params);
      if (!e.ok()) {
        failure = e.status();
        estimator.reset();
        return;
      }
      estimator.emplace(std::move(*e));
      estimator_for = s.instance.name;
    }
    figures = estimator->Figures(s);
  };
  visit.on_candidate = [&](const Candidate& c, const Scenario& s, const sim::MemoryBreakdown&) {
    if (Cancelled(opt)) return;  // the walk runs on, skipping everything
    if (!estimator) {            // the catalog lacks a figure the compute model needs
      PruneEntry& e = out.pruned["catalog"];
      if (e.count++ == 0) e.example = failure.message();
      return;
    }
    Ranked r;
    r.c = c;
    r.e = estimator->Step(s, figures);
    for (size_t i = 0; i < space.pricing.size(); ++i) {
      std::optional<PricingInputs> in = MakeJobInputs(s, q, r.e.step_s, steps, space.pricing[i]);
      if (in) ClosedFormJob(in->job, &r.time_s[i], &r.cost_usd[i]);
    }
    out.ranked.push_back(r);
  };
  const auto start = std::chrono::steady_clock::now();
  WalkSpace(base, space, visit, &out.pruned);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out.ranked.empty() && !failure.ok()) return failure;
  return out;
}

// The configurations to simulate: the best by the objective, and up to a
// quarter of the slots along the estimator's time-cost front so that the
// final front shows both ends.
std::vector<int> PickToConfirm(const std::vector<Ranked>& ranked, const Scorer& score, int options,
                               int k) {
  std::vector<std::pair<std::pair<bool, double>, int>> order;
  std::vector<TimeCost> points;
  for (int i = 0; i < static_cast<int>(ranked.size()); ++i) {
    auto [feasible, value] = BestScore(ranked[i], score, options);
    order.push_back({{!feasible, value}, i});
    double t = kInf, c = kInf;
    for (int p = 0; p < options; ++p) {
      t = std::min(t, ranked[i].time_s[p]);
      c = std::min(c, ranked[i].cost_usd[p]);
    }
    points.push_back({t, std::isfinite(c) ? c : 1e300});
  }
  std::sort(order.begin(), order.end());
  std::vector<int> front = ParetoFront(points);
  const int from_front = std::min<int>(static_cast<int>(front.size()), k / 4);
  std::vector<int> picked;
  std::set<int> seen;
  for (int j = 0; j < from_front; ++j) {  // spread along the front
    const int i = front[j * front.size() / from_front];
    if (seen.insert(i).second) picked.push_back(i);
  }
  for (const auto& [key, i] : order) {
    if (static_cast<int>(picked.size()) >= k) break;
    if (seen.insert(i).second) picked.push_back(i);
  }
  return picked;
}

// Simulates the picked candidates, `jobs` at a time.
Status Confirm(const Scenario& base, const SearchSpace& space, const std::vector<Ranked>& ranked,
               const std::vector<int>& picked, const PlanOptions& opt,
               std::vector<ConfirmedCandidate>* out) {
  out->assign(picked.size(), {});
  std::atomic<int> next{0}, done{0};
  std::mutex mu;
  Status failure;
  auto worker = [&] {
    for (int i = next++; i < static_cast<int>(picked.size()); i = next++) {
      if (Cancelled(opt)) return;
      const Ranked& r = ranked[picked[i]];
      Scenario s = base;
      ApplyCandidate(space, r.c, &s);
      sim::SimulateOptions so;
      so.params = opt.params;
      so.cancel = opt.cancel;  // a cancelled plan stops its running simulations too
      Expected<sim::SimulationResult> sim = sim::Simulate(s, so);
      std::lock_guard<std::mutex> lock(mu);
      if (!sim.ok()) {
        if (failure.ok()) failure = sim.status();
        continue;
      }
      ConfirmedCandidate& c = (*out)[i];
      c.candidate = r.c;
      c.estimate = r.e;
      c.simulated = std::move(*sim);
      if (c.simulated.simulated) c.estimator_error = r.e.step_s / c.simulated.step.step_time_s - 1;
      if (opt.observer) opt.observer->Simulated(++done, static_cast<int>(picked.size()));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < sim::SimulationThreads(opt.jobs); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (Cancelled(opt)) return Status::Cancelled(base.name + ": planning cancelled");
  return failure;
}

// Prices every confirmed candidate under every option with the Monte-Carlo
// job model; an option the model rejects is left out.
void PriceConfirmed(const Scenario& base, const SearchConfig& q, const SearchSpace& space,
                    double steps, const ErrorBands* bands,
                    std::vector<ConfirmedCandidate>* confirmed) {
  for (ConfirmedCandidate& c : *confirmed) {
    if (!c.simulated.simulated) continue;
    Scenario s = base;
    ApplyCandidate(space, c.candidate, &s);
    c.steps = steps;
    // Model error: the step time of a published run like this one was exp(-e) times the
    // simulated one, e drawn from the band's samples.
    std::vector<double> work_factors;
    if (bands) {
      const BandKey key = BandKeyOf(s);
      c.band = BandFor(*bands, key);
      for (double e : BandErrors(*bands, key)) work_factors.push_back(std::exp(-e));
    }
    for (Pricing p : space.pricing) {
      std::optional<PricingInputs> in = MakeJobInputs(s, q, c.simulated.step.step_time_s, steps, p);
      if (!in) continue;
      in->job.work_factors = work_factors;
      Expected<JobEstimate> job = EstimateJob(in->job);
      if (!job.ok()) continue;  // e.g. interruptions so frequent the job never finishes
      PricedJob pj;
      pj.pricing = p;
      pj.price_usd_hr = in->price_usd_hr;
      pj.inputs = in->job;
      pj.job = *job;
      pj.interruption_rate_lower_bound = in->rate_lower_bound;
      pj.meets_deadline =
          !q.deadline_hours || job->expected_wall_s <= *q.deadline_hours * kSecondsPerHour;
      pj.meets_budget = !q.budget_usd || !job->cost_usd || job->cost_usd->mean <= *q.budget_usd;
      if (const int years = CommitmentYears(p); years && in->price_usd_hr) {
        Expected<CommitmentCost> share = PriceCommitment(
            {s.cluster.nodes, years, *in->price_usd_hr, in->job.beyond_usd_hr.value_or(0),
             job->mean_billed_instance_s / kSecondsPerHour});
        if (share.ok()) pj.commitment = *share;
      }
      c.priced.push_back(std::move(pj));
    }
  }
}

double Cost(const PricedJob& p) { return p.job.cost_usd ? p.job.cost_usd->mean : kInf; }

// Within the overlap of error bands, the better-measured layout (docs/planner.md
// section 6). The band scales a candidate's score (time and cost both follow the
// step time) to [score / hi, score / lo]. Among the candidates as feasible as the
// leader whose interval overlaps the leader's, whose band is narrower, and whose
// pessimistic end (score / lo) is no worse than the leader's, the narrowest is
// moved to the front (ties: the better prediction); the rest keep their order.
template <typename Key>
void PreferValidated(const Key& key, Plan* plan) {
  std::vector<ConfirmedCandidate>& c = plan->confirmed;
  if (c.empty() || !Judged(c[0].band)) return;
  int which;
  const auto [lead_infeasible, lead] = key(c[0], &which);
  if (!std::isfinite(lead)) return;
  auto width = [](const Band& b) { return std::log(b.hi / b.lo); };
  const double lead_low = lead / c[0].band->hi, lead_high = lead / c[0].band->lo;
  int pick = 0;
  for (int i = 1; i < static_cast<int>(c.size()); ++i) {
    if (!Judged(c[i].band)) continue;
    const auto [infeasible, score] = key(c[i], &which);
    const Band& b = *c[i].band;
    if (infeasible != lead_infeasible || !std::isfinite(score)) continue;
    // Its interval [score / hi, high] overlaps the leader's and ends no later.
    const double high = score / b.lo;
    if (high > lead_high || high < lead_low) continue;
    if (width(b) < width(*c[pick].band)) pick = i;
  }
  if (pick == 0) return;
  std::rotate(c.begin(), c.begin() + pick, c.begin() + pick + 1);
  plan->preferred_over = 1;
}

// Orders the confirmed candidates by their best priced option (feasible
// first), picks the recommendation, and computes the front.
void FinalRanking(const SearchConfig& q, Plan* plan) {
  Scorer score{q};
  double best_t = kInf, best_c = kInf;
  for (const ConfirmedCandidate& c : plan->confirmed) {
    for (const PricedJob& p : c.priced) {
      best_t = std::min(best_t, p.job.expected_wall_s);
      best_c = std::min(best_c, Cost(p));
    }
  }
  score.best_time = std::isfinite(best_t) && best_t > 0 ? best_t : 1;
  score.best_cost = std::isfinite(best_c) && best_c > 0 ? best_c : 1;
  auto key = [&](const ConfirmedCandidate& c, int* which) {
    std::pair<bool, double> best{true, kInf};  // (infeasible, score)
    *which = -1;
    for (int i = 0; i < static_cast<int>(c.priced.size()); ++i) {
      const PricedJob& p = c.priced[i];
      const std::pair<bool, double> v{!(p.meets_deadline && p.meets_budget),
                                      score(p.job.expected_wall_s, Cost(p))};
      if (*which < 0 || v < best) best = v, *which = i;
    }
    return best;
  };
  for (ConfirmedCandidate& c : plan->confirmed) key(c, &c.best_priced);
  std::stable_sort(plan->confirmed.begin(), plan->confirmed.end(),
                   [&](const ConfirmedCandidate& a, const ConfirmedCandidate& b) {
                     int x, y;
                     return key(a, &x) < key(b, &y);
                   });
  if (q.prefer_validated) PreferValidated(key, plan);
  std::vector<TimeCost> points;
  std::vector<std::pair<int, int>> index;
  for (int i = 0; i < static_cast<int>(plan->confirmed.size()); ++i) {
    const ConfirmedCandidate& c = plan->confirmed[i];
    for (int j = 0; j < static_cast<int>(c.priced.size()); ++j) {
      if (!c.priced[j].job.cost_usd) continue;
      points.push_back({c.priced[j].job.expected_wall_s, Cost(c.priced[j])});
      index.push_back({i, j});
    }
  }
  for (int k : ParetoFront(points)) plan->pareto.push_back(index[k]);
  if (plan->confirmed.empty() || plan->confirmed[0].priced.empty()) return;
  plan->best = 0;
  const std::pair<bool, double> best = key(plan->confirmed[0], &plan->best_priced);
  plan->meets_constraints = !best.first;
}

// The scenario as the planner varies it: collective data parallelism with
// DDP buckets (what the search space describes).
Scenario PlanningBase(const Scenario& s) {
  Scenario base = s;
  base.parallel.dp_algorithm = DpAlgorithm::kAuto;
  base.parallel.dp_fusion = DpFusion::kDdp;
  base.parallel.parameter_servers = 0;
  return base;
}

}  // namespace

double StepsToTrain(const Scenario& s) {
  const TrainingConfig& t = s.training;
  double samples = t.samples;
  if (t.tokens > 0) samples = t.tokens / TokensPerSample(s.model);
  if (t.epochs > 0) samples = t.epochs * t.dataset_samples;
  return std::ceil(samples / t.global_batch);
}

Expected<Plan> MakePlan(const PlanningScenario& s, const Catalog& catalog,
                        const PlanOptions& options) {
  const Scenario base = PlanningBase(s.scenario);
  const SearchConfig& q = s.search;
  const double steps = StepsToTrain(base);
  if (steps <= 0) {
    return Status::InvalidInput(base.name +
                                ": planning needs the amount of work: training.tokens, "
                                "training.samples or training.epochs");
  }
  Plan plan;
  Expected<SearchSpace> space = ResolveSpace(base, q, catalog);
  if (!space.ok()) return space.status();
  plan.space = std::move(*space);
  Expected<Ranking> ranking = RankSpace(base, q, plan.space, steps, options);
  if (Cancelled(options)) return Status::Cancelled(base.name + ": planning cancelled");
  if (!ranking.ok()) return ranking.status();
  plan.pruned = std::move(ranking->pruned);
  plan.estimated = static_cast<int64_t>(ranking->ranked.size());
  if (options.observer) options.observer->Estimated(plan.estimated, ranking->seconds);
  if (ranking->ranked.empty()) {
    return Status::InvalidInput(base.name + ": no configuration survives pruning (" +
                                DescribePruning(plan.pruned) + ")");
  }
  Scorer score{q};
  double best_t = kInf, best_c = kInf;
  const int options_n = static_cast<int>(plan.space.pricing.size());
  for (const Ranked& r : ranking->ranked) {
    for (int i = 0; i < options_n; ++i) {
      best_t = std::min(best_t, r.time_s[i]);
      best_c = std::min(best_c, r.cost_usd[i]);
    }
  }
  score.best_time = std::isfinite(best_t) ? best_t : 1;
  score.best_cost = std::isfinite(best_c) ? best_c : 1;
  const std::vector<int> picked = PickToConfirm(ranking->ranked, score, options_n, q.confirm_top);
  if (Status st = Confirm(base, plan.space, ranking->ranked, picked, options, &plan.confirmed);
      !st.ok()) {
    return st;
  }
  PriceConfirmed(base, q, plan.space, steps, options.bands.get(), &plan.confirmed);
  FinalRanking(q, &plan);
  if (plan.best < 0) {
    return Status::InvalidInput(base.name + ": no confirmed configuration has a price");
  }
  ScalingCurve(base, q, plan, steps, options, &plan.scaling, &plan.scaling_stops_paying);
  plan.assumptions = JobAssumptions(base, q);
  for (std::string& a : PriceAssumptions(plan.space, q)) plan.assumptions.push_back(std::move(a));
  plan.reasons = Reasons(base, q, plan, ranking->ranked);
  return plan;
}

}  // namespace trainsim::planner
