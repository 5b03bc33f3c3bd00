#include "planner/search/space.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/catalog.h"
#include "tests/test_util.h"

namespace trainsim::planner {
namespace {

// A 4-layer, 4-head transformer: small enough to count the space by hand.
PlanningScenario Tiny() {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      R"({"model": {"layers": 4, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "seq_len": 128,
                    "vocab": 1000},
          "training": {"global_batch": 8, "tokens": 1e9},
          "cluster": {"instance": "p4d.24xlarge"}})",
      "tiny.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  SearchConfig& q = s->search;
  q.instances = {"p4d.24xlarge"};
  q.min_nodes = 1;
  q.max_nodes = 2;
  q.tp = {1, 2, 4, 8};
  q.pp = {1, 2, 4};
  q.micro_batch = {1, 2, 4, 8};
  q.zero_stages = {0, 1};
  q.recompute = {Recompute::kNone};
  q.schedules = {Schedule::k1F1B};
  return *s;
}

struct Walked {
  PruneTally tally;
  std::vector<Candidate> candidates;
};

Walked Walk(const PlanningScenario& s) {
  Walked w;
  Expected<SearchSpace> space = ResolveSpace(s.scenario, s.search, test::BuiltinCatalog());
  EXPECT_TRUE(space.ok()) << space.status().message();
  SpaceVisitor visit;
  visit.on_candidate = [&](const Candidate& c, const Scenario&, const sim::MemoryBreakdown&) {
    w.candidates.push_back(c);
  };
  WalkSpace(s.scenario, *space, visit, &w.tally);
  return w;
}

// Counted by hand: 2 node counts x 4 tp x 3 pp x 4 micro batches x 2 ZeRO stages = 192.
TEST(WalkSpace, PrunesWithReasonsAndCountsEveryCandidateOnce) {
  const Walked w = Walk(Tiny());
  ASSERT_EQ(w.tally.size(), 4u);
  // tp 8 does not divide 4 heads: all 4 x 2 x 3 x 2 = 48 below it.
  EXPECT_EQ(w.tally.at("tp-divides").count, 48);
  EXPECT_EQ(w.tally.at("tp-divides").example,
            "tp 8 does not divide the heads (4), KV heads (4) and FFN width (1024)");
  // One node: tp 4 x pp 4 = 16 > 8 GPUs, for 4 micro batches x 2 ZeRO stages.
  EXPECT_EQ(w.tally.at("gpus").count, 8);
  EXPECT_EQ(w.tally.at("gpus").example,
            "tp * pp = 16 does not divide the 8 GPUs of 1 x p4d.24xlarge");
  // dp x micro batch above 8: 10 (tp, pp, mb) on one node, 18 on two; x 2 ZeRO stages.
  EXPECT_EQ(w.tally.at("batch").count, 56);
  // dp = 1 with ZeRO-1: (2,4), (4,2) on one node and (4,4) on two, x 4 micro batches.
  EXPECT_EQ(w.tally.at("zero-dp").count, 12);
  EXPECT_EQ(w.candidates.size(), 68u);
  int64_t pruned = 0;
  for (const auto& [reason, e] : w.tally) pruned += e.count;
  EXPECT_EQ(pruned + static_cast<int64_t>(w.candidates.size()), 192);
  for (const Candidate& c : w.candidates) {
    EXPECT_EQ(c.tp * c.pp * c.dp, c.nodes * 8);
    EXPECT_EQ(8 % (c.dp * c.micro_batch), 0);
  }
}

