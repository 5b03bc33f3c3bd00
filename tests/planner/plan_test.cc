#include "planner/search/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "core/catalog.h"
#include "planner/search/scaling.h"
#include "tests/test_util.h"

namespace trainsim::planner {
namespace {

// A small transformer on two instance types, 1..2 nodes: a whole plan in seconds.
PlanningScenario Small(const std::string& search) {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      R"({"model": {"layers": 8, "hidden": 1024, "heads": 16, "ffn_hidden": 4096,
                    "seq_len": 1024, "vocab": 32000},
          "training": {"global_batch": 64, "tokens": 2e9},
          "cluster": {"instance": "p4d.24xlarge"},
          "search": )" +
          search + "}",
      "small.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

const char kSearch[] =
    R"({"instances": ["p4d.24xlarge", "g5.48xlarge"], "nodes": {"min": 1, "max": 2},
        "tp": [1, 2], "pp": [1, 2], "micro_batch": [1, 4], "zero_stages": [0, 1],
        "recompute": ["none"], "confirm_top": 4, "trials": 200})";

Plan MustPlan(const PlanningScenario& s) {
  PlanOptions options;
  options.jobs = 2;
  Expected<Plan> p = MakePlan(s, test::BuiltinCatalog(), options);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

TEST(MakePlan, ConfirmsRanksAndPricesTheBest) {
  const Plan p = MustPlan(Small(kSearch));
  ASSERT_EQ(p.confirmed.size(), 4u);
  EXPECT_EQ(p.best, 0);
  EXPECT_TRUE(p.meets_constraints);
  for (const ConfirmedCandidate& c : p.confirmed) {
    EXPECT_TRUE(c.simulated.simulated);
    EXPECT_GT(c.simulated.step.step_time_s, 0);
    EXPECT_EQ(c.steps, std::ceil(2e9 / (64 * 1024.0)));
    EXPECT_FALSE(c.priced.empty());
  }
  // min-cost: no confirmed option is cheaper than the recommendation.
  const double best = p.confirmed[0].priced[p.best_priced].job.cost_usd->mean;
  for (const ConfirmedCandidate& c : p.confirmed) {
    for (const PricedJob& j : c.priced) EXPECT_GE(j.job.cost_usd->mean, best);
  }
  EXPECT_GE(p.reasons.size(), 5u);
  EXPECT_EQ(p.reasons[0].rfind("Run ", 0), 0u);
}

// Llama 2 7B with ZeRO-3 on 16 p4d (dp 128): hybrid groups of one node win, and the reasons
// say where the group's collectives run, what sharding over all 128 ranks costs by the
// simulator (both confirmed; in the usual-practice reason, whose shape that is), and which
// measurements support hybrid sharding.
TEST(MakePlan, HybridShardingWinsAndSaysWhy) {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      R"({"model": "llama2-7b", "training": {"global_batch": 512, "tokens": 2e10},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 16},
          "search": {"instances": ["p4d.24xlarge"], "nodes": {"min": 16, "max": 16},
                     "tp": [1], "pp": [1], "micro_batch": [1], "recompute": ["none"],
                     "zero_stages": [3], "pricing": ["on-demand"], "confirm_top": 4}})",
      "hybrid.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Plan p = MustPlan(*s);
  ASSERT_EQ(p.confirmed.size(), 2u);  // the whole group and groups of 8 (one node)
  EXPECT_EQ(p.confirmed[p.best].candidate.shard_group, 8);
  std::string all;
  for (const std::string& r : p.reasons) all += r + "\n";
  for (const char* part :
       {"ZeRO-3 shards the whole model state over hybrid groups of 8 data-parallel ranks inside "
        "each node, which keeps its weight gathers and gradient reduce-scatters on NVSwitch; the "
        "16 groups hold copies of it and all-reduce each gradient shard among themselves.",
        // Here the usual practice is ZeRO-3 over the whole group: its reason compares the two.
        "The usual practice would choose sharded data parallelism (ZeRO-3); it takes ",
        " by the simulator than sharded data parallelism (ZeRO-3 in hybrid groups of 8).",
        "Hybrid sharding has measured support: FSDP hybrid sharding within a node on 96-128 "
        "A100 and H100 GPUs",
        // The implementation the figures assume (the default).
        "Its ZeRO-3 figures assume PyTorch FSDP (FSDP1), as that framework issues its gathers "
        "and reduce-scatters (parallel.zero_impl \"fsdp1\"; set it to the framework that will "
        "run: fsdp1, fsdp2, deepspeed or xla)."}) {
    EXPECT_NE(all.find(part), std::string::npos) << part << "\n" << all;
  }
}

