#include "planner/job/job.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/units.h"
#include "planner/job/interruptions.h"
#include "planner/job/job_check.h"
#include "planner/job/job_run.h"
#include "planner/job/spot_capacity.h"

namespace trainsim::planner {
namespace {

// The Monte-Carlo draws at most this many interruptions per estimate (about
// half a second); below kMinTrials trials it is skipped for the closed form.
constexpr double kMaxSimulatedInterruptions = 2e7;
constexpr int kMinTrials = 100;

struct Plan {
  JobShape shape;
  double interval_s = 0;
  IntervalSource source = IntervalSource::kNone;
  int64_t checkpoints = 0;
};

int WaveNodes(const JobInputs& in) { return std::min(in.reclaim_wave_nodes, in.nodes); }

// Between failure events: each takes WaveNodes instances.
double JobMtbi_s(const JobInputs& in) {
  const double per_s =
      in.interruptions_per_instance_hour * in.nodes / WaveNodes(in) / kSecondsPerHour;
  return per_s > 0 ? 1 / per_s : std::numeric_limits<double>::infinity();
}

// The work between checkpoints and where it comes from.
void ChooseInterval(const JobInputs& in, double mtbi_s, Plan* plan) {
  if (in.checkpoint_interval_s) {
    plan->interval_s = *in.checkpoint_interval_s;
    plan->source = IntervalSource::kOverride;
  } else if (!std::isinf(mtbi_s) && !in.checkpoint_on_notice) {
    plan->interval_s = DalyInterval_s(in.checkpoint_write_s, mtbi_s);
    plan->source = IntervalSource::kDaly;
  } else {
    plan->interval_s = in.work_s;
    plan->source = IntervalSource::kNone;
  }
}

// Splits the work into segments of interval_s, the last one shorter; every
// segment ends with a checkpoint write, the last one being the final save.
Expected<Plan> MakePlan(const JobInputs& in) {
  Plan plan;
  JobShape& s = plan.shape;
  s.download_s = in.download_s;
  s.mtbi_s = JobMtbi_s(in);
  s.restart_s = in.restart_s;
  s.checkpoint_write_s = in.checkpoint_write_s;
  s.nodes = in.nodes;
  s.wave_nodes = WaveNodes(in);
  s.capacity_chance = in.capacity_chance;
  s.retry_s = in.capacity_retry_s;
  if (in.fallback_deadline_s) s.fallback_deadline_s = *in.fallback_deadline_s - in.provisioning_s;
  ChooseInterval(in, s.mtbi_s, &plan);
  if (Status st = CheckSegmentCount(in, plan.interval_s, plan.source == IntervalSource::kDaly);
      !st.ok()) {
    return st;
  }
  // A hair of tolerance so that work = k * interval gives k segments, not k + 1.
  const double segments = std::max(1.0, std::ceil(in.work_s / plan.interval_s * (1 - 1e-12)));
  plan.checkpoints = static_cast<int64_t>(segments);
  const double delta = in.checkpoint_write_s;
  if (in.checkpoint_on_notice) {
    s.on_notice = true;
    s.progress_s = in.work_s + segments * delta;
    s.notice_write_s = delta;
  } else {
    s.full_segments = plan.checkpoints - 1;
    s.full_segment_s = plan.interval_s + delta;
    s.last_segment_s = in.work_s - (segments - 1) * plan.interval_s + delta;
  }
  return plan;
}

// Nearest rank: the value at 1-based position ceil(percent / 100 * n).
double Percentile(const std::vector<double>& sorted, int percent) {
  const int64_t n = static_cast<int64_t>(sorted.size());
  const int64_t rank = (percent * n + 99) / 100;
  return sorted[std::max<int64_t>(rank, 1) - 1];
}

Spread SpreadOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  Spread out;
  // Summed as offsets from the smallest: exact when every trial agrees.
  double offsets = 0;
  for (double v : values) offsets += v - values.front();
  const double n = static_cast<double>(values.size());
  out.mean = values.front() + offsets / n;
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  out.stddev = n > 1 ? std::sqrt(squares / (n - 1)) : 0;
  out.p10 = Percentile(values, 10);
  out.p50 = Percentile(values, 50);
  out.p90 = Percentile(values, 90);
  out.p99 = Percentile(values, 99);
  return out;
}

Spread Constant(double v) { return Spread{v, 0, v, v, v, v}; }

Spread Shifted(Spread s, double by) {
  s.mean += by;
  s.p10 += by;
  s.p50 += by;
  s.p90 += by;
  s.p99 += by;
  return s;
}

// Billing rules (reference/aws-instances-sources.json, _spot_and_billing):
// EC2 per instance session (JobSimulator), Savings Plans as EC2; SageMaker N x
// training seconds with the same 60 s minimum; managed spot
// BillableTimeInSeconds x InstanceCount, BillableTime = training time x
// spot_billed_fraction; reserved blocks every reserved hour.
double BilledInstance_s(const JobInputs& in, const TrialOutcome& t) {
  switch (in.pricing) {
    case Pricing::kSpotFallback:  // the spot sessions; the on-demand fleet's apart
    case Pricing::kSpotElastic:
    case Pricing::kOnDemand:
    case Pricing::kSpot:
    case Pricing::kSavingsPlan1y:
    case Pricing::kSavingsPlan3y:
    case Pricing::kCapacityBlock:  // the reserved hours, set by InBlocks
    case Pricing::kTrainingPlan:
      return t.session_billed_instance_s;
    case Pricing::kSagemaker:  // and the warm pool kept after the last job
      return in.nodes * (std::max(kMinimumSession_s, t.run_s) + in.warm_pool_keep_alive_s);
    case Pricing::kSagemakerSpot:
      return in.nodes * t.run_s * in.spot_billed_fraction;
  }
  return 0;
}

// The skipped Monte-Carlo's stand-in: expectations, ignoring the 60 s minimum;
// under EC2 each interruption leaves one instance unbilled for R.
TrialOutcome ExpectedOutcome(const JobInputs& in, const JobShape& shape) {
  TrialOutcome t;
  t.run_s = ExpectedRun_s(shape);
  t.session_billed_instance_s =
      std::max(0.0, in.nodes * t.run_s - ExpectedInterruptions(shape) * in.restart_s);
  return t;
}

// A trial's run as a chain of SageMaker jobs: the later jobs' reloads in the (billed) run,
// their provisioning in the (unbilled) wait.
void InJobChain(const JobInputs& in, TrialOutcome* t) {
  const JobChain chain = ChainOf(in, t->run_s);
  t->run_s += chain.reload_s;
  t->start_wait_s += chain.provisioning_s;
}

// A trial's run as its reserved blocks hold it: the blocks' wall time (less
// provisioning, which FillFromSamples adds back) and every reserved hour billed.
// EstimateJob has checked the blocks of the longest trial, so this cannot fail.
void InBlocks(const JobInputs& in, TrialOutcome* t) {
  const Expected<CapacityBlockJob> job = RunInBlocks(in, t->run_s);
  if (!job.ok()) return;
  t->run_s = job->wall_s - in.provisioning_s;
  t->session_billed_instance_s = job->reserved_instance_hours * kSecondsPerHour;
}

struct Samples {
  std::vector<double> run_s;  // from the request, less provisioning
  std::vector<double> billed_instance_s, cost_usd;
  double interruptions = 0;
  int fell_back = 0;
  double fallback_at_s = 0;  // summed over the trials that fell back, from the request
};

// A trial's cost: its billed time at the option's price, and a fallback's on-demand hours
// at theirs.
double TrialCost_usd(const JobInputs& in, const TrialOutcome& t, double billed_instance_s) {
  double cost = CostOf_usd(in, billed_instance_s);
  if (in.fallback_usd_hr)
    cost += *in.fallback_usd_hr / kSecondsPerHour * t.on_demand_billed_instance_s;
  return cost;
}

// Model error: the generator that picks each trial's work factor, of its own so that the
// interruptions' draws stay those of the seed.
std::mt19937_64 FactorPicker(const JobInputs& in) {
  return std::mt19937_64(in.seed ^ 0x9e3779b97f4a7c15ull);
}

Samples Simulate(const JobInputs& in, const JobShape& shape, int trials, bool model_error) {
  Samples out;
  out.run_s.reserve(trials);
  out.billed_instance_s.reserve(trials);
  JobSimulator sim(shape, in.seed);
  // Model error: the shape of each factor's work, made once.
  std::mt19937_64 pick = FactorPicker(in);
  std::vector<JobShape> shapes;
  for (double f : model_error ? in.work_factors : std::vector<double>()) {
    JobInputs scaled = in;
    scaled.work_s = in.work_s * f;
    Expected<Plan> p = MakePlan(scaled);
    shapes.push_back(p.ok() ? p->shape : shape);
  }
  for (int i = 0; i < trials; ++i) {
    if (!shapes.empty()) sim.SetShape(shapes[pick() % shapes.size()]);
    TrialOutcome t = sim.RunTrial();
    if (in.blocks) InBlocks(in, &t);
    if (std::isfinite(in.max_job_s)) InJobChain(in, &t);
    out.run_s.push_back(t.start_wait_s + t.run_s);
    const double billed = BilledInstance_s(in, t);
    out.billed_instance_s.push_back(billed + t.on_demand_billed_instance_s);
    out.cost_usd.push_back(TrialCost_usd(in, t, billed));
    out.interruptions += static_cast<double>(t.interruptions);
    if (t.fallback_at_s >= 0) {
      ++out.fell_back;
      out.fallback_at_s += in.provisioning_s + t.start_wait_s + t.fallback_at_s;
    }
  }
  out.interruptions /= trials;
  if (out.fell_back > 0) out.fallback_at_s /= out.fell_back;
  return out;
}

void FillFromSamples(const JobInputs& in, Samples samples, JobEstimate* e) {
  e->trials_run = static_cast<int>(samples.run_s.size());
  e->wall_s = Shifted(SpreadOf(std::move(samples.run_s)), in.provisioning_s);
  const Spread billed = SpreadOf(samples.billed_instance_s);
  e->mean_billed_instance_s = billed.mean;
  e->mean_interruptions = samples.interruptions;
  if (in.fallback_deadline_s) {
    e->fallback_share = static_cast<double>(samples.fell_back) / e->trials_run;
    if (samples.fell_back > 0) e->mean_fallback_at_s = samples.fallback_at_s;
  }
  if (!in.price_usd_hr) return;
  e->cost_usd = SpreadOf(std::move(samples.cost_usd));
}

void FillFromClosedForm(const JobInputs& in, const JobShape& shape, JobEstimate* e) {
  const TrialOutcome t = ExpectedOutcome(in, shape);
  e->monte_carlo_skipped = true;
  e->wall_s = Constant(MeanCapacityWait_s(shape) + in.provisioning_s + t.run_s);
  e->mean_billed_instance_s = BilledInstance_s(in, t);
  e->mean_interruptions = e->expected_interruptions;
  if (in.price_usd_hr) e->cost_usd = Constant(CostOf_usd(in, e->mean_billed_instance_s));
}

// `from`'s spread and percentiles, `to`'s mean.
void WithPercentiles(const Spread& from, Spread* to) {
  const double mean = to->mean;
  *to = from;
  to->mean = mean;
}

double CeilHour_s(double s) { return std::ceil(s / kSecondsPerHour) * kSecondsPerHour; }

// Blocks: books them for the prediction (unless in->blocks names its own) and
// takes its wall time, after checking that the booked blocks, with what is
// bought after them, hold the longest trial (the largest work factor) too.
Status BookBlocks(const JobShape& shape, JobInputs* in, JobEstimate* e) {
  const Expected<CapacityBlockJob> predicted = RunInBlocks(*in, ExpectedRun_s(shape));
  if (!predicted.ok()) return predicted.status();
  if (in->blocks->booked_days.empty()) in->blocks->booked_days = predicted->block_days;
  e->expected_wall_s = predicted->wall_s;
  e->blocks = *predicted;
  if (in->work_factors.empty()) return Status::Ok();
  JobInputs longest = *in;
  longest.work_s *= *std::max_element(in->work_factors.begin(), in->work_factors.end());
  Expected<Plan> plan = MakePlan(longest);
  if (!plan.ok()) return plan.status();
  return RunInBlocks(*in, ExpectedRun_s(plan->shape)).status();
}

// kSpotElastic: the Monte-Carlo of planner/job/job_elastic.h; its means are the expectations
// (the closed form only ranks, and stands in when the draws would take too long).
// The elastic job's closed form, where too many losses make the Monte-Carlo unaffordable.
void ElasticClosedForm(const JobInputs& in, const ElasticShape& shape, double loss_rate,
                       JobEstimate* e) {
  e->monte_carlo_skipped = true;
  e->wall_s = Constant(e->expected_wall_s);
  e->mean_billed_instance_s = ExpectedElasticBilled_s(shape);
  e->mean_interruptions = e->expected_interruptions;
  e->live_share = LiveShare(shape);
  e->total_losses = loss_rate * (e->expected_wall_s - in.provisioning_s);
  if (in.price_usd_hr) e->cost_usd = Constant(CostOf_usd(in, e->mean_billed_instance_s));
}

// `trials` elastic runs: the means, and the percentiles again with the model's error (one shape
// per work factor, drawn by FactorPicker, as Simulate).
void ElasticMonteCarlo(const JobInputs& in, const ElasticShape& shape, int trials, JobEstimate* e) {
  std::vector<ElasticShape> shapes;
  for (double f : in.work_factors) {
    IntervalSource unused;
    shapes.push_back(ElasticShapeOf(in, in.work_s * f, &unused));
  }
  for (bool model_error : {false, true}) {
    if (model_error && shapes.empty()) break;
    ElasticSimulator sim(shape, in.seed);
    std::mt19937_64 pick = FactorPicker(in);
    Samples samples;
    double live = 0, losses = 0;
    for (int i = 0; i < trials; ++i) {
      if (model_error) sim.SetShape(shapes[pick() % shapes.size()]);
      const ElasticOutcome o = sim.RunTrial();
      samples.run_s.push_back(o.trial.start_wait_s + o.trial.run_s);
      samples.billed_instance_s.push_back(o.trial.session_billed_instance_s);
      samples.cost_usd.push_back(CostOf_usd(in, o.trial.session_billed_instance_s));
      samples.interruptions += static_cast<double>(o.trial.interruptions);
      live += o.live_share;
      losses += static_cast<double>(o.total_losses);
    }
    samples.interruptions /= trials;
    if (!model_error) {
      FillFromSamples(in, std::move(samples), e);
      e->live_share = live / trials;
      e->total_losses = losses / trials;
      e->expected_wall_s = e->wall_s.mean;
      e->expected_interruptions = e->mean_interruptions;
      continue;
    }
    JobEstimate with_error;  // percentiles and spread with the model's error
    FillFromSamples(in, std::move(samples), &with_error);
    WithPercentiles(with_error.wall_s, &e->wall_s);
    if (e->cost_usd) WithPercentiles(*with_error.cost_usd, &*e->cost_usd);
  }
}

Status EstimateElastic(const JobInputs& in, JobEstimate* e) {
  const ElasticShape shape = ElasticShapeOf(in, in.work_s, &e->interval_source);
  e->checkpoint_interval_s = std::min(shape.interval_s, in.work_s);
  e->checkpoints = static_cast<int64_t>(
      std::max(1.0, std::ceil(in.work_s / e->checkpoint_interval_s * (1 - 1e-12))));
  if (Status st =
          CheckSegmentCount(in, shape.interval_s, e->interval_source == IntervalSource::kDaly);
      !st.ok()) {
    return st;
  }
  const double loss_rate = TotalLossRate_per_s(shape);
  e->mtbi_s = loss_rate > 0 ? 1 / loss_rate : std::numeric_limits<double>::infinity();
  e->expected_start_wait_s = SpotWaitMean_s(in.capacity_chance, in.capacity_retry_s);
  e->expected_wall_s = e->expected_start_wait_s + in.provisioning_s + ExpectedElasticRun_s(shape);
  e->expected_interruptions = ExpectedElasticFailures(shape);
  if (Status st = CheckFinishes(in, e->expected_wall_s, e->mtbi_s); !st.ok()) return st;
  const double affordable = kMaxSimulatedInterruptions / std::max(1.0, e->expected_interruptions);
  const int trials = affordable >= in.trials ? in.trials : static_cast<int>(affordable);
  if (trials < std::min(in.trials, kMinTrials)) {
    ElasticClosedForm(in, shape, loss_rate, e);
  } else {
    ElasticMonteCarlo(in, shape, trials, e);
  }
  return Status::Ok();
}

}  // namespace