// Layouts the simulator would refuse (more than sim::kMaxReducedNodes nodes that do not
// fold) are pruned with their reason, every candidate under them counted; larger ones
// that fold are walked.
TEST(WalkSpace, NodeCountsBeyondTheSimulatorArePruned) {
  PlanningScenario s = Tiny();
  s.scenario.training.global_batch = 33587200;  // divisible by dp = 2 x nodes (tp 4) below
  s.search.tp = {4};
  s.search.pp = {1};
  s.search.micro_batch = {1};
  s.search.zero_stages = {1};
  s.search.min_nodes = 4099;
  s.search.max_nodes = 4100;  // 4100 fill no whole leaves of 32 nodes: no fold
  Walked w = Walk(s);
  ASSERT_EQ(w.tally.count("beyond-simulator"), 1u);
  EXPECT_EQ(w.tally.at("beyond-simulator").count, 1);  // 4099 does not divide the batch
  EXPECT_EQ(w.tally.at("beyond-simulator").example,
            "4100 nodes: the simulator takes on at most 4096 unless the cluster folds, and this "
            "layout does not (a pipeline stage (4100 nodes) does not fill whole leaves of "
            "cluster.nodes_per_leaf 32)");
  EXPECT_TRUE(w.candidates.empty());
  s.search.min_nodes = s.search.max_nodes = 16384;  // folds: 512 leaves of 32 nodes, 64 built
  w = Walk(s);
  EXPECT_EQ(w.tally.count("beyond-simulator"), 0u);
  ASSERT_EQ(w.candidates.size(), 1u);
  EXPECT_EQ(w.candidates[0].nodes, 16384);
  s.search.zero_stages = {0};  // its all-reduce may run as the hierarchical algorithm
  w = Walk(s);
  EXPECT_EQ(w.tally.count("beyond-simulator"), 1u);
  EXPECT_TRUE(w.candidates.empty());
}

TEST(WalkSpace, MemoryPruningSaysWhatDoesNotFit) {
  Expected<PlanningScenario> s = LoadPlanningScenario(
      TRAINSIM_SOURCE_DIR "/scenarios/gpt3-175b-p4d.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  s->search = SearchConfig();
  s->search.instances = {"p4d.24xlarge"};
  s->search.max_nodes = 1;
  s->search.tp = {8};
  s->search.pp = {1};
  s->search.micro_batch = {1};
  s->search.zero_stages = {0};
  s->search.recompute = {Recompute::kFull};
  const Walked w = Walk(*s);
  EXPECT_TRUE(w.candidates.empty());
  ASSERT_EQ(w.tally.count("memory"), 1u);
  EXPECT_EQ(w.tally.at("memory").count, 1);        // 1f1b
  EXPECT_EQ(w.tally.at("schedule-pp1").count, 2);  // interleaved x2 and x4 need pp > 1
  EXPECT_NE(w.tally.at("memory").example.find("p4d.24xlarge x 1: tp 8, pp 1"), std::string::npos);
  EXPECT_NE(w.tally.at("memory").example.find("GiB"), std::string::npos);
}

TEST(WalkSpace, ZeroTwoAndThreeNeedNoPipeline) {
  PlanningScenario s = Tiny();
  s.search.tp = {1};
  s.search.pp = {2};
  s.search.micro_batch = {1};
  s.search.zero_stages = {2, 3};
  s.search.max_nodes = 1;
  const Walked w = Walk(s);
  EXPECT_TRUE(w.candidates.empty());
  EXPECT_EQ(w.tally.at("zero-pp").count, 2);
  EXPECT_EQ(w.tally.at("zero-pp").example,
            "ZeRO-2 with pipeline parallelism (pp 2): DeepSpeed's pipeline engine supports "
            "ZeRO-1 only");
}

// ZeRO-3 is not put forward beyond what the corpus measured (512 GPUs; without model
// parallelism 70B parameters) while the search offers other layouts; a search that fixes ZeRO-3
// and the layout keeps it.
TEST(WalkSpace, ZeroThreeBeyondTheValidatedRangeIsNotPutForward) {
  Expected<PlanningScenario> big =
      ParsePlanningScenario(R"({"model": "gpt3-175b", "training": {"global_batch": 64},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 4},
      "search": {"instances": ["p4d.24xlarge"], "tp": [1, 8], "pp": [1], "zero_stages": [3],
                 "micro_batch": [1], "recompute": ["full"], "nodes": {"min": 4, "max": 4}}})",
                            "x.json", test::BuiltinCatalog());
  ASSERT_TRUE(big.ok()) << big.status().message();
  const Walked w = Walk(*big);
  ASSERT_EQ(w.tally.count("zero3-unvalidated"), 1u);
  EXPECT_EQ(w.tally.at("zero3-unvalidated").count, 3);  // tp 1: 1f1b, interleaved x2 and x4
  EXPECT_EQ(w.tally.at("zero3-unvalidated").example,
            "ZeRO-3 with tp 1, pp 1 on 32 GPUs for a 175B-parameter model, where the search offers "
            "other layouts: no measurement supports ZeRO-3 beyond 512 GPUs, nor without model "
            "parallelism beyond 70B parameters (docs/validation.md section 0.4)");
  PlanningScenario only_dp = *big;
  only_dp.search.tp = {1};
  EXPECT_EQ(Walk(only_dp).tally.count("zero3-unvalidated"), 0u);
  PlanningScenario small = Tiny();  // a small model on few GPUs: inside the range
  small.search.tp = {1, 2};
  small.search.zero_stages = {3};
  EXPECT_EQ(Walk(small).tally.count("zero3-unvalidated"), 0u);
  // Beyond 512 GPUs ZeRO-3 goes even with tensor parallelism (tp 8 on 65 nodes: 520 GPUs).
  PlanningScenario wide = *big;
  wide.scenario.cluster.nodes = 65;
  wide.search.min_nodes = wide.search.max_nodes = 65;
  wide.scenario.training.global_batch = 65;
  const Walked w_wide = Walk(wide);
  ASSERT_EQ(w_wide.tally.count("zero3-unvalidated"), 1u);
  EXPECT_NE(w_wide.tally.at("zero3-unvalidated").example.find("tp 8, pp 1 on 520 GPUs"),
            std::string::npos);
}