// DeepSpeed's ZeRO-3, which the corpus never measured: the reasons name it, and the band's
// reason says that it is widened for it.
TEST(MakePlan, AnUnmeasuredZeroThreeImplementationIsNamedWithItsWiderBand) {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      R"({"model": "llama2-7b", "training": {"global_batch": 512, "tokens": 2e10},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"zero_stage": 3, "zero_impl": "deepspeed"},
          "search": {"instances": ["p4d.24xlarge"], "nodes": {"min": 2, "max": 2},
                     "tp": [1], "pp": [1], "micro_batch": [1], "recompute": ["none"],
                     "zero_stages": [3], "pricing": ["on-demand"], "confirm_top": 2}})",
      "deepspeed.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  PlanOptions options;
  options.bands = DefaultErrorBands();
  const Expected<Plan> p = MakePlan(*s, test::BuiltinCatalog(), options);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::string all;
  for (const std::string& r : p->reasons) all += r + "\n";
  EXPECT_NE(all.find("Its ZeRO-3 figures assume DeepSpeed ZeRO-3"), std::string::npos) << all;
  EXPECT_NE(all.find("(wider: no published measurement of zero3 (deepspeed) on A100)"),
            std::string::npos)
      << all;
}

// With the corpus's error bands every confirmed candidate has its band, the plan JSON carries
// it, the job's P90 includes the model's error (wider than without it) while its expectation
// stays the prediction's, and a reason states the band.
TEST(MakePlan, ErrorBandsReachTheCandidatesTheJobsAndTheReasons) {
  PlanOptions options;
  options.jobs = 2;
  const Plan without = *MakePlan(Small(kSearch), test::BuiltinCatalog(), options);
  options.bands = DefaultErrorBands();
  ASSERT_NE(options.bands, nullptr);
  const Plan with = *MakePlan(Small(kSearch), test::BuiltinCatalog(), options);
  ASSERT_EQ(with.confirmed.size(), without.confirmed.size());
  for (const ConfirmedCandidate& c : with.confirmed) {
    ASSERT_TRUE(c.band.has_value());
    EXPECT_GE(c.band->points, kMinBandPoints);
  }
  const PricedJob& a = without.confirmed[0].priced[0];
  const PricedJob& b = with.confirmed[0].priced[0];
  EXPECT_EQ(a.job.expected_wall_s, b.job.expected_wall_s);
  EXPECT_EQ(a.job.wall_s.mean, b.job.wall_s.mean);
  EXPECT_GT(b.job.wall_s.p90 - b.job.wall_s.p50, a.job.wall_s.p90 - a.job.wall_s.p50);
  const nlohmann::json j = ToJson(Small(kSearch), with, nlohmann::json());
  EXPECT_EQ(j["candidates"][0]["band"]["coverage"], 0.8);
  // The job's P10 (the GUI's error bars) lies below its P90.
  EXPECT_LT(j["candidates"][0]["pricing"][0]["hours"]["p10"].get<double>(),
            j["candidates"][0]["pricing"][0]["hours"]["p90"].get<double>());
  // Every point of the scaling curve has its band: [lo, hi] x its samples/s.
  ASSERT_FALSE(with.scaling.empty());
  for (size_t i = 0; i < with.scaling.size(); ++i) {
    const ScalingPoint& sp = with.scaling[i];
    ASSERT_TRUE(sp.band.has_value());
    EXPECT_EQ(
        j["scaling"]["points"][i]["samples_per_s_band"],
        nlohmann::json::array({sp.samples_per_s * sp.band->lo, sp.samples_per_s * sp.band->hi}));
  }
  EXPECT_TRUE(ToJson(Small(kSearch), without,
                     nlohmann::json())["scaling"]["points"][0]["samples_per_s_band"]
                  .is_null());
  bool stated = false;
  for (const std::string& r : with.reasons)
    stated |= r.rfind("Error band: 80% of the published", 0) == 0;
  EXPECT_TRUE(stated);
}

