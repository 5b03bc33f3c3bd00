#include "planner/search/reasons.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/strategy.h"
#include "core/units.h"
#include "planner/job/pricing.h"
#include "planner/job/spot_capacity.h"
#include "sim/memory_model.h"

namespace trainsim::planner {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string Gib(double bytes) { return Fmt("%.1f GiB", bytes / kGiB); }
std::string Hours(double s) { return Fmt(s < 360000 ? "%.1f h" : "%.0f h", s / kSecondsPerHour); }
std::string Usd(double v) { return Fmt(v < 1e4 ? "$%.0f" : "$%.3g", v); }
std::string Pct(double f) { return Fmt("%.0f%%", 100 * f); }

const char* LinkName(IntraTopology t) {
  switch (t) {
    case IntraTopology::kNvswitch:
      return "NVSwitch";
    case IntraTopology::kNvlinkCubeMesh:
      return "the NVLink cube mesh";
    case IntraTopology::kPcie:
    case IntraTopology::kSingle:
      return "PCIe";
  }
  return "?";
}

// A layout's shape: what the usual practice chooses (which never shards in
// hybrid groups: `shard` 0, the whole DP group).
struct Shape {
  int tp = 1, pp = 1, zero = 0, shard = 0;
  bool operator==(const Shape&) const = default;
};

std::string Name(const Shape& s) {
  const std::string hybrid = s.shard > 0 ? " in hybrid groups of " + std::to_string(s.shard) : "";
  if (s.tp == 1 && s.pp == 1) {
    return s.zero == 0 ? "plain data parallelism"
                       : "sharded data parallelism (ZeRO-" + std::to_string(s.zero) + hybrid + ")";
  }
  return "tp " + std::to_string(s.tp) + ", pp " + std::to_string(s.pp) + ", ZeRO-" +
         std::to_string(s.zero) + hybrid;
}

// The practice's shape on the chosen instance and node count: plain DP if it
// fits, else the first ZeRO stage that fits, else tensor parallelism over the
// whole node (the largest tp the space allows there) and the fewest pipeline
// stages that fit. Memory is checked with the chosen micro batch and recompute.
std::optional<Shape> PracticeShape(const Scenario& chosen, const SearchSpace& space) {
  Scenario s = chosen;
  const int gpus = s.total_gpus();
  // The chosen strategies (cp) stay; experts on every GPU (ep 1), as the usual practice.
  const int split = SlotSplit(s.parallel);
  s.parallel.ep = 1;
  auto fits = [&](int tp, int pp, int zero) {
    if (gpus % (tp * pp * split)) return false;
    s.parallel.tp = tp, s.parallel.pp = pp, s.parallel.dp = gpus / (tp * pp * split);
    s.parallel.zero_stage = zero;
    s.parallel.schedule = Schedule::k1F1B, s.parallel.virtual_stages = 1;
    if (zero > 0 && s.replicas() == 1) return false;
    if (s.training.global_batch % (static_cast<int64_t>(s.parallel.dp) * s.training.micro_batch))
      return false;
    return sim::ComputeMemory(s).fits;
  };
  for (int zero = 0; zero <= 3; ++zero) {
    if (fits(1, 1, zero)) return Shape{1, 1, zero};
  }
  int tp = 1;
  for (int t : space.tp) {
    if (t <= s.instance.gpus && s.model.heads % t == 0) tp = std::max(tp, t);
  }
  for (int pp : space.pp) {
    if (fits(tp, pp, pp > 1 ? 1 : 0) || (pp == 1 && fits(tp, 1, 1))) {
      return Shape{tp, pp, pp > 1 || !fits(tp, 1, 0) ? 1 : 0};
    }
  }
  return std::nullopt;
}

// Best estimated job figures of candidates on the chosen instance and nodes
// with the given shape, under the chosen pricing slot.
std::optional<std::pair<double, double>> BestWithShape(const std::vector<EstimatedCandidate>& all,
                                                       const Candidate& chosen, const Shape& shape,
                                                       int slot) {
  std::optional<std::pair<double, double>> best;
  for (const EstimatedCandidate& e : all) {
    const Candidate& c = e.c;
    if (c.instance != chosen.instance || c.nodes != chosen.nodes || c.tp != shape.tp ||
        c.pp != shape.pp || c.zero_stage != shape.zero || c.shard_group != shape.shard ||
        !std::isfinite(e.time_s[slot])) {
      continue;
    }
    if (!best || e.time_s[slot] < best->first) best = {{e.time_s[slot], e.cost_usd[slot]}};
  }
  return best;
}

// Best simulated job figures (expected time, cost) of confirmed candidates on the chosen
// instance and nodes with the given shape, under `pricing`.
std::optional<std::pair<double, double>> BestConfirmedWithShape(const Plan& plan,
                                                                const Candidate& chosen,
                                                                const Shape& shape,
                                                                Pricing pricing) {
  std::optional<std::pair<double, double>> best;
  for (const ConfirmedCandidate& cc : plan.confirmed) {
    const Candidate& c = cc.candidate;
    if (c.instance != chosen.instance || c.nodes != chosen.nodes || c.tp != shape.tp ||
        c.pp != shape.pp || c.zero_stage != shape.zero || c.shard_group != shape.shard) {
      continue;
    }
    for (const PricedJob& p : cc.priced) {
      if (p.pricing != pricing) continue;
      const double cost = p.job.cost_usd ? p.job.cost_usd->mean : NAN;
      if (!best || p.job.expected_wall_s < best->first) best = {{p.job.expected_wall_s, cost}};
    }
  }
  return best;
}

// How `theirs` compares with `ours` (two shapes on the chosen instance and nodes): both
// simulated when both are among the confirmed candidates, else both estimated. "takes 6%
// longer and costs 6% more by the simulator", or nullopt when either shape has no figure.
std::optional<std::string> Compare(const Plan& plan, const Candidate& chosen, const Shape& theirs,
                                   const Shape& ours, Pricing pricing, int slot,
                                   const std::vector<EstimatedCandidate>& all) {
  auto t = BestConfirmedWithShape(plan, chosen, theirs, pricing);
  auto o = BestConfirmedWithShape(plan, chosen, ours, pricing);
  const char* by = "the simulator";
  if (!t || !o) {
    t = BestWithShape(all, chosen, theirs, slot);
    o = BestWithShape(all, chosen, ours, slot);
    by = "the estimator";
  }
  if (!t || !o) return std::nullopt;
  const double time = t->first / o->first - 1;
  std::string out = "takes " + Pct(std::fabs(time)) + (time >= 0 ? " longer" : " less time");
  if (std::isfinite(t->second) && std::isfinite(o->second)) {
    const double cost = t->second / o->second - 1;
    out += " and costs " + Pct(std::fabs(cost)) + (cost >= 0 ? " more" : " less");
  }
  return out + " by " + by;
}

int Slot(const SearchSpace& space, Pricing p) {
  for (size_t i = 0; i < space.pricing.size(); ++i) {
    if (space.pricing[i] == p) return static_cast<int>(i);
  }
  return 0;
}

std::string Headline(const Plan& plan, const ConfirmedCandidate& best, const PricedJob& p) {
  const JobEstimate& j = p.job;
  std::string out = "Run " + Describe(plan.space, best.candidate) + ", priced " +
                    ToString(p.pricing) + ": expected " + Hours(j.expected_wall_s) + " (P90 " +
                    Hours(j.wall_s.p90) + ")";
  if (j.cost_usd) out += " and " + Usd(j.cost_usd->mean) + " (P90 " + Usd(j.cost_usd->p90) + ")";
  return out + ".";
}

std::string MemoryReason(const Scenario& s, const ConfirmedCandidate& best) {
  const double params = ParameterCount(s.model);
  const double state = params * (sim::CheckpointBytesPerParam(s) +
                                 sim::ActivationBytesPerElem(s.training.precision));
  const sim::MemoryBreakdown& m = best.simulated.memory;
  const std::string count =
      params >= 1e9 ? Fmt("%.1f billion", params / 1e9) : Fmt("%.1f million", params / 1e6);
  return "The model has " + count +
         " parameters; their weights, gradients and optimizer state take " + Gib(state) +
         " in all, against " + Gib(m.capacity_bytes) + " per GPU. This layout needs " +
         Gib(m.total_bytes) + " per GPU (activations " + Gib(m.activations_bytes) + ").";
}

std::string PracticeReason(const Scenario& chosen, const Plan& plan, const ConfirmedCandidate& best,
                           int slot, const std::vector<EstimatedCandidate>& all) {
  const Candidate& c = best.candidate;
  const std::optional<Shape> practice = PracticeShape(chosen, plan.space);
  const Shape mine{c.tp, c.pp, c.zero_stage, c.shard_group};
  if (!practice) {
    return "No layout of the usual practice fits on " + std::to_string(c.nodes) + " nodes; " +
           Name(mine) + " does.";
  }
  if (*practice == mine) {
    return "This follows the usual practice: " + Name(mine) +
           (mine.tp == 1 && mine.pp == 1 ? " while the model fits"
                                         : ", the least model parallelism that fits") +
           ".";
  }
  const std::optional<std::string> compared =
      Compare(plan, c, *practice, mine, best.priced[best.best_priced].pricing, slot, all);
  if (!compared) {
    return "The usual practice would choose " + Name(*practice) +
           "; the planner found no priced candidate of that shape here.";
  }
  return "The usual practice would choose " + Name(*practice) + "; it " + *compared + " than " +
         Name(mine) + ".";
}

// " over hybrid groups of 8 GPUs, ..." for a candidate with a shard group.
std::string HybridText(const Scenario& s, const Candidate& c) {
  const int g = c.shard_group, ranks_per_node = std::max(1, s.instance.gpus / c.tp);
  const std::string what = c.zero_stage == 3 ? "weight gathers and gradient reduce-scatters"
                                             : "gradient reduce-scatters and weight gathers";
  std::string out = " over hybrid groups of " + std::to_string(g) + " data-parallel ranks";
  if (g <= ranks_per_node && ranks_per_node % g == 0) {
    out += " inside each node, which keeps its " + what + " on " + LinkName(s.instance.topology);
  } else {
    out += " across " + std::to_string((g + ranks_per_node - 1) / ranks_per_node) +
           " nodes each, which keeps its " + what + " off the other nodes";
  }
  return out + "; the " + std::to_string(c.dp / g) +
         " groups hold copies of it and all-reduce each gradient shard among themselves. ";
}

// With hybrid sharding: how it compares, by the estimator, with sharding over the whole DP
// group of the same layout (unless the practice reason made that comparison already), and the
// measurements behind it.
std::string HybridReason(const Scenario& chosen, const Plan& plan, const ConfirmedCandidate& best,
                         int slot, const std::vector<EstimatedCandidate>& all) {
  const Candidate& c = best.candidate;
  if (c.shard_group == 0) return "";
  const Shape whole{c.tp, c.pp, c.zero_stage, 0};
  std::string out;
  if (PracticeShape(chosen, plan.space) != whole) {
    const std::optional<std::string> compared =
        Compare(plan, c, whole, Shape{c.tp, c.pp, c.zero_stage, c.shard_group},
                best.priced[best.best_priced].pricing, slot, all);
    out = "ZeRO-" + std::to_string(c.zero_stage) + " over all " + std::to_string(c.dp) +
          " data-parallel ranks " +
          (compared ? *compared + " than hybrid groups of " + std::to_string(c.shard_group) + ". "
                    : "does not fit or was not searched here. ");
  }
  return out +
         "Hybrid sharding has measured support: FSDP hybrid sharding within a node on 96-128 "
         "A100 and H100 GPUs (fms-fsdp; docs/validation.md).";
}

// ZeRO-3: whose implementation the figures assume (parallel.zero_impl). Where the corpus never
// measured it at this scale, the band reason says so (the band key carries the implementation).
std::string ZeroReason(const Scenario& s, const ConfirmedCandidate& best) {
  if (best.candidate.zero_stage != 3) return "";
  const ZeroImpl impl = s.parallel.zero_impl;
  const char* name = impl == ZeroImpl::kFsdp1       ? "PyTorch FSDP (FSDP1)"
                     : impl == ZeroImpl::kFsdp2     ? "PyTorch FSDP2"
                     : impl == ZeroImpl::kDeepSpeed ? "DeepSpeed ZeRO-3"
                                                    : "JAX/XLA's sharding";
  return std::string("Its ZeRO-3 figures assume ") + name +
         ", as that framework issues its gathers and reduce-scatters (parallel.zero_impl \"" +
         ToString(impl) +
         "\"; set it to the framework that will run: fsdp1, fsdp2, deepspeed or xla).";
}

// A mixture of experts: how the recommendation places its experts, where its all-to-alls
// run, and what they cost of the step.
std::string ExpertReason(const Scenario& chosen, const ConfirmedCandidate& best) {
  const ModelSpec& m = chosen.model;
  if (m.experts == 0) return "";
  const int ep = chosen.parallel.ep, gpn = chosen.instance.gpus;
  if (ep == 1) {
    return "Every GPU holds all " + std::to_string(m.experts) +
           " experts of each MoE layer (expert parallel 1): no all-to-all, and the experts' "
           "weights and optimizer state are replicated over the data-parallel group.";
  }
  // EP groups are ep consecutive DP ranks, tp ranks apart.
  const int span = std::max(1, ep * chosen.parallel.tp / gpn);
  const sim::StepResult& step = best.simulated.step;
  std::string out = "Expert parallel " + std::to_string(ep) + " splits the " +
                    std::to_string(m.experts) + " experts of each MoE layer " + std::to_string(ep) +
                    " ways (" + std::to_string(m.experts / ep) + " per GPU), and its all-to-alls ";
  out += span == 1 ? std::string("stay inside a node on ") + LinkName(chosen.instance.topology)
                   : "cross " + std::to_string(span) + " nodes over the network";
  return out + ": " + Pct(step.breakdown.ep_comm_s / step.step_time_s) +
         " of the step (router load " + Fmt("%.2g", chosen.training.moe_imbalance) +
         " x even, training.moe_imbalance).";
}

// The recommendation's error band, and whether the next candidates' bands overlap its own
// (then the corpus cannot tell them apart). docs/validation.md section 0.7.
std::string BandReason(const Plan& plan, const ConfirmedCandidate& best) {
  if (!Judged(best.band)) return "";
  const Band& b = *best.band;
  const double step = best.simulated.step.step_time_s;
  auto range = [](const ConfirmedCandidate& c) {
    const double t = c.priced[c.best_priced].job.expected_wall_s;
    return std::pair<double, double>{t / c.band->hi, t / c.band->lo};
  };
  std::string out = "Error band: " + Pct(b.coverage) + " of the published runs like this one (" +
                    b.family + ", " + std::to_string(b.points) + " measurements) ran between " +
                    Fmt("%.3g", step / b.hi) + " and " + Fmt("%.3g s", step / b.lo) +
                    " per step against the simulated " + Fmt("%.3g s", step) +
                    (b.note.empty() ? "" : " (wider: " + b.note + ")") +
                    "; the P90 times and costs include that error.";
  const auto mine = range(best);
  int overlapping = 0;
  for (const ConfirmedCandidate& c : plan.confirmed) {
    if (&c == &best || !Judged(c.band) || c.best_priced < 0) continue;
    const auto theirs = range(c);
    if (theirs.first <= mine.second && mine.first <= theirs.second) ++overlapping;
  }
  if (overlapping > 0) {
    out += " " + std::to_string(overlapping) + " of the other " +
           std::to_string(plan.confirmed.size() - 1) +
           " confirmed candidates have job-time bands that overlap this one's: the corpus cannot "
           "tell them apart.";
  }
  if (plan.preferred_over >= 0) {
    // The band's width as a share of the step: (1 / lo - 1 / hi).
    auto span = [](const Band& x) { return Pct(1 / x.lo - 1 / x.hi); };
    const ConfirmedCandidate& other = plan.confirmed[plan.preferred_over];
    const PricedJob& o = other.priced[other.best_priced];
    const PricedJob& mine_p = best.priced[best.best_priced];
    out += " The prediction alone ranks " + Describe(plan.space, other.candidate) + " first (" +
           ToString(o.pricing) + Fmt(" %.0f h", o.job.expected_wall_s / kSecondsPerHour) +
           (o.job.cost_usd ? Fmt(", $%.0f", o.job.cost_usd->mean) : "") + " against " +
           ToString(mine_p.pricing) + Fmt(" %.0f h", mine_p.job.expected_wall_s / kSecondsPerHour) +
           (mine_p.job.cost_usd ? Fmt(", $%.0f", mine_p.job.cost_usd->mean) : "") +
           "); their bands overlap, and this layout's is narrower (" + span(b) +
           " of the step against " + span(*other.band) + ", " + other.band->family +
           ") and ends no later, so it is recommended (search.prefer_validated: false ranks by "
           "the prediction alone).";
  }
  return out;
}

std::string ParallelReason(const Scenario& s, const ConfirmedCandidate& best) {
  const Candidate& c = best.candidate;
  const sim::Breakdown& b = best.simulated.step.breakdown;
  const double t = best.simulated.step.step_time_s;
  std::string out;
  if (c.tp > 1) {
    out += "Tensor parallel " + std::to_string(c.tp) + " stays inside each node, over " +
           LinkName(s.instance.topology) + " (" + Pct(b.tp_comm_s / t) + " of the step). ";
  }
  if (c.pp > 1) {
    out += "Pipeline parallel " + std::to_string(c.pp) + " splits the layers; its bubble is " +
           Pct(b.pipeline_bubble_s / t) + " of the step. ";
  }
  if (c.zero_stage > 0) {
    out += "ZeRO-" + std::to_string(c.zero_stage) + " shards the " +
           (c.zero_stage == 1   ? "optimizer state"
            : c.zero_stage == 2 ? "optimizer state and "
                                  "gradients"
                                : "whole model state") +
           (c.shard_group > 0 ? HybridText(s, c) : " over dp " + std::to_string(c.dp) + ". ");
  }
  // Each strategy's exchanges after EP's ("exposed context parallel exchanges").
  std::vector<std::pair<std::string, double>> overheads = {
      {"tensor-parallel communication", b.tp_comm_s}, {"expert-parallel all-to-alls", b.ep_comm_s}};
  for (int i = 0; i < kStrategyCount; ++i) {
    overheads.push_back(
        {"exposed " + std::string(kStrategies[i]->title) + " exchanges", b.strategy_comm_s[i]});
  }
  overheads.insert(overheads.end(), {{"the pipeline bubble", b.pipeline_bubble_s},
                                     {"exposed gradient reduction", b.dp_comm_exposed_s},
                                     {"exposed weight gathers", b.weight_gather_exposed_s},
                                     {"exposed pipeline messages", b.pp_comm_exposed_s},
                                     {"recompute", b.recompute_s},
                                     {"the optimizer step", b.optimizer_s},
                                     {"waiting for input", b.data_wait_s}});
  auto worst = std::max_element(overheads.begin(), overheads.end(),
                                [](auto& x, auto& y) { return x.second < y.second; });
  out += "The simulated step is " + Fmt("%.3f s", t) + ", " + Pct(b.compute_s / t) +
         " compute (MFU " + Pct(best.simulated.mfu) + "); the largest overhead is " + worst->first +
         " (" + Pct(worst->second / t) + ").";
  return out;
}

std::string InstanceReason(const Plan& plan, const ConfirmedCandidate& best, int slot,
                           const std::vector<EstimatedCandidate>& all, double total_flops) {
  std::map<int, double> cheapest;  // instance -> best estimated cost under the chosen pricing
  for (const EstimatedCandidate& e : all) {
    if (!std::isfinite(e.cost_usd[slot])) continue;
    auto it = cheapest.find(e.c.instance);
    if (it == cheapest.end() || e.cost_usd[slot] < it->second)
      cheapest[e.c.instance] = e.cost_usd[slot];
  }
  std::vector<std::pair<double, int>> order;
  for (auto [i, cost] : cheapest) order.push_back({cost, i});
  std::sort(order.begin(), order.end());
  const InstanceType& t = *plan.space.instances[best.candidate.instance];
  std::string out = t.name + ": " + std::to_string(t.gpus) + " x " + t.gpu.name + ", " +
                    Fmt("%.0f", t.nics * t.nic_gbps) + " Gb/s " + (t.efa ? "EFA" : "Ethernet") +
                    " per node. Estimated cost per EFLOP of model work, best layout per type:";
  for (size_t k = 0; k < std::min<size_t>(order.size(), 4); ++k) {
    out += (k ? ", " : " ") + plan.space.instances[order[k].second]->name + " " +
           Fmt("$%.2f", order[k].first / (total_flops / 1e18));
  }
  return out + ".";
}

std::string PricingReason(const SearchConfig& q, const ConfirmedCandidate& best,
                          const PricedJob& p) {
  const PricedJob* on_demand = nullptr;
  const PricedJob* spot = nullptr;
  for (const PricedJob& j : best.priced) {
    if (j.pricing == Pricing::kOnDemand) on_demand = &j;
    if (j.pricing == Pricing::kSpot) spot = &j;
  }
  if (!q.spot_allowed) return "Spot was not allowed (search.spot_allowed is false).";
  if (!on_demand || !spot || !on_demand->job.cost_usd || !spot->job.cost_usd) {
    return std::string("Priced ") + ToString(p.pricing) +
           "; the catalog lacks a figure to compare spot with on-demand for this type.";
  }
  const JobEstimate &od = on_demand->job, &sp = spot->job;
  const double saving = 1 - sp.cost_usd->mean / od.cost_usd->mean;
  std::string out =
      "Spot would " + std::string(saving >= 0 ? "save " : "cost ") + Pct(std::fabs(saving)) +
      (saving >= 0 ? "" : " more") + " (" + Usd(sp.cost_usd->mean) + " against " +
      Usd(od.cost_usd->mean) + " on demand) with " + Fmt("%.1f", sp.expected_interruptions) +
      " expected interruptions" +
      (spot->interruption_rate_lower_bound ? " (at least: the \">20%\" bucket)" : "") +
      ", a checkpoint every " + Fmt("%.0f min", sp.checkpoint_interval_s / 60) +
      " (Daly), and a P90 time of " + Hours(sp.wall_s.p90) + " against " + Hours(od.wall_s.p90) +
      ".";
  if (p.pricing == Pricing::kOnDemand && saving > 0) {
    out += spot->meets_deadline ? " On-demand wins on the objective."
                                : " Spot misses the deadline, so on-demand it is.";
  }
  return out;
}

// A spot recommendation rests on capacity: say what the plan knows of it.
std::string CapacityReason(const SearchConfig& q, const Plan& plan, const ConfirmedCandidate& best,
                           const PricedJob& p) {
  if (p.pricing != Pricing::kSpot && p.pricing != Pricing::kSagemakerSpot) return "";
  const InstanceType& t = *plan.space.instances[best.candidate.instance];
  const std::string fleet = std::to_string(best.candidate.nodes) + " " + t.name + " spot at once";
  if (!q.spot_capacity_chance) {
    return fleet +
           ": no public evidence that this is obtainable (spot placement scores are per account "
           "and unpublished" +
           (t.spot_interruption_bucket ? "; the Spot Advisor puts its interruptions at " +
                                             *t.spot_interruption_bucket + " a month"
                                       : std::string()) +
           "). These figures take the fleet to start at once and every replacement to be back "
           "within the restart; give search.spot_capacity_chance to price the wait, or compare "
           "the reserved options.";
  }
  const double retry_s = q.spot_capacity_retry_s.value_or(kDefaultSpotRetry_s);
  Expected<SpotCapacityWait> w = WaitForSpotCapacity(*q.spot_capacity_chance, retry_s);
  if (!w.ok()) return "";
  return fleet + ", at a " + Pct(*q.spot_capacity_chance) + " chance per request every " +
         Fmt("%.0f s", retry_s) + ": " + Hours(w->mean_s) + " expected before the start (P90 " +
         Hours(w->p90_s) + "), and a wait again for each interruption's replacements" +
         (q.spot_reclaim_wave_nodes > 1
              ? " (" + std::to_string(q.spot_reclaim_wave_nodes) + " instances per reclaim)"
              : std::string()) +
         "; both are in the times above.";
}

// Spot with a deadline: what falling back to on-demand when the slack runs out gives.
std::string FallbackReason(const SearchConfig& q, const ConfirmedCandidate& best,
                           const PricedJob& p) {
  const PricedJob* fallback = nullptr;
  for (const PricedJob& j : best.priced) {
    if (j.pricing == Pricing::kSpotFallback) fallback = &j;
  }
  if (!fallback || !q.deadline_hours || !fallback->job.cost_usd || !fallback->job.fallback_share) {
    return "";
  }
  const JobEstimate& f = fallback->job;
  const std::string figures = Usd(f.cost_usd->mean) + " (P90 " + Usd(f.cost_usd->p90) +
                              ") and a P90 time of " + Hours(f.wall_s.p90) +
                              " against the deadline of " + Fmt("%.0f h", *q.deadline_hours) +
                              "; " + Pct(*f.fallback_share) + " of runs fall back";
  if (&p == fallback) {
    return "Spot until the deadline's slack runs out, then on demand (as Can't Be Late, NSDI'24, "
           "studies): " +
           figures + ".";
  }
  return "Falling back to on-demand when the deadline's slack runs out (spot-fallback) would "
         "cost " +
         figures + ".";
}

// Elastic spot beside stopping for each reclaim and beside on-demand, for the recommended
// layout; or why the layout cannot train elastically when the option was searched.
std::string ElasticReason(const Plan& plan, const Scenario& chosen, const ConfirmedCandidate& best,
                          const PricedJob& p) {
  const PricedJob *elastic = nullptr, *spot = nullptr, *on_demand = nullptr;
  for (const PricedJob& j : best.priced) {
    if (j.pricing == Pricing::kSpotElastic) elastic = &j;
    if (j.pricing == Pricing::kSpot) spot = &j;
    if (j.pricing == Pricing::kOnDemand) on_demand = &j;
  }
  const auto& searched = plan.space.pricing;
  if (!elastic) {
    if (std::find(searched.begin(), searched.end(), Pricing::kSpotElastic) == searched.end() ||
        !IsSpot(p.pricing)) {
      return "";
    }
    const ParallelConfig& par = chosen.parallel;
    std::string why = "a single reclaim takes every replica (each node holds a slice of all)";
    if (par.zero_stage > 0) {
      why = "ZeRO-" + std::to_string(par.zero_stage) +
            " shards the state over the replicas, so a reclaim loses part of it";
    } else if (par.ep > 1) {
      why = "its experts are split over the data-parallel ranks";
    } else if (const Strategy* st = FirstStrategy(par)) {
      why = st->not_elastic;
    } else if (par.dp < 2) {
      why = "it has one data-parallel replica";
    }
    return "spot-elastic (training on the replicas left after a reclaim) is not offered for this "
           "layout: " +
           why + ".";
  }
  if (!elastic->job.cost_usd || !elastic->job.live_share) return "";
  auto figures = [](const PricedJob& j) {
    return "P50 " + Hours(j.job.wall_s.p50) + ", P90 " + Hours(j.job.wall_s.p90) + ", " +
           (j.job.cost_usd ? Usd(j.job.cost_usd->mean) : std::string("no price"));
  };
  std::string out = &p == elastic ? "Training on the replicas left after a reclaim (as Parcae, "
                                    "NSDI'24): "
                                  : "Elastic spot (spot-elastic, as Parcae, NSDI'24) would take ";
  out += figures(*elastic) + ", with " + Fmt("%.2f%%", 100 * *elastic->job.live_share) +
         " of the replicas live on average";
  if (spot && spot != &p) out += "; stopping for each reclaim (spot): " + figures(*spot);
  if (on_demand && on_demand != &p) out += "; on demand: " + figures(*on_demand);
  return out + ".";
}

// The cheapest reserved or committed option of the recommendation, when it is not the one
// chosen: what it would cost against the chosen one, and its P90 time.
std::string ReservedReason(const ConfirmedCandidate& best, const PricedJob& p) {
  const PricedJob* other = nullptr;
  for (const PricedJob& j : best.priced) {
    const bool reserved = j.job.blocks || j.commitment;
    if (!reserved || j.pricing == p.pricing || !j.job.cost_usd) continue;
    if (!other || j.job.cost_usd->mean < other->job.cost_usd->mean) other = &j;
  }
  if (!other || !p.job.cost_usd) return "";
  const double ratio = other->job.cost_usd->mean / p.job.cost_usd->mean;
  return std::string("As ") + ToString(other->pricing) + " (" + DescribeTerms(*other) +
         ") it would cost " + Usd(other->job.cost_usd->mean) + " (P90 " +
         Usd(other->job.cost_usd->p90) + "), " + Fmt("%.2fx", ratio) + " the " +
         ToString(p.pricing) + " cost, with a P90 time of " + Hours(other->job.wall_s.p90) + ".";
}

std::string ConstraintReason(const SearchConfig& q, const Plan& plan, const PricedJob& p) {
  if (!q.deadline_hours && !q.budget_usd) return "";
  std::string what;
  if (q.deadline_hours) what += "the deadline of " + Fmt("%.0f h", *q.deadline_hours);
  if (q.budget_usd)
    what += std::string(what.empty() ? "" : " and ") + "the budget of " + Usd(*q.budget_usd);
  if (plan.meets_constraints) {
    return "It meets " + what + " in expectation" +
           (q.deadline_hours && p.job.wall_s.p90 > *q.deadline_hours * kSecondsPerHour
                ? " (but not at P90: " + Hours(p.job.wall_s.p90) + ")"
                : "") +
           ".";
  }
  return "No confirmed plan meets " + what + "; this is the closest by the objective.";
}

std::string EstimatorReason(const Plan& plan) {
  double sum = 0, worst = 0;
  int n = 0;
  for (const ConfirmedCandidate& c : plan.confirmed) {
    if (!c.simulated.simulated) continue;
    sum += std::fabs(c.estimator_error);
    worst = std::max(worst, std::fabs(c.estimator_error));
    ++n;
  }
  if (n == 0) return "";
  return "The fast estimator was within " + Fmt("%.1f%%", 100 * worst) +
         " of the simulator on the " + std::to_string(n) + " confirmed candidates (mean " +
         Fmt("%.1f%%", 100 * sum / n) + ").";
}

}  // namespace