// Tiny on one node with one layout (tp 1, pp 1, micro batch 1, ZeRO 0), recompute modes the
// only choice left. Explicit dimensions: flash attention by default.
PlanningScenario TinyRecomputeOnly(std::vector<Recompute> modes) {
  PlanningScenario s = Tiny();
  s.search.tp = {1};
  s.search.pp = {1};
  s.search.micro_batch = {1};
  s.search.zero_stages = {0};
  s.search.max_nodes = 1;
  s.search.recompute = std::move(modes);
  return s;
}

TEST(WalkSpace, SelectiveRecomputeWithFlashAttentionIsNone) {
  PlanningScenario s = TinyRecomputeOnly({Recompute::kNone, Recompute::kSelective});
  ASSERT_TRUE(s.scenario.training.flash_attention);
  s.search.recompute = {Recompute::kNone, Recompute::kSelective};
  Walked w = Walk(s);
  ASSERT_EQ(w.candidates.size(), 1u);
  EXPECT_EQ(w.candidates[0].recompute, Recompute::kNone);
  EXPECT_EQ(w.tally.at("recompute-flash").count, 1);
  EXPECT_EQ(w.tally.at("recompute-flash").example,
            "selective recompute with flash attention is the same as none (no stored scores)");
  // Asked for alone, selective stays; without flash attention both do.
  s.search.recompute = {Recompute::kSelective};
  EXPECT_EQ(Walk(s).candidates.size(), 1u);
  s.search.recompute = {Recompute::kNone, Recompute::kSelective};
  s.scenario.training.flash_attention = false;
  EXPECT_EQ(Walk(s).candidates.size(), 2u);
}

