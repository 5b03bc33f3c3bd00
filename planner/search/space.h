// The planner's search space: every way to run a scenario's job that the
// `search` section allows, the impossible ones pruned with their reason.
//
// A candidate is an instance type, a node count and a parallel layout (tp,
// pp, dp, ZeRO stage and shard group, micro batch, recompute, schedule and
// virtual stages).
// Pricing is not part of it: it changes the bill, not the step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/scenario.h"
#include "core/search.h"
#include "core/strategy.h"
#include "sim/memory_model.h"

namespace trainsim::planner {

struct Candidate {
  int instance = 0;  // index into SearchSpace::instances
  int nodes = 1;
  int tp = 1, pp = 1, dp = 1;
  int zero_stage = 0;
  int shard_group = 0;  // hybrid sharding group (parallel.shard_group); 0 = the whole DP group
  int ep = 1;           // expert parallelism (parallel.ep)
  StrategyDegrees degrees = kNoStrategies;  // each strategy's (core/strategy.h)
  int micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  Schedule schedule = Schedule::k1F1B;
  int virtual_stages = 1;
};

// Why candidates were pruned: one entry per reason, with how many candidates
// it removed (counted at full granularity: a reason that removes a tp value
// removes every candidate below it) and the first one's message.
struct PruneEntry {
  int64_t count = 0;
  std::string example;
};
using PruneTally = std::map<std::string, PruneEntry, std::less<>>;

// The resolved space of a scenario's `search` section.
struct SearchSpace {
  std::vector<const InstanceType*> instances;
  std::vector<int> tp, pp, micro_batch, zero_stages, virtual_stages;
  std::vector<int> shard_groups;  // as given; empty = the default per layout (ShardGroups)
  std::vector<int> ep;            // as given; empty = the default per layout (EpDegrees)
  // Per strategy: search.<name>, or the strategy's default axis (Strategy::default_axis).
  std::array<std::vector<int>, kStrategyCount> strategies;
  std::vector<Recompute> recompute;
  std::vector<Schedule> schedules;
  std::vector<Pricing> pricing;
  // Per instance: whether some option in `pricing` has a price for it (PriceUsdHr).
  std::vector<bool> priced;
  // Options left out of the default list: no instance searched has a price for them.
  std::vector<Pricing> unpriced;
  int min_nodes = 1, max_nodes = 1;
  // Objective min-time: an instance with no price under any option is planned by time alone
  // (reference systems); otherwise it is pruned.
  bool time_only = false;
};

// Fills the defaults of docs/planner.md for every list the section `q` of
// scenario `s` leaves empty. Fails when it names an instance the catalog lacks.
Expected<SearchSpace> ResolveSpace(const Scenario& s, const SearchConfig& q,
                                   const Catalog& catalog);

// `base` with the candidate applied (instance, nodes, parallel, training).
void ApplyCandidate(const SearchSpace& space, const Candidate& c, Scenario* s);

// The hybrid shard groups a layout of `dp` ranks with `tp` on `gpus_per_node`-GPU
// nodes tries beside the whole DP group: those `space` lists that divide dp
// and are below it, or by default one node's DP ranks (at least 2) times 1,
// 2, 4, ... while below dp and dividing it.
std::vector<int> ShardGroups(const SearchSpace& space, int dp, int tp, int gpus_per_node);

// The expert-parallel degrees a layout of `dp` tries for `experts` experts: the
// listed ones that divide both (and 1), or 1 and every power of two that does.
// `dp`: the ranks an EP group is made of (the stage's tp x dp with whole experts).
std::vector<int> EpDegrees(const SearchSpace& space, int experts, int dp);

// "p4d.24xlarge x 128: tp 8, pp 8, dp 16, ZeRO-1, micro batch 1, full recompute, 1f1b"
// (", hybrid shard 8" after the ZeRO stage with a shard group)
std::string Describe(const SearchSpace& space, const Candidate& c);

// Walks the space in a fixed order. For each instance type and (tp, micro
// batch), and again where a strategy's degree changes (its figures depend on it),
// `on_figures` is called with the scenario set to them (the
// estimator caches its per-layer figures there); then `on_candidate` for
// every candidate that survives pruning, with the scenario set to it and its
// memory breakdown. Pruned candidates go to *tally.
struct SpaceVisitor {
  std::function<void(const Scenario&)> on_figures;
  std::function<void(const Candidate&, const Scenario&, const sim::MemoryBreakdown&)> on_candidate;
};
void WalkSpace(const Scenario& base, const SearchSpace& space, const SpaceVisitor& visit,
               PruneTally* tally);

}  // namespace trainsim::planner