std::vector<std::string> Reasons(const Scenario& base, const SearchConfig& q, const Plan& plan,
                                 const std::vector<EstimatedCandidate>& estimated) {
  const ConfirmedCandidate& best = plan.confirmed[plan.best];
  const PricedJob& p = best.priced[plan.best_priced];
  Scenario chosen = base;
  ApplyCandidate(plan.space, best.candidate, &chosen);
  const int slot = Slot(plan.space, p.pricing);
  const double total_flops = best.simulated.samples_per_s * best.simulated.step.step_time_s > 0
                                 ? best.steps * best.simulated.model_tflops_per_gpu * 1e12 *
                                       chosen.total_gpus() * best.simulated.step.step_time_s
                                 : 0;
  std::vector<std::string> out = {Headline(plan, best, p),
                                  MemoryReason(chosen, best),
                                  PracticeReason(chosen, plan, best, slot, estimated),
                                  ParallelReason(chosen, best),
                                  BandReason(plan, best),
                                  HybridReason(chosen, plan, best, slot, estimated),
                                  ZeroReason(chosen, best),
                                  ExpertReason(chosen, best),
                                  InstanceReason(plan, best, slot, estimated, total_flops),
                                  PricingReason(q, best, p),
                                  CapacityReason(q, plan, best, p),
                                  FallbackReason(q, best, p),
                                  ElasticReason(plan, chosen, best, p),
                                  ReservedReason(best, p),
                                  ConstraintReason(q, plan, p),
                                  EstimatorReason(plan)};
  out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
  return out;
}