ElasticShape ElasticShapeOf(const JobInputs& in, double work_s, IntervalSource* source) {
  ElasticShape s;
  s.download_s = in.download_s;
  s.work_s = work_s;
  s.checkpoint_write_s = in.checkpoint_write_s;
  s.node_rate_per_s = in.interruptions_per_instance_hour / kSecondsPerHour;
  s.restart_s = in.restart_s;
  s.loss_pause_s = in.elastic_loss_pause_s;
  s.join_pause_s = in.elastic_join_pause_s;
  s.nodes = in.nodes;
  s.groups = in.elastic_groups;
  s.wave_nodes = WaveNodes(in);
  s.capacity_chance = in.capacity_chance;
  s.retry_s = in.capacity_retry_s;
  const double loss_rate = TotalLossRate_per_s(s);
  if (in.checkpoint_interval_s) {
    s.interval_s = *in.checkpoint_interval_s;
    *source = IntervalSource::kOverride;
  } else if (loss_rate > 0 && in.checkpoint_write_s > 0 &&
             DalyInterval_s(in.checkpoint_write_s, 1 / loss_rate) < work_s) {
    s.interval_s = DalyInterval_s(in.checkpoint_write_s, 1 / loss_rate);
    *source = IntervalSource::kDaly;
  } else {
    s.interval_s = work_s;
    *source = IntervalSource::kNone;
  }
  return s;
}