// Bands of two families, ten samples each, 8 A100 GPUs: data parallel with `dp_spread`
// around 0, ZeRO-3 with +-0.01 around `zero3_center` (log errors).
std::shared_ptr<const ErrorBands> TwoFamilies(double dp_spread, double zero3_center) {
  auto bands = std::make_shared<ErrorBands>();
  for (int i = 0; i < 10; ++i) {
    const double t = i / 9.0 * 2 - 1;  // -1 .. 1
    bands->samples.push_back(
        {"dp" + std::to_string(i), "a", {"dp", "A100", "16-bit", 8}, dp_spread * t});
    bands->samples.push_back(
        {"z" + std::to_string(i), "b", {"zero3", "A100", "16-bit", 8}, zero3_center + 0.01 * t});
  }
  return bands;
}

// One p4d node, ZeRO-1 or ZeRO-3 (the prediction puts ZeRO-1 first). Where their bands
// overlap, the narrower ZeRO-3 band is recommended, its reason says why, and the JSON names
// the candidate it was preferred over; not when search.prefer_validated is false, nor when
// ZeRO-3's band, though narrow, lies beyond the leader's pessimistic end.
TEST(MakePlan, OverlappingBandsPreferTheBetterMeasuredLayout) {
  auto plan = [](bool prefer, std::shared_ptr<const ErrorBands> bands) {
    const PlanningScenario s =
        Small(std::string(R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 1, "max": 1},
        "tp": [1], "pp": [1], "micro_batch": [4], "zero_stages": [1, 3], "recompute": ["none"],
        "pricing": ["on-demand"], "confirm_top": 2, "trials": 200, "prefer_validated": )") +
              (prefer ? "true" : "false") + "}");
    PlanOptions options;
    options.jobs = 2;
    options.bands = std::move(bands);
    Expected<Plan> p = MakePlan(s, test::BuiltinCatalog(), options);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return std::make_pair(s, *p);
  };
  const auto [by_prediction_s, by_prediction] = plan(false, TwoFamilies(0.3, 0));
  ASSERT_EQ(by_prediction.confirmed.size(), 2u);
  EXPECT_EQ(by_prediction.confirmed[0].candidate.zero_stage, 1);
  EXPECT_EQ(by_prediction.preferred_over, -1);

  const auto [s, preferred] = plan(true, TwoFamilies(0.3, 0));
  EXPECT_EQ(preferred.confirmed[preferred.best].candidate.zero_stage, 3);
  EXPECT_EQ(preferred.preferred_over, 1);
  EXPECT_EQ(preferred.confirmed[1].candidate.zero_stage, 1);
  std::string all;
  for (const std::string& r : preferred.reasons) all += r + "\n";
  EXPECT_NE(all.find("The prediction alone ranks p4d.24xlarge x 1: tp 1, pp 1, dp 8, ZeRO-1"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("their bands overlap, and this layout's is narrower"), std::string::npos);
  const nlohmann::json j = ToJson(s, preferred, nlohmann::json());
  EXPECT_EQ(j["recommendation"]["preferred_over_candidate"], 1);
  EXPECT_EQ(j["search"]["prefer_validated"], true);

  // ZeRO-3 runs 40% slower than predicted, every time: narrow, but worse at its end.
  const auto [slow_s, slow] = plan(true, TwoFamilies(0.3, -0.5));
  EXPECT_EQ(slow.confirmed[slow.best].candidate.zero_stage, 1);
  EXPECT_EQ(slow.preferred_over, -1);
  EXPECT_TRUE(ToJson(slow_s, slow, nlohmann::json())["recommendation"]["preferred_over_candidate"]
                  .is_null());
}