std::string DescribeTerms(const PricedJob& p) {
  const JobEstimate& j = p.job;
  if (j.blocks) {
    std::string days, sizes;
    for (int d : j.blocks->block_days) days += (days.empty() ? "" : " + ") + std::to_string(d);
    for (int n : j.blocks->block_sizes) sizes += (sizes.empty() ? "" : "+") + std::to_string(n);
    const double idle = j.blocks->idle_instance_hours / j.blocks->reserved_instance_hours;
    return days + " d booked for " + sizes + (sizes == "1" ? " instance, " : " instances, ") +
           Pct(idle) + " idle";
  }
  if (p.commitment) {
    return Pct(p.commitment->job_share) + " of a " + std::to_string(CommitmentYears(p.pricing)) +
           "-year commitment; the rest costs " + Usd(p.commitment->rest_cost_usd);
  }
  std::string out;
  if (j.jobs > 1) {
    out = std::to_string(j.jobs) + " SageMaker jobs of at most 28 days" +
          ", each later one provisioned again" +
          (p.inputs.warm_pool_keep_alive_s > 0
               ? " (a warm pool lasts 7 days: its keep-alive of " +
                     Fmt("%.0f s", p.inputs.warm_pool_keep_alive_s) + " is billed, not reused)"
               : "");
  } else if (p.inputs.warm_pool_keep_alive_s > 0) {
    out = "a warm pool kept " + Fmt("%.0f s", p.inputs.warm_pool_keep_alive_s) +
          " after the job (billed)";
  }
  if (p.inputs.interruptions_per_instance_hour > 0) {
    out += out.empty() ? "" : "; ";
    out += Fmt("%.1f interruptions expected", j.expected_interruptions);
  }
  if (j.live_share) {
    out += (out.empty() ? "" : "; ") + Fmt("%.2f%%", 100 * *j.live_share) +
           " of replicas live on average, " + Fmt("%.2g", j.total_losses.value_or(0)) +
           " losses of all";
  }
  if (j.fallback_share) {
    out += (out.empty() ? "" : "; ") + Pct(*j.fallback_share) + " of runs fall back to on-demand";
    if (j.mean_fallback_at_s) out += ", after " + Hours(*j.mean_fallback_at_s) + " on average";
  }
  return out;
}

std::string DescribePruning(const PruneTally& tally) {
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [reason, e] : tally) order.push_back({-e.count, reason});
  std::sort(order.begin(), order.end());
  std::string out;
  for (const auto& [count, reason] : order) {
    if (!out.empty()) out += "; ";
    out += reason + ": " + std::to_string(-count) + " (e.g. " + tally.at(reason).example + ")";
  }
  return out;
}

}  // namespace trainsim::planner