JobChain ChainOf(const JobInputs& in, double run_s) {
  JobChain c;
  if (!(run_s > in.max_job_s)) return c;
  c.jobs = static_cast<int64_t>(std::ceil(run_s / in.max_job_s));
  const double later = static_cast<double>(c.jobs - 1);
  c.reload_s = later * in.checkpoint_read_s.value_or(in.checkpoint_write_s);
  if (in.warm_pool_keep_alive_s > 0) {  // job j (j >= 1) starts after j full jobs of the pool
    c.warm_starts = std::min<int64_t>(
        c.jobs - 1, static_cast<int64_t>(std::ceil(kMaxWarmPoolLife_s / in.max_job_s)) - 1);
  }
  c.provisioning_s = (later - static_cast<double>(c.warm_starts)) * in.provisioning_s;
  return c;
}

Expected<CapacityBlockJob> RunInBlocks(const JobInputs& in, double run_s) {
  CapacityBlockInputs b = *in.blocks;
  b.price_usd_hr = in.price_usd_hr;
  b.setup_s = in.provisioning_s + in.download_s;
  b.training_s = run_s - in.download_s;
  return PlanCapacityBlocks(b);
}

double CostOf_usd(const JobInputs& in, double billed_instance_s) {
  if (!in.price_usd_hr) return std::numeric_limits<double>::infinity();
  const double covered = std::min(billed_instance_s, in.committed_instance_hours * kSecondsPerHour);
  return (*in.price_usd_hr * covered +
          in.beyond_usd_hr.value_or(0) * (billed_instance_s - covered)) /
         kSecondsPerHour;
}