TEST(MakePlan, ParetoFrontIsExactlyTheUndominatedOptions) {
  const Plan p = MustPlan(Small(kSearch));
  std::vector<std::pair<double, double>> all;
  for (const ConfirmedCandidate& c : p.confirmed) {
    for (const PricedJob& j : c.priced)
      all.push_back({j.job.expected_wall_s, j.job.cost_usd->mean});
  }
  auto dominated = [&](std::pair<double, double> x) {
    for (auto y : all) {
      if (y.first <= x.first && y.second <= x.second && y != x) return true;
    }
    return false;
  };
  int undominated = 0;
  for (auto x : all) undominated += !dominated(x);
  ASSERT_FALSE(p.pareto.empty());
  EXPECT_EQ(static_cast<int>(p.pareto.size()), undominated);
  for (auto [i, j] : p.pareto) {
    const PricedJob& pj = p.confirmed[i].priced[j];
    EXPECT_FALSE(dominated({pj.job.expected_wall_s, pj.job.cost_usd->mean}));
  }
}

// Every way to buy the instances, side by side: blocks booked in whole days (a short job pays a
// whole day), a training plan at the user's price, Savings Plans charging the job's hours at
// the committed rate with the rest of the commitment reported.
TEST(MakePlan, ReservedAndCommittedOptionsArePricedBesideTheOthers) {
  const PlanningScenario s = Small(
      R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 1, "max": 2}, "tp": [1],
          "pp": [1], "micro_batch": [1], "zero_stages": [0], "recompute": ["none"],
          "confirm_top": 2, "trials": 200,
          "pricing": ["on-demand", "spot", "capacity-block", "training-plan",
                      "savings-plan-1y", "savings-plan-3y"],
          "prices": {"p4d.24xlarge": {"training_plan_usd_hr": 16, "savings_plan_1y_usd_hr": 15,
                                      "savings_plan_3y_usd_hr": 4}}})");
  const Plan p = MustPlan(s);
  ASSERT_FALSE(p.confirmed.empty());
  for (const ConfirmedCandidate& c : p.confirmed) {
    ASSERT_EQ(c.priced.size(), 6u);
    const int nodes = c.candidate.nodes;
    const PricedJob& od = c.priced[0];
    for (const PricedJob& j : c.priced) {
      SCOPED_TRACE(ToString(j.pricing));
      ASSERT_TRUE(j.job.cost_usd.has_value());
      const double billed_h = od.job.mean_billed_instance_s / 3600;
      switch (j.pricing) {
        case Pricing::kCapacityBlock:
        case Pricing::kTrainingPlan: {
          ASSERT_TRUE(j.job.blocks.has_value());
          EXPECT_EQ(j.job.blocks->block_days, std::vector<int>{1});  // the job takes hours
          const double usd_hr = j.pricing == Pricing::kCapacityBlock ? 14.75 : 16;
          EXPECT_DOUBLE_EQ(j.job.cost_usd->mean, usd_hr * nodes * 24);
          EXPECT_DOUBLE_EQ(j.job.expected_wall_s, od.job.expected_wall_s);
          EXPECT_EQ(j.job.expected_interruptions, 0);
          break;
        }
        case Pricing::kSavingsPlan1y:
        case Pricing::kSavingsPlan3y: {
          ASSERT_TRUE(j.commitment.has_value());
          const double rate = j.pricing == Pricing::kSavingsPlan1y ? 15 : 4;
          const double years = j.pricing == Pricing::kSavingsPlan1y ? 1 : 3;
          EXPECT_NEAR(j.job.cost_usd->mean, rate * billed_h, 1e-6);
          EXPECT_NEAR(j.commitment->job_share, billed_h / (nodes * years * 8760), 1e-12);
          EXPECT_NEAR(j.commitment->rest_cost_usd, rate * (nodes * years * 8760 - billed_h), 1e-6);
          break;
        }
        default:
          EXPECT_FALSE(j.job.blocks.has_value());
          EXPECT_FALSE(j.commitment.has_value());
      }
    }
  }
  // min-cost picks the 3-year rate (below spot's), and says what the next cheapest reserved
  // or committed option would cost.
  EXPECT_EQ(p.confirmed[p.best].priced[p.best_priced].pricing, Pricing::kSavingsPlan3y);
  const bool says = std::any_of(p.reasons.begin(), p.reasons.end(), [](const std::string& r) {
    return r.rfind("As savings-plan-1y (", 0) == 0;
  });
  EXPECT_TRUE(says);
  const nlohmann::json j = ToJson(s, p);
  const nlohmann::json& priced = j["candidates"][0]["pricing"];
  EXPECT_EQ(priced[2]["pricing"], "capacity-block");
  EXPECT_EQ(priced[2]["blocks"]["days"], nlohmann::json::array({1}));
  EXPECT_EQ(priced[2]["blocks"]["kind"], "capacity block");
  EXPECT_TRUE(priced[2]["commitment"].is_null());
  EXPECT_EQ(priced[5]["commitment"]["term_years"], 3);
  EXPECT_TRUE(priced[5]["blocks"].is_null());
}

