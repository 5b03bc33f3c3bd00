// The plan JSON (docs/formats.md#plan): what `trainsim plan --out` writes and
// `trainsim launch` reads.
#include <cmath>

#include "core/strategy.h"
#include "core/units.h"
#include "planner/job/pricing.h"
#include "planner/search/plan.h"
#include "planner/search/reasons.h"

namespace trainsim::planner {
namespace {

using nlohmann::json;

json OrNull(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json CandidateJson(const SearchSpace& space, const Candidate& c) {
  json out{{"instance", space.instances[c.instance]->name},
           {"nodes", c.nodes},
           {"gpus", c.nodes * space.instances[c.instance]->gpus},
           {"tp", c.tp},
           {"pp", c.pp},
           {"dp", c.dp},
           {"zero_stage", c.zero_stage},
           {"shard_group", c.shard_group},
           {"ep", c.ep},
           {"micro_batch", c.micro_batch},
           {"recompute", ToString(c.recompute)},
           {"schedule", ToString(c.schedule)},
           {"virtual_stages", c.virtual_stages}};
  for (int i = 0; i < kStrategyCount; ++i) out[std::string(kStrategies[i]->name)] = c.degrees[i];
  return out;
}

json SpreadJson(const Spread& s) {
  return json{{"mean", s.mean}, {"stddev", s.stddev}, {"p10", s.p10},
              {"p50", s.p50},   {"p90", s.p90},       {"p99", s.p99}};
}

const char* IntervalName(IntervalSource s) {
  switch (s) {
    case IntervalSource::kNone:
      return "none";
    case IntervalSource::kDaly:
      return "daly";
    case IntervalSource::kOverride:
      return "search.checkpoint_interval_s";
  }
  return "?";
}

// Reserved blocks: those booked for the prediction; null for other options.
json BlocksJson(const JobEstimate& j, const JobInputs& in) {
  if (!j.blocks || !in.blocks) return nullptr;
  return json{{"kind", in.blocks->rules.name},
              {"days", j.blocks->block_days},
              {"instances_per_block", j.blocks->block_sizes},
              {"reserved_instance_hours", j.blocks->reserved_instance_hours},
              {"idle_instance_hours", j.blocks->idle_instance_hours},
              {"gap_s", in.blocks->gap_s}};
}

json CommitmentJson(const PricedJob& p) {
  if (!p.commitment) return nullptr;
  const CommitmentCost& c = *p.commitment;
  return json{{"term_years", CommitmentYears(p.pricing)},
              {"term_instance_hours", c.term_instance_hours},
              {"job_share", c.job_share},
              {"covered_instance_hours", c.covered_instance_hours},
              {"beyond_instance_hours", c.beyond_instance_hours},
              {"job_cost_usd", c.job_cost_usd},
              {"rest_cost_usd", c.rest_cost_usd},
              {"total_cost_usd", c.total_cost_usd},
              {"saving_vs_on_demand", c.saving}};
}

json PricedJson(const PricedJob& p) {
  const JobEstimate& j = p.job;
  const JobInputs& in = p.inputs;
  return json{
      {"pricing", ToString(p.pricing)},
      {"price_usd_per_instance_hour", OrNull(p.price_usd_hr)},
      {"expected_hours", j.expected_wall_s / kSecondsPerHour},
      {"hours",
       SpreadJson(Spread{j.wall_s.mean / kSecondsPerHour, j.wall_s.stddev / kSecondsPerHour,
                         j.wall_s.p10 / kSecondsPerHour, j.wall_s.p50 / kSecondsPerHour,
                         j.wall_s.p90 / kSecondsPerHour, j.wall_s.p99 / kSecondsPerHour})},
      {"cost_usd", j.cost_usd ? SpreadJson(*j.cost_usd) : json(nullptr)},
      {"billed_instance_hours", j.mean_billed_instance_s / kSecondsPerHour},
      {"interruptions_per_instance_hour", in.interruptions_per_instance_hour},
      {"interruption_rate_is_lower_bound", p.interruption_rate_lower_bound},
      {"reclaim_wave_nodes", in.reclaim_wave_nodes},
      {"capacity_chance_per_request",
       in.capacity_chance < 1 ? json(in.capacity_chance) : json(nullptr)},
      {"capacity_retry_s", in.capacity_chance < 1 ? json(in.capacity_retry_s) : json(nullptr)},
      {"expected_start_wait_s", j.expected_start_wait_s},
      {"sagemaker_jobs", j.jobs},
      {"warm_pool_keep_alive_s", in.warm_pool_keep_alive_s},
      {"fallback_share", OrNull(j.fallback_share)},
      {"mean_fallback_at_hours",
       j.mean_fallback_at_s ? json(*j.mean_fallback_at_s / kSecondsPerHour) : json(nullptr)},
      {"elastic", in.elastic_groups == 0 ? json(nullptr)
                                         : json{{"replica_groups", in.elastic_groups},
                                                {"loss_pause_s", in.elastic_loss_pause_s},
                                                {"join_pause_s", in.elastic_join_pause_s},
                                                {"live_share", OrNull(j.live_share)},
                                                {"total_losses", OrNull(j.total_losses)}}},
      {"expected_interruptions", j.expected_interruptions},
      {"checkpoint_interval_s", j.checkpoint_interval_s},
      {"checkpoint_interval_rule", IntervalName(j.interval_source)},
      {"checkpoints", j.checkpoints},
      {"checkpoint_write_s", in.checkpoint_write_s},
      {"checkpoint_read_s", in.checkpoint_read_s.value_or(in.checkpoint_write_s)},
      {"restart_s", in.restart_s},
      {"provisioning_s", in.provisioning_s},
      {"download_s", in.download_s},
      {"work_hours", in.work_s / kSecondsPerHour},
      {"monte_carlo_trials", j.trials_run},
      {"max_wait_s", OrNull(j.max_wait_s)},
      {"max_runtime_s", OrNull(j.max_runtime_s)},
      {"blocks", BlocksJson(j, in)},
      {"commitment", CommitmentJson(p)},
      {"meets_deadline", p.meets_deadline},
      {"meets_budget", p.meets_budget}};
}

json BreakdownJson(const sim::Breakdown& b) {
  json out{{"compute_s", b.compute_s},
           {"recompute_s", b.recompute_s},
           {"optimizer_s", b.optimizer_s},
           {"tp_comm_s", b.tp_comm_s},
           {"ep_comm_s", b.ep_comm_s},
           {"dp_comm_exposed_s", b.dp_comm_exposed_s},
           {"weight_gather_exposed_s", b.weight_gather_exposed_s},
           {"pp_comm_exposed_s", b.pp_comm_exposed_s},
           {"pipeline_bubble_s", b.pipeline_bubble_s},
           {"data_loading_exposed_s", b.data_wait_s}};
  for (int i = 0; i < kStrategyCount; ++i) {  // "cp_comm_s"
    out[std::string(kStrategies[i]->name) + "_comm_s"] = b.strategy_comm_s[i];
  }
  return out;
}

json ConfirmedJson(const SearchSpace& space, const ConfirmedCandidate& c) {
  const sim::SimulationResult& r = c.simulated;
  json priced = json::array();
  for (const PricedJob& p : c.priced) priced.push_back(PricedJson(p));
  return json{{"config", CandidateJson(space, c.candidate)},
              {"description", Describe(space, c.candidate)},
              {"estimated_step_s", c.estimate.step_s},
              {"simulated_step_s", r.simulated ? json(r.step.step_time_s) : json(nullptr)},
              {"estimator_error", r.simulated ? json(c.estimator_error) : json(nullptr)},
              {"samples_per_s", r.samples_per_s},
              {"tokens_per_s", r.tokens_per_s},
              {"mfu", r.mfu},
              {"memory_per_gpu_gib", r.memory.total_bytes / kGiB},
              {"memory_capacity_gib", r.memory.capacity_bytes / kGiB},
              {"fits", r.memory.fits},
              {"breakdown", BreakdownJson(r.step.breakdown)},
              {"steps", c.steps},
              {"band", c.band && r.simulated ? sim::BandJson(*c.band, r) : json(nullptr)},
              {"pricing", priced}};
}

json PrunedJson(const PruneTally& t) {
  json out = json::object();
  for (const auto& [reason, e] : t) out[reason] = {{"count", e.count}, {"example", e.example}};
  return out;
}

json SearchJson(const SearchConfig& q, const Plan& p) {
  json instances = json::array(), pricing = json::array();
  for (const InstanceType* t : p.space.instances) instances.push_back(t->name);
  for (Pricing x : p.space.pricing) pricing.push_back(ToString(x));
  return json{{"instances", instances},
              {"nodes", {{"min", p.space.min_nodes}, {"max", p.space.max_nodes}}},
              {"pricing", pricing},
              {"objective", ToString(q.objective)},
              {"time_weight", q.time_weight},
              {"budget_usd", OrNull(q.budget_usd)},
              {"deadline_hours", OrNull(q.deadline_hours)},
              {"confirm_top", q.confirm_top},
              {"prefer_validated", q.prefer_validated},
              {"trials", q.trials},
              {"seed", q.seed}};
}

json RecommendationJson(const Plan& p, int confirmed, int priced, bool meets_constraints,
                        const std::vector<std::string>& reasons) {
  const ConfirmedCandidate& c = p.confirmed[confirmed];
  return json{
      {"candidate", confirmed},
      {"config", CandidateJson(p.space, c.candidate)},
      {"pricing", ToString(c.priced[priced].pricing)},
      {"meets_constraints", meets_constraints},
      {"preferred_over_candidate",
       confirmed == p.best && p.preferred_over >= 0 ? json(p.preferred_over) : json(nullptr)},
      {"reasons", reasons}};
}

}  // namespace

json ToJson(const PlanningScenario& planning, const Plan& p, const json& scenario_doc) {
  const Scenario& s = planning.scenario;
  json confirmed = json::array(), pareto = json::array(), scaling = json::array();
  for (const ConfirmedCandidate& c : p.confirmed) confirmed.push_back(ConfirmedJson(p.space, c));
  for (auto [i, j] : p.pareto) {
    const PricedJob& pj = p.confirmed[i].priced[j];
    pareto.push_back(
        {{"candidate", i},
         {"pricing", ToString(pj.pricing)},
         {"expected_hours", pj.job.expected_wall_s / kSecondsPerHour},
         {"expected_cost_usd", pj.job.cost_usd ? json(pj.job.cost_usd->mean) : json(nullptr)}});
  }
  for (const ScalingPoint& sp : p.scaling) {
    const bool banded = Judged(sp.band);
    scaling.push_back(
        {{"nodes", sp.nodes},
         {"samples_per_s", sp.samples_per_s},
         {"simulated", sp.simulated},
         {"estimated_samples_per_s", sp.estimated_samples_per_s},
         {"samples_per_s_band",
          banded ? json::array({sp.samples_per_s * sp.band->lo, sp.samples_per_s * sp.band->hi})
                 : json(nullptr)},
         {"band_note", banded && !sp.band->note.empty() ? json(sp.band->note) : json(nullptr)},
         {"efficiency", sp.efficiency},
         {"expected_hours", sp.expected_hours},
         {"expected_cost_usd", OrNull(sp.expected_cost_usd)}});
  }
  json recommendation = nullptr;
  if (p.best >= 0) {
    recommendation = RecommendationJson(p, p.best, p.best_priced, p.meets_constraints, p.reasons);
  }
  return json{{"version", 1},
              {"kind", "trainsim-plan"},
              {"scenario", s.name},
              {"model", s.model.name},
              {"search", SearchJson(planning.search, p)},
              {"estimated_candidates", p.estimated},
              {"pruned", PrunedJson(p.pruned)},
              {"recommendation", recommendation},
              {"candidates", confirmed},
              {"pareto", pareto},
              {"scaling",
               {{"points", scaling},
                {"stops_paying_after_nodes",
                 p.scaling_stops_paying ? json(p.scaling_stops_paying) : json(nullptr)}}},
              {"assumptions", p.assumptions},
              {"scenario_json", scenario_doc}};
}

Expected<json> ToJsonChoosing(const PlanningScenario& s, const Plan& p, const json& scenario_doc,
                              int confirmed, int priced) {
  if (confirmed < 0 || confirmed >= static_cast<int>(p.confirmed.size())) {
    return Status::InvalidInput("candidate " + std::to_string(confirmed) + " is not in the plan (" +
                                std::to_string(p.confirmed.size()) + " confirmed)");
  }
  const std::vector<PricedJob>& options = p.confirmed[confirmed].priced;
  if (priced < 0 || priced >= static_cast<int>(options.size())) {
    return Status::InvalidInput("candidate " + std::to_string(confirmed) +
                                " has no pricing option " + std::to_string(priced) + " (" +
                                std::to_string(options.size()) + " priced)");
  }
  json out = ToJson(s, p, scenario_doc);
  if (confirmed == p.best && priced == p.best_priced) return out;
  const PricedJob& chosen = options[priced];
  out["recommendation"] =
      RecommendationJson(p, confirmed, priced, chosen.meets_deadline && chosen.meets_budget, {});
  return out;
}

}  // namespace trainsim::planner
