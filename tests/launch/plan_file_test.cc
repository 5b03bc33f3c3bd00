#include "launch/plan_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace trainsim::launch {

using trainsim::test::ReadFile;
namespace {

const std::string kPlan = std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/small.plan.json";

// tests/launch/data/small.plan.json: `trainsim plan tests/cli/data/plan-small.json`.
TEST(LoadPlanFile, RebuildsTheRecommendedScenario) {
  Expected<LaunchPlan> p = LoadPlanFile(kPlan, test::BuiltinCatalog());
  ASSERT_TRUE(p.ok()) << p.status().message();
  const nlohmann::json& config = p->plan["recommendation"]["config"];
  const Scenario& s = p->scenario;
  EXPECT_EQ(s.instance.name, config["instance"]);
  EXPECT_EQ(s.cluster.nodes, config["nodes"]);
  EXPECT_EQ(s.parallel.tp, config["tp"]);
  EXPECT_EQ(s.parallel.pp, config["pp"]);
  EXPECT_EQ(s.parallel.dp, config["dp"]);
  EXPECT_EQ(s.parallel.zero_stage, config["zero_stage"]);
  EXPECT_EQ(s.training.micro_batch, config["micro_batch"]);
  EXPECT_EQ(ToString(s.cluster.pricing), p->plan["recommendation"]["pricing"]);
  EXPECT_EQ(s.training.global_batch, 64);
  EXPECT_EQ(s.name, "plan-small");  // the plan's `scenario`: the file it was planned from
  EXPECT_GT(p->steps, 0);
  EXPECT_GT(p->step_time_s, 0);
  EXPECT_GT(p->expected_hours, 0);
}

TEST(ParsePlan, ErrorsNameTheFileAndField) {
  const std::string good = ReadFile(kPlan);
  auto without = [&](const std::string& key) {
    nlohmann::json j = nlohmann::json::parse(good);
    j.erase(key);
    return j.dump();
  };
  nlohmann::json wrong_kind = nlohmann::json::parse(good);
  wrong_kind["kind"] = "trainsim-sweep";
  nlohmann::json bad_index = nlohmann::json::parse(good);
  bad_index["recommendation"]["candidate"] = 99;
  // A candidate's missing or mistyped field escaped as nlohmann::json's exception (found by
  // fuzz/plan_file_fuzzer.cc).
  nlohmann::json no_micro_batch = nlohmann::json::parse(good);
  no_micro_batch["candidates"][0]["config"].erase("micro_batch");
  nlohmann::json text_shard_group = nlohmann::json::parse(good);
  text_shard_group["candidates"][0]["config"]["shard_group"] = "2";
  const struct {
    std::string text, message;
  } kCases[] = {
      {"[1, 2]", "p.json: not a JSON object; expected a plan from `trainsim plan`"},
      {"{", "p.json: not a JSON object; expected a plan from `trainsim plan`"},
      {wrong_kind.dump(), "p.json: kind: expected \"trainsim-plan\", got \"trainsim-sweep\""},
      {without("scenario_json"),
       "p.json: missing scenario_json (the scenario the plan was made from); is this a plan "
       "written by `trainsim plan`?"},
      {bad_index.dump(), "p.json: recommendation.candidate: 99 is not a candidate index"},
      {no_micro_batch.dump(),
       "p.json: not a plan written by `trainsim plan`: [json.exception.out_of_range.403] key "
       "'micro_batch' not found"},
      {text_shard_group.dump(),
       "p.json: not a plan written by `trainsim plan`: [json.exception.type_error.302] type must "
       "be number, but is string"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(ParsePlan(c.text, "p.json", test::BuiltinCatalog()).status().message(), c.message);
  }
  EXPECT_EQ(LoadPlanFile("/nonexistent.plan.json", test::BuiltinCatalog()).status().message(),
            "/nonexistent.plan.json: cannot read the plan");
}

}  // namespace
}  // namespace trainsim::launch