// Op-level checkpointing keeps the fused attention's output: searched without flash
// attention it is pruned, with it it stays.
TEST(WalkSpace, OpLevelRecomputeNeedsFlashAttention) {
  PlanningScenario s = TinyRecomputeOnly({Recompute::kNone, Recompute::kSelectiveOp});
  EXPECT_EQ(Walk(s).candidates.size(), 2u);
  s.scenario.training.flash_attention = false;
  const Walked w = Walk(s);
  ASSERT_EQ(w.candidates.size(), 1u);
  EXPECT_EQ(w.candidates[0].recompute, Recompute::kNone);
  EXPECT_EQ(w.tally.at("recompute-op-flash").count, 1);
}

// Issue 14: with the scenario's offload_params the planner keeps it, walks
// ZeRO-3 only, and its memory pruning uses the offloaded model: GPT-3 175B
// with FSDP on 16 p4d (dp 128) survives with parameter offload, not without.
TEST(WalkSpace, ParameterOffloadKeepsZeroThreeAndFitsGpt3On16P4d) {
  auto walk = [](bool offload) {
    Expected<PlanningScenario> s = ParsePlanningScenario(
        std::string(R"({"model": "gpt3-175b", "training": {"global_batch": 128,
            "recompute": "full", "offload_params": )") +
            (offload ? "true" : "false") + R"(}, "cluster": {"instance": "p4d.24xlarge",
            "nodes": 16}, "parallel": {"zero_stage": 3}})",
        "x.json", test::BuiltinCatalog());
    EXPECT_TRUE(s.ok()) << s.status().message();
    SearchConfig& q = s->search;
    q.instances = {"p4d.24xlarge"};
    q.min_nodes = q.max_nodes = 16;
    q.tp = {1};
    q.pp = {1};
    q.micro_batch = {1};
    q.zero_stages = {0, 1, 2, 3};
    q.recompute = {Recompute::kFull};
    q.schedules = {Schedule::k1F1B};
    return Walk(*s);
  };
  // dp 128 on 8-GPU nodes: ZeRO-3 over the whole group; in hybrid groups of one node each
  // node's host would hold the whole model's state, more than its memory (larger groups are
  // not in the default search: hybrid-unvalidated).
  const Walked off = walk(true);
  ASSERT_EQ(off.candidates.size(), 1u);
  EXPECT_EQ(off.candidates[0].zero_stage, 3);
  EXPECT_EQ(off.candidates[0].shard_group, 0);
  EXPECT_EQ(off.tally.at("offload-params-zero").count, 3);
  EXPECT_EQ(off.tally.at("offload-params-zero").example,
            "ZeRO-0: training.offload_params offloads ZeRO-3 shards (needs ZeRO-3)");
  const Walked on = walk(false);
  EXPECT_TRUE(on.candidates.empty());
  EXPECT_EQ(on.tally.at("memory").count, 3);  // ZeRO-0, 1, 2
  // ZeRO-3 for 175B without model parallelism, with other stages on offer: not put forward.
  EXPECT_EQ(on.tally.at("zero3-unvalidated").count, 1);
}