// Spot as capacity: with a chance per request the spot options wait before the start (and
// for replacements); the reasons say so. Without one they say that nothing is known.
TEST(MakePlan, SpotPlansSayWhatTheirCapacityRestsOn) {
  const std::string search =
      R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 2, "max": 2}, "tp": [1], "pp": [1],
          "micro_batch": [1], "zero_stages": [0], "recompute": ["none"], "confirm_top": 1,
          "trials": 200, "pricing": ["spot", "on-demand"], "objective": "min-cost")";
  const PlanningScenario unknown = Small(search + "}");
  const Plan a = MustPlan(unknown);
  ASSERT_EQ(a.confirmed[a.best].priced[a.best_priced].pricing, Pricing::kSpot);
  auto says = [](const Plan& p, const std::string& text) {
    return std::any_of(p.reasons.begin(), p.reasons.end(),
                       [&](const std::string& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(says(a, "2 p4d.24xlarge spot at once: no public evidence that this is obtainable"));
  auto assumes = [](const Plan& p, const std::string& start) {
    return std::any_of(p.assumptions.begin(), p.assumptions.end(),
                       [&](const std::string& a) { return a.rfind(start, 0) == 0; });
  };
  EXPECT_TRUE(assumes(a, "spot capacity is not modelled"));
  EXPECT_TRUE(assumes(a, "spot reclaims are independent"));
  const PlanningScenario known =
      Small(search + R"(, "spot_capacity_chance": 0.25, "spot_capacity_retry_s": 1200,
                  "spot_reclaim_wave_nodes": 2})");
  const Plan b = MustPlan(known);
  const PricedJob& spot = b.confirmed[0].priced[0];
  ASSERT_EQ(spot.pricing, Pricing::kSpot);
  EXPECT_DOUBLE_EQ(spot.job.expected_start_wait_s, 3600);  // 1200 s x 0.75 / 0.25
  EXPECT_EQ(spot.inputs.reclaim_wave_nodes, 2);
  EXPECT_EQ(b.confirmed[0].priced[1].job.expected_start_wait_s, 0);  // on demand
  EXPECT_GT(spot.job.expected_wall_s, a.confirmed[0].priced[0].job.expected_wall_s + 3600 - 1);
  EXPECT_TRUE(says(b,
                   "2 p4d.24xlarge spot at once, at a 25% chance per request every 1200 s: "
                   "1.0 h expected before the start (P90 2.7 h)"));
  EXPECT_FALSE(assumes(b, "spot capacity is not modelled"));
  EXPECT_FALSE(assumes(b, "spot reclaims are independent"));
  PlanningScenario on_demand = Small(search + "}");
  on_demand.search.pricing = {Pricing::kOnDemand};  // no spot option: nothing to say of it
  EXPECT_FALSE(assumes(MustPlan(on_demand), "spot capacity is not modelled"));
  const nlohmann::json j = ToJson(known, b)["candidates"][0]["pricing"][0];
  EXPECT_EQ(j["capacity_chance_per_request"], 0.25);
  EXPECT_EQ(j["expected_start_wait_s"], 3600);
}

// With a deadline, spot that falls back to on-demand is priced beside plain spot, and the
// reasons compare them.
TEST(MakePlan, SpotFallbackIsComparedUnderADeadline) {
  const PlanningScenario s = Small(
      R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 2, "max": 2}, "tp": [1], "pp": [1],
          "micro_batch": [1], "zero_stages": [0], "recompute": ["none"], "confirm_top": 1,
          "trials": 200, "pricing": ["on-demand", "spot", "spot-fallback"],
          "deadline_hours": 1000})");
  const Plan p = MustPlan(s);
  ASSERT_EQ(p.confirmed[0].priced.size(), 3u);
  const PricedJob& fallback = p.confirmed[0].priced[2];
  ASSERT_EQ(fallback.pricing, Pricing::kSpotFallback);
  ASSERT_TRUE(fallback.job.fallback_share.has_value());
  EXPECT_EQ(*fallback.job.fallback_share, 0);  // a short job, a far deadline
  EXPECT_EQ(fallback.inputs.fallback_deadline_s, 1000 * 3600.0);
  const bool compared = std::any_of(p.reasons.begin(), p.reasons.end(), [](const std::string& r) {
    return r.find("spot-fallback") != std::string::npos ||
           r.rfind("Spot until the deadline's slack runs out", 0) == 0;
  });
  EXPECT_TRUE(compared);
  EXPECT_EQ(ToJson(s, p)["candidates"][0]["pricing"][2]["fallback_share"], 0);
}