Expected<JobEstimate> EstimateJob(const JobInputs& given) {
  if (Status st = CheckJobInputs(given); !st.ok()) return st;
  if (given.pricing == Pricing::kSpotElastic) {
    JobEstimate e;
    if (Status st = EstimateElastic(given, &e); !st.ok()) return st;
    return e;
  }
  JobInputs in = given;  // with the blocks booked
  Expected<Plan> plan = MakePlan(in);
  if (!plan.ok()) return plan.status();
  const JobShape& shape = plan->shape;
  JobEstimate e;
  e.mtbi_s = shape.mtbi_s;
  e.checkpoint_interval_s = plan->interval_s;
  e.interval_source = plan->source;
  e.checkpoints = plan->checkpoints;
  e.expected_interruptions = ExpectedInterruptions(shape);
  e.expected_start_wait_s = MeanCapacityWait_s(shape);
  e.expected_wall_s = e.expected_start_wait_s + in.provisioning_s + ExpectedRun_s(shape);
  if (std::isfinite(in.max_job_s)) {
    const JobChain chain = ChainOf(in, ExpectedRun_s(shape));
    e.jobs = chain.jobs;
    e.expected_wall_s += chain.reload_s + chain.provisioning_s;
  }
  if (Status st = CheckFinishes(in, e.expected_wall_s, shape.mtbi_s); !st.ok()) return st;
  if (in.blocks) {
    if (Status st = BookBlocks(shape, &in, &e); !st.ok()) return st;
  }

  const double affordable = kMaxSimulatedInterruptions / std::max(1.0, e.expected_interruptions);
  const int trials = affordable >= in.trials ? in.trials : static_cast<int>(affordable);
  if (trials >= std::min(in.trials, kMinTrials)) {
    FillFromSamples(in, Simulate(in, shape, trials, false), &e);
    if (!in.work_factors.empty()) {
      // Percentiles and spread with the model's error; the means stay the prediction's.
      JobEstimate with_error;
      FillFromSamples(in, Simulate(in, shape, trials, true), &with_error);
      WithPercentiles(with_error.wall_s, &e.wall_s);
      if (e.cost_usd) WithPercentiles(*with_error.cost_usd, &*e.cost_usd);
      // How often the fallback happens is a risk, like the percentiles: with the error.
      e.fallback_share = with_error.fallback_share;
      e.mean_fallback_at_s = with_error.mean_fallback_at_s;
    }
  } else {
    FillFromClosedForm(in, shape, &e);
  }
  if (in.fallback_deadline_s && !e.monte_carlo_skipped) {  // no closed form: the means
    e.expected_wall_s = e.wall_s.mean;
    e.expected_interruptions = e.mean_interruptions;
  }
  if (in.pricing == Pricing::kSagemakerSpot) {
    e.max_wait_s = CeilHour_s(e.wall_s.p99);
    e.max_runtime_s = CeilHour_s(e.wall_s.p99 - in.provisioning_s);
  }
  return e;
}

}  // namespace trainsim::planner
