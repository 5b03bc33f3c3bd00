// The simulate-based sweep evaluation: fingerprints, training steps, and rows
// of real (small, fast) scenarios.
#include "planner/sweep/sweep_eval.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim::planner {
namespace {

const std::string kSource = TRAINSIM_SOURCE_DIR;

TEST(Fnv1a64Hex, KnownValues) {
  EXPECT_EQ(Fnv1a64Hex(""), "cbf29ce484222325");
  EXPECT_EQ(Fnv1a64Hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(Fnv1a64Hex("foobar"), "85944171f73967e8");
}

TEST(LoadScenarioSweep, OnePointPerFileFingerprintedByItsBytes) {
  const std::string a = kSource + "/scenarios/resnet50-p3.json";
  const std::string b = kSource + "/scenarios/bert-large-p3.json";
  Expected<ScenarioSweep> sweep = LoadScenarioSweep({a, b}, test::BuiltinCatalog(), "");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->points.size(), 2u);
  EXPECT_EQ(sweep->points[1].index, 1);
  EXPECT_EQ(sweep->points[1].id, b + "#0");
  EXPECT_EQ(sweep->scenarios[1].scenario.name, "bert-large-p3");
  EXPECT_NE(sweep->points[0].fingerprint, sweep->points[1].fingerprint);
  // What else the results depend on changes every fingerprint.
  Expected<ScenarioSweep> other = LoadScenarioSweep({a}, test::BuiltinCatalog(), "catalog bytes");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->points[0].fingerprint, sweep->points[0].fingerprint);
  Expected<ScenarioSweep> same = LoadScenarioSweep({a}, test::BuiltinCatalog(), "");
  EXPECT_EQ(same->points[0].fingerprint, sweep->points[0].fingerprint);
}

TEST(LoadScenarioSweep, AFileThatCannotBeReadOrParsedFailsTheSweep) {
  Expected<ScenarioSweep> missing =
      LoadScenarioSweep({kSource + "/scenarios/nope.json"}, test::BuiltinCatalog(), "");
  EXPECT_EQ(missing.status().message(),
            kSource + "/scenarios/nope.json: cannot read: No such file or directory");
  Expected<ScenarioSweep> malformed =
      LoadScenarioSweep({kSource + "/tests/cli/data/malformed.json"}, test::BuiltinCatalog(), "");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().message().rfind(kSource + "/tests/cli/data/malformed.json:", 0), 0u)
      << malformed.status().message();
}

Scenario Load(const std::string& file) {
  return LoadScenarioFile(kSource + "/" + file, test::BuiltinCatalog()).value();
}

TEST(SimulateScenarioRow, AFittingScenarioHasItsFiguresAndCost) {
  const Scenario s = Load("scenarios/llama2-7b-p4d-dp.json");
  SweepRow row = SimulateScenarioRow(s);
  ASSERT_EQ(row.status, SweepStatus::kOk) << row.message;
  EXPECT_EQ(row.scenario, "llama2-7b-p4d-dp");
  EXPECT_EQ(row.column("instance"), "p4d.24xlarge");
  EXPECT_EQ(row.column("nodes"), 1);
  EXPECT_EQ(row.column("gpus"), 8);
  EXPECT_EQ(row.column("dp"), 8);
  EXPECT_EQ(row.column("zero_stage"), 1);
  EXPECT_EQ(row.column("recompute"), "full");
  EXPECT_EQ(row.column("pricing"), "on-demand");
  ASSERT_TRUE(row.step_time_s && row.samples_per_s && row.mfu && row.time_to_train_h);
  EXPECT_GT(*row.step_time_s, 0);
  EXPECT_NEAR(*row.samples_per_s, 64 / *row.step_time_s, 1e-9 * *row.samples_per_s);
  // 1e10 tokens / (64 x 2048) = 76293.9 -> 76294 steps.
  EXPECT_DOUBLE_EQ(*row.time_to_train_h, 76294 * *row.step_time_s / 3600);
  ASSERT_TRUE(row.cost_usd);
  EXPECT_DOUBLE_EQ(*row.cost_usd, *s.instance.price_on_demand_usd_hr * *row.time_to_train_h);
  EXPECT_EQ(row.detail.at("step_time_s"), *row.step_time_s);
}

TEST(SimulateScenarioRow, SpotHasNoCostYetAndWithoutWorkNoTime) {
  SweepRow spot = SimulateScenarioRow(Load("scenarios/bert-large-p3.json"));
  ASSERT_EQ(spot.status, SweepStatus::kOk) << spot.message;
  EXPECT_EQ(spot.column("pricing"), "spot");
  EXPECT_TRUE(spot.time_to_train_h);
  EXPECT_FALSE(spot.cost_usd);
  SweepRow no_work = SimulateScenarioRow(Load("tests/cli/data/gpt-1.7b-small.json"));
  ASSERT_EQ(no_work.status, SweepStatus::kOk) << no_work.message;
  EXPECT_FALSE(no_work.time_to_train_h);
  EXPECT_FALSE(no_work.cost_usd);
}

TEST(SimulateScenarioRow, ADoesNotFitRowSaysWhyAndHasNoFigures) {
  SweepRow row = SimulateScenarioRow(Load("tests/cli/data/gpt3-175b-one-node.json"));
  EXPECT_EQ(row.status, SweepStatus::kDoesNotFit);
  EXPECT_EQ(row.message.rfind("needs 347.9 GiB per GPU on stage 0", 0), 0u) << row.message;
  EXPECT_EQ(row.column("tp"), 8);
  EXPECT_FALSE(row.step_time_s);
  EXPECT_FALSE(row.mfu);
  EXPECT_FALSE(row.cost_usd);
  EXPECT_EQ(row.detail.at("fits"), false);
}

}  // namespace
}  // namespace trainsim::planner