// Elastic spot is priced for ZeRO-0 layouts beside spot and on-demand, and the reasons
// compare them; a ZeRO-1 layout is not offered it, and the reasons say why.
TEST(MakePlan, SpotElasticIsComparedWithSpotAndOnDemand) {
  const std::string search =
      R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 2, "max": 2}, "tp": [1], "pp": [1],
          "micro_batch": [1], "recompute": ["none"], "confirm_top": 1, "trials": 200,
          "pricing": ["on-demand", "spot", "spot-elastic"], "spot_interruptions_per_month": 0.3,
          "objective": "min-cost", )";
  const PlanningScenario s = Small(search + R"("zero_stages": [0]})");
  const Plan p = MustPlan(s);
  ASSERT_EQ(p.confirmed[0].priced.size(), 3u);
  const PricedJob& elastic = p.confirmed[0].priced[2];
  ASSERT_EQ(elastic.pricing, Pricing::kSpotElastic);
  EXPECT_EQ(elastic.inputs.elastic_groups, 2);  // dp 16 on 2 nodes
  ASSERT_TRUE(elastic.job.live_share.has_value());
  EXPECT_GT(*elastic.job.live_share, 0.9);  // a short job: few reclaims, if any
  auto says = [](const Plan& plan, const std::string& text) {
    return std::any_of(plan.reasons.begin(), plan.reasons.end(),
                       [&](const std::string& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(says(p, "of the replicas live on average")) << p.reasons.size();
  const nlohmann::json j = ToJson(s, p)["candidates"][0]["pricing"][2];
  EXPECT_EQ(j["elastic"]["replica_groups"], 2);
  EXPECT_EQ(j["elastic"]["live_share"], *elastic.job.live_share);
  EXPECT_TRUE(ToJson(s, p)["candidates"][0]["pricing"][1]["elastic"].is_null());

  const Plan sharded = MustPlan(Small(search + R"("zero_stages": [1]})"));
  ASSERT_EQ(sharded.confirmed[0].priced.size(), 2u);  // on-demand, spot
  EXPECT_TRUE(says(sharded,
                   "spot-elastic (training on the replicas left after a reclaim) is "
                   "not offered for this layout: ZeRO-1 shards the state"));
}

TEST(MakePlan, SameInputsSameBytes) {
  const PlanningScenario s = Small(kSearch);
  EXPECT_EQ(ToJson(s, MustPlan(s)).dump(), ToJson(s, MustPlan(s)).dump());
}

TEST(ToJsonChoosing, TheRecommendationIsToJsonAndAnotherCandidateIsItsOwnConfig) {
  const PlanningScenario s = Small(kSearch);
  const Plan p = MustPlan(s);
  const nlohmann::json doc = {{"name", "small"}};
  Expected<nlohmann::json> same = ToJsonChoosing(s, p, doc, p.best, p.best_priced);
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_EQ(same->dump(), ToJson(s, p, doc).dump());

  const nlohmann::json plain = ToJson(s, p, doc);
  for (int c = 1; c < static_cast<int>(p.confirmed.size()); ++c) {
    const int last = static_cast<int>(p.confirmed[c].priced.size()) - 1;
    Expected<nlohmann::json> other = ToJsonChoosing(s, p, doc, c, last);
    ASSERT_TRUE(other.ok()) << other.status().message();
    const nlohmann::json& rec = (*other)["recommendation"];
    EXPECT_EQ(rec["candidate"], c);
    EXPECT_EQ(rec["config"], plain["candidates"][c]["config"]);
    EXPECT_EQ(rec["pricing"], ToString(p.confirmed[c].priced[last].pricing));
    EXPECT_EQ(rec["reasons"], nlohmann::json::array());
    EXPECT_EQ(rec["meets_constraints"], p.confirmed[c].priced[last].meets_deadline &&
                                            p.confirmed[c].priced[last].meets_budget);
    // Everything but the choice is the plan as written.
    nlohmann::json rest = *other;
    rest["recommendation"] = plain["recommendation"];
    EXPECT_EQ(rest.dump(), plain.dump());
  }
  EXPECT_EQ(ToJsonChoosing(s, p, doc, 4, 0).status().message(),
            "candidate 4 is not in the plan (4 confirmed)");
  EXPECT_EQ(ToJsonChoosing(s, p, doc, 0, -1).status().message(),
            "candidate 0 has no pricing option -1 (" +
                std::to_string(p.confirmed[0].priced.size()) + " priced)");
}

TEST(MakePlan, AnImpossibleDeadlineIsReportedNotHidden) {
  std::string search = kSearch;
  search.insert(1, R"("deadline_hours": 0.01, )");
  const Plan p = MustPlan(Small(search));
  EXPECT_FALSE(p.meets_constraints);
  bool said = false;
  for (const std::string& r : p.reasons) said = said || r.find("No confirmed plan meets") == 0;
  EXPECT_TRUE(said);
}

TEST(MakePlan, ReferenceSystemsArePlannedByTimeWithoutCost) {
  const Plan p = MustPlan(Small(
      R"({"instances": ["dgx-a100-80gb"], "nodes": {"min": 1, "max": 1}, "tp": [1],
          "pp": [1], "micro_batch": [1], "zero_stages": [0], "recompute": ["none"],
          "objective": "min-time", "trials": 100})"));
  ASSERT_EQ(p.best, 0);
  const PricedJob& j = p.confirmed[0].priced[p.best_priced];
  EXPECT_FALSE(j.price_usd_hr.has_value());
  EXPECT_FALSE(j.job.cost_usd.has_value());
  EXPECT_TRUE(p.pareto.empty());  // no cost, no front
}

TEST(MakePlan, Errors) {
  PlanningScenario s = Small(kSearch);
  s.scenario.training.tokens = 0;
  EXPECT_EQ(MakePlan(s, test::BuiltinCatalog(), {}).status().message(),
            "small: planning needs the amount of work: training.tokens, training.samples or "
            "training.epochs");
  s = Small(R"({"instances": ["p4d.24xlarge"], "nodes": {"min": 1, "max": 1}, "tp": [16]})");
  const Status st = MakePlan(s, test::BuiltinCatalog(), {}).status();
  EXPECT_EQ(st.message().rfind("small: no configuration survives pruning (tp-node: ", 0), 0u)
      << st.message();
}

TEST(MakePlan, APresetCancelFlagStopsBeforeAnySimulation) {
  std::atomic<bool> cancel{true};
  PlanOptions options;
  options.cancel = &cancel;
  const Status st = MakePlan(Small(kSearch), test::BuiltinCatalog(), options).status();
  EXPECT_EQ(st.code(), Status::Code::kCancelled);
  EXPECT_EQ(st.message(), "small: planning cancelled");
}

// Cancelled once ranking is done: no candidate is simulated.
TEST(MakePlan, CancelBetweenRankingAndSimulation) {
  struct CancelOnEstimate : PlanObserver {
    std::atomic<bool> cancel{false};
    int simulated = 0;
    void Estimated(int64_t, double) override { cancel = true; }
    void Simulated(int, int) override { ++simulated; }
  } observer;
  PlanOptions options;
  options.jobs = 2;
  options.observer = &observer;
  options.cancel = &observer.cancel;
  const Status st = MakePlan(Small(kSearch), test::BuiltinCatalog(), options).status();
  EXPECT_EQ(st.code(), Status::Code::kCancelled);
  EXPECT_EQ(observer.simulated, 0);
}

TEST(StepsToTrain, FromTokensSamplesOrEpochsRoundedUp) {
  struct Case {
    const char* what;
    double tokens, samples, epochs, dataset_samples;
    ModelKind kind;
    double steps;
  } cases[] = {
      // 64 x 2048 = 131072 tokens per step.
      {"tokens", 131072.0 * 10, 0, 0, 0, ModelKind::kTransformer, 10},
      {"tokens, a partial last step", 131072.0 * 10 + 1, 0, 0, 0, ModelKind::kTransformer, 11},
      {"tokens of a layer list: one per sample", 640, 0, 0, 0, ModelKind::kLayerList, 10},
      {"samples", 0, 6400, 0, 0, ModelKind::kTransformer, 100},
      {"epochs", 0, 0, 2, 320, ModelKind::kLayerList, 10},
      {"no amount of work", 0, 0, 0, 0, ModelKind::kTransformer, 0},
  };
  for (const Case& c : cases) {
    Scenario s;
    s.model.kind = c.kind;
    s.model.seq_len = 2048;
    s.training.global_batch = 64;
    s.training.tokens = c.tokens;
    s.training.samples = c.samples;
    s.training.epochs = c.epochs;
    s.training.dataset_samples = c.dataset_samples;
    EXPECT_EQ(StepsToTrain(s), c.steps) << c.what;
  }
}

// A long scaling curve simulates kMaxSimulatedScalingPoints points spread over it, its ends
// among them, and the recommendation's node count; a short one every point.
TEST(ScalingPoints, ALongCurveSimulatesASpreadOfPointsAndTheRecommendation) {
  std::vector<bool> pick = ScalingPointsToSimulate(10, 3);
  EXPECT_EQ(std::count(pick.begin(), pick.end(), true), 10);
  pick = ScalingPointsToSimulate(200, 101);
  EXPECT_EQ(std::count(pick.begin(), pick.end(), true), kMaxSimulatedScalingPoints + 1);
  EXPECT_TRUE(pick.front() && pick.back() && pick[101]);
  for (int i = 0; i + 8 < 200; ++i) {  // no gap longer than 200 / 47 points
    EXPECT_TRUE(std::any_of(pick.begin() + i, pick.begin() + i + 8, [](bool b) { return b; })) << i;
  }
}

}  // namespace
}  // namespace trainsim::planner