// Hybrid shard groups (ZeRO-2/3 only): by default one node's data-parallel ranks times
// 1, 2, 4, ... below dp; a listed group that does not divide dp, or is not below it, is
// pruned with its reason. Tiny on 2 p4d, tp 1 / tp 2, pp 1, micro batch 1.
TEST(WalkSpace, HybridShardGroupsForZeroTwoAndThree) {
  PlanningScenario s = Tiny();
  s.scenario.training.global_batch = 16;
  SearchConfig& q = s.search;
  q.min_nodes = 2;
  q.tp = {1, 2};
  q.pp = {1};
  q.micro_batch = {1};
  q.zero_stages = {1, 2, 3};
  auto groups = [](const Walked& w, int tp, int zero) {
    std::vector<int> out;
    for (const Candidate& c : w.candidates) {
      if (c.tp == tp && c.zero_stage == zero) out.push_back(c.shard_group);
    }
    return out;
  };
  const Walked by_default = Walk(s);  // dp 16 with tp 1 (8 per node), dp 8 with tp 2 (4)
  EXPECT_EQ(groups(by_default, 1, 1), std::vector<int>{0});
  EXPECT_EQ(groups(by_default, 1, 3), (std::vector<int>{0, 8}));
  EXPECT_EQ(groups(by_default, 2, 3), (std::vector<int>{0, 4}));
  // Hybrid ZeRO-2 is not measured: left out of the default search, with the reason.
  EXPECT_EQ(groups(by_default, 1, 2), std::vector<int>{0});
  EXPECT_EQ(by_default.tally.at("hybrid-unvalidated").count, 2);  // tp 1 and tp 2
  EXPECT_EQ(by_default.tally.at("hybrid-unvalidated").example,
            "ZeRO-2 in hybrid groups of 8 with tp 1 on 8-GPU nodes: the measurements of hybrid "
            "sharding are ZeRO-3 groups of one node (docs/validation.md section 0.3.19); list "
            "the group in search.shard_groups to plan with it");
  q.shard_groups = {2, 3, 16};
  const Walked listed = Walk(s);
  EXPECT_EQ(groups(listed, 1, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(groups(listed, 1, 3), (std::vector<int>{0, 2}));
  EXPECT_EQ(groups(listed, 2, 3), (std::vector<int>{0, 2}));
  EXPECT_EQ(listed.tally.at("shard-group").count, 8);  // 3 and 16, at dp 16 and 8, ZeRO-2 and 3
  EXPECT_EQ(listed.tally.count("hybrid-unvalidated"), 0u);
  EXPECT_EQ(listed.tally.at("shard-group").example,
            "shard group 3 with dp 16: a hybrid group must divide dp and be smaller than it");
  EXPECT_EQ(
      Describe(*ResolveSpace(s.scenario, s.search, test::BuiltinCatalog()), listed.candidates[4]),
      "p4d.24xlarge x 2: tp 1, pp 1, dp 16, ZeRO-3, hybrid shard 2, micro batch 1, none "
      "recompute");
}

// A mixture of experts: ZeRO-0/1 layouts try expert parallel 1 and every power of two that
// divides both the experts and dp; dense models and ZeRO-2/3 keep ep 1; a listed degree that
// does not fit is pruned with its reason.
TEST(WalkSpace, ExpertParallelDegreesOfAMixtureOfExperts) {
  PlanningScenario s = Tiny();
  s.scenario.model.experts = 4;
  s.scenario.model.experts_per_token = 2;
  s.search.zero_stages = {0, 1, 2};
  s.search.pp = {1};
  s.search.micro_batch = {1};
  std::map<std::pair<int, int>, std::set<int>> ep_by_dp_zero;
  for (const Candidate& c : Walk(s).candidates) ep_by_dp_zero[{c.dp, c.zero_stage}].insert(c.ep);
  EXPECT_EQ(ep_by_dp_zero.at({8, 0}), (std::set<int>{1, 2, 4}));
  EXPECT_EQ(ep_by_dp_zero.at({2, 1}), (std::set<int>{1, 2}));
  EXPECT_EQ(ep_by_dp_zero.at({8, 2}), (std::set<int>{1}));
  for (const Candidate& c : Walk(Tiny()).candidates) EXPECT_EQ(c.ep, 1);
  s.search.ep = {8};
  const Walked listed = Walk(s);
  ASSERT_TRUE(listed.tally.count("ep"));
  EXPECT_EQ(listed.tally.at("ep").example.rfind("expert parallel 8 with 4 experts", 0), 0u)
      << listed.tally.at("ep").example;
  for (const Candidate& c : listed.candidates) EXPECT_EQ(c.ep, 1);
  // Whole experts (parallel.expert_tp 1): the EP group spans tp x dp, so tp 4 x dp 2 takes ep
  // 4 (2 without); without sequence parallelism its tp > 1 layouts are pruned with the reason.
  s.search.ep.clear();
  s.scenario.parallel.expert_tp = 1;
  s.scenario.training.sequence_parallel = true;
  std::map<std::pair<int, int>, std::set<int>> whole;
  for (const Candidate& c : Walk(s).candidates) {
    if (c.zero_stage == 1) whole[{c.tp, c.dp}].insert(c.ep);
  }
  EXPECT_EQ(whole.at({4, 2}), (std::set<int>{1, 2, 4}));
  s.scenario.training.sequence_parallel = false;
  const Walked no_sp = Walk(s);
  for (const Candidate& c : no_sp.candidates) EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(no_sp.tally.at("ep").example,
            "whole experts (parallel.expert_tp 1) with tp 2: needs training.sequence_parallel");
}

// Context parallelism: search.cp's degrees divide the GPUs before dp (dp = GPUs / (tp pp
// cp)); a degree the sequence cannot take, or any without flash attention, is pruned with
// its reason; without search.cp the scenario's stays.
TEST(WalkSpace, ContextParallelDegreesSplitTheGpusBeforeDp) {
  PlanningScenario s = Tiny();
  s.scenario.training.flash_attention = true;
  s.search.zero_stages = {0};
  s.search.pp = {1};
  s.search.micro_batch = {1};
  s.search.strategies[StrategyIndex(kContextParallel)] = {1, 2, 4, 128};
  std::set<std::pair<int, int>> cp_dp;
  const Walked w = Walk(s);
  for (const Candidate& c : w.candidates) {
    const int cp = c.degrees[StrategyIndex(kContextParallel)];
    cp_dp.insert({cp, c.dp});
    EXPECT_EQ(c.tp * c.pp * cp * c.dp, c.nodes * 8);
  }
  EXPECT_TRUE(cp_dp.count({2, 4}));  // 1 node, tp 1
  EXPECT_TRUE(cp_dp.count({4, 2}));
  ASSERT_TRUE(w.tally.count("cp"));  // seq 128 does not split into 256 chunks
  EXPECT_EQ(w.tally.at("cp").example,
            "context parallel 128 does not split model.seq_len = 128 into 2 * cp = 256 equal "
            "chunks (the causal load balancing of ring attention)");
  s.scenario.training.flash_attention = false;
  const Walked without = Walk(s);
  EXPECT_EQ(
      without.tally.at("cp").example.rfind("context parallel 2 needs training.flash_attention", 0),
      0u);
  s.search.strategies[StrategyIndex(kContextParallel)] = {};
  for (const Candidate& c : Walk(s).candidates) EXPECT_EQ(c.degrees, kNoStrategies);
}

// Without search.cp, a long-context transformer with flash attention also tries cp 1, 2, 4, 8;
// a short one, or one without flash attention, keeps the scenario's cp.
TEST(ResolveSpace, LongContextTriesContextParallelism) {
  Scenario s = Tiny().scenario;
  s.training.flash_attention = true;
  EXPECT_EQ(kContextParallel.default_axis(s), std::vector<int>{1});
  s.model.seq_len = 32768;  // long context (core/strategies/context_parallel.cc)
  EXPECT_EQ(kContextParallel.default_axis(s), (std::vector<int>{1, 2, 4, 8}));
  s.parallel.cp = 4;
  EXPECT_EQ(kContextParallel.default_axis(s), (std::vector<int>{1, 2, 4, 8}));
  s.parallel.cp = 16;
  EXPECT_EQ(kContextParallel.default_axis(s), (std::vector<int>{1, 2, 4, 8, 16}));
  s.training.flash_attention = false;
  EXPECT_EQ(kContextParallel.default_axis(s), std::vector<int>{16});
}

TEST(ResolveSpace, DefaultsAndRestrictions) {
  PlanningScenario s = Tiny();
  s.search = SearchConfig();
  Expected<SearchSpace> space = ResolveSpace(s.scenario, s.search, test::BuiltinCatalog());
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->tp, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(space->pp, (std::vector<int>{1, 2, 4}));
  // By default every option some instance has a price for: Capacity Blocks from the catalog,
  // but no training plan or Savings Plan without search.prices.
  EXPECT_EQ(space->pricing, (std::vector<Pricing>{Pricing::kOnDemand, Pricing::kSpot,
                                                  Pricing::kSagemaker, Pricing::kSagemakerSpot,
                                                  Pricing::kCapacityBlock, Pricing::kSpotElastic}));
  // And no spot-fallback without a deadline to fall back for.
  EXPECT_EQ(space->unpriced,
            (std::vector<Pricing>{Pricing::kTrainingPlan, Pricing::kSavingsPlan1y,
                                  Pricing::kSavingsPlan3y, Pricing::kSpotFallback}));
  for (const InstanceType* t : space->instances) {
    EXPECT_TRUE(t->is_aws);
    EXPECT_GT(t->gpus, 0);
  }
  s.search.spot_allowed = false;
  space = ResolveSpace(s.scenario, s.search, test::BuiltinCatalog());
  EXPECT_EQ(space->pricing, (std::vector<Pricing>{Pricing::kOnDemand, Pricing::kSagemaker,
                                                  Pricing::kCapacityBlock}));
  s.search.spot_allowed = true;
  s.search.deadline_hours = 100;
  space = ResolveSpace(s.scenario, s.search, test::BuiltinCatalog());
  EXPECT_EQ(space->pricing.end()[-2], Pricing::kSpotFallback);
  s.search.deadline_hours.reset();
  s.search.pricing = {Pricing::kSpot, Pricing::kSpotFallback};
  EXPECT_EQ(ResolveSpace(s.scenario, s.search, test::BuiltinCatalog()).status().message(),
            "search.pricing[1]: \"spot-fallback\" needs search.deadline_hours (it falls back to "
            "on-demand when the deadline's slack runs out)");
  s.search.pricing.clear();
  s.search.instances = {"p9.huge"};
  EXPECT_EQ(ResolveSpace(s.scenario, s.search, test::BuiltinCatalog()).status().message(),
            "search.instances: unknown instance type \"p9.huge\"");
}

TEST(ResolveSpace, AnOptionAskedForWithoutAnyPriceNamesTheFieldToGive) {
  PlanningScenario s = Tiny();
  s.search = SearchConfig();
  s.search.instances = {"p4d.24xlarge", "p5e.48xlarge"};
  s.search.pricing = {Pricing::kOnDemand, Pricing::kTrainingPlan};
  EXPECT_EQ(
      ResolveSpace(s.scenario, s.search, test::BuiltinCatalog()).status().message(),
      "search.pricing[1]: \"training-plan\" has no price for any instance searched "
      "(p4d.24xlarge, p5e.48xlarge): give search.prices.\"p4d.24xlarge\".training_plan_usd_hr");
  // p5e has no on-demand price: a Savings Plan rate for it alone prices nothing.
  s.search.pricing = {Pricing::kSavingsPlan3y};
  s.search.prices["p5e.48xlarge"].savings_plan_3y_usd_hr = 20;
  EXPECT_NE(ResolveSpace(s.scenario, s.search, test::BuiltinCatalog())
                .status()
                .message()
                .find("the type needs an on-demand price too"),
            std::string::npos);
  s.search.prices["p4d.24xlarge"].savings_plan_3y_usd_hr = 12;
  s.search.prices["p4d.24xlarge"].training_plan_usd_hr = 15;
  s.search.pricing = {Pricing::kSavingsPlan3y, Pricing::kTrainingPlan, Pricing::kCapacityBlock};
  Expected<SearchSpace> space = ResolveSpace(s.scenario, s.search, test::BuiltinCatalog());
  ASSERT_TRUE(space.ok()) << space.status().message();
  EXPECT_EQ(space->pricing, s.search.pricing);
  EXPECT_EQ(space->priced, (std::vector<bool>{true, true}));  // p5e: its block price
}

}  // namespace
}  // namespace trainsim::planner
